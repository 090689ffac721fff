/**
 * A uniform spatial hash for interest management: entities are bucketed by cell so a view query
 * touches only the cells around the viewer, whatever the size of the world; and by tile, so the
 * nearest ones can be found ring by ring in a crowd without looking at the whole crowd.
 * Coordinates are whole tiles within ±32,767 (a tile or cell is keyed by one 32-bit integer).
 */
export class SpatialGrid<T extends { id: string }> {
  private readonly cells = new Map<number, Map<string, T>>();
  /** Small arrays (a tile holds few entities, or a crowd): iterated by index, nothing allocated. */
  private readonly tiles = new Map<number, T[]>();
  private readonly where = new Map<string, { cell: number; tile: number }>();
  /**
   * The array of the tile an entity last left empty, for the next tile that gets its first entity:
   * a move from a tile of its own to an empty one (most steps, outside a crowd's centre) takes its
   * array along instead of making one. Keeping emptied tiles' arrays in `tiles` saved no more and
   * cost lookups in a larger map (a crowd that spreads out leaves a trail of empty tiles).
   */
  private spare: T[] | undefined;
  private jumpCount = 0;

  constructor(
    readonly cellSize = 16,
    /**
     * Tiles an entity moves at most in one step (its fastest walk); a move farther (a teleport, a
     * respawn) counts as a jump (`jumps`). Undefined: moves are not told apart.
     */
    readonly maxStep?: number,
  ) {}

  /**
   * How many times an entity left the grid or moved farther than `maxStep` in one move. While this
   * count does not change, every entity of the grid moved at most `maxStep` tiles in each of its
   * moves (what a view uses to skip checking what it tracks, docs/interest.md "The crowd's cadence").
   */
  get jumps(): number {
    return this.jumpCount;
  }

  private cellKey(x: number, z: number): number {
    return key(Math.floor(x / this.cellSize), Math.floor(z / this.cellSize));
  }

  /** Insert or move an entity. */
  set(entity: T, x: number, z: number): void {
    const cell = this.cellKey(x, z);
    const tile = key(x, z);
    const old = this.where.get(entity.id);
    if (!old) {
      this.where.set(entity.id, { cell, tile });
      add(this.cells, cell, entity);
      this.addToTile(tile, entity);
      return;
    }
    if (old.cell !== cell) {
      remove(this.cells, old.cell, entity.id);
      add(this.cells, cell, entity);
      old.cell = cell;
    }
    if (old.tile !== tile) {
      if (this.maxStep !== undefined && tileDistance(old.tile, tile) > this.maxStep) this.jumpCount++;
      this.removeFromTile(old.tile, entity.id);
      this.addToTile(tile, entity);
      old.tile = tile;
    }
  }

  delete(id: string): void {
    const old = this.where.get(id);
    if (old === undefined) return;
    this.jumpCount++;
    remove(this.cells, old.cell, id);
    this.removeFromTile(old.tile, id);
    this.where.delete(id);
  }

  private addToTile(k: number, entity: T): void {
    const bucket = this.tiles.get(k);
    if (bucket) bucket.push(entity);
    else {
      const spare = this.spare;
      this.spare = undefined;
      if (spare) {
        spare.push(entity);
        this.tiles.set(k, spare);
      } else this.tiles.set(k, [entity]);
    }
  }

  private removeFromTile(k: number, id: string): void {
    const bucket = this.tiles.get(k);
    if (!bucket) return;
    // A loop, not `findIndex`: no closure per move.
    let i = 0;
    while (i < bucket.length && bucket[i]!.id !== id) i++;
    if (i === bucket.length) return;
    bucket[i] = bucket[bucket.length - 1]!;
    bucket.pop();
    if (bucket.length > 0) return;
    this.tiles.delete(k);
    this.spare = bucket;
  }

  /** Entities in the cells overlapping the square of `radius` around (x, z); callers filter exactly. */
  *near(x: number, z: number, radius: number): Generator<T> {
    const cs = this.cellSize;
    const x0 = Math.floor((x - radius) / cs);
    const x1 = Math.floor((x + radius) / cs);
    const z0 = Math.floor((z - radius) / cs);
    const z1 = Math.floor((z + radius) / cs);
    for (let cx = x0; cx <= x1; cx++)
      for (let cz = z0; cz <= z1; cz++) {
        const cell = this.cells.get(key(cx, cz));
        if (cell) yield* cell.values();
      }
  }

  /**
   * Gather into `out` (cleared first) the non-empty cells `near` would walk, and return how many
   * entities they hold: one lookup per cell, nothing allocated (the caller reuses `out`, which keeps its room).
   */
  cellsNear(x: number, z: number, radius: number, out: ReadonlyMap<string, T>[]): number {
    const cs = this.cellSize;
    const x1 = Math.floor((x + radius) / cs);
    const z0 = Math.floor((z - radius) / cs);
    const z1 = Math.floor((z + radius) / cs);
    // Emptied by popping: `length = 0` gives the array's room back, and the push after makes it anew.
    while (out.length > 0) out.pop();
    let n = 0;
    for (let cx = Math.floor((x - radius) / cs); cx <= x1; cx++)
      for (let cz = z0; cz <= z1; cz++) {
        const cell = this.cells.get(key(cx, cz));
        if (!cell) continue;
        out.push(cell);
        n += cell.size;
      }
    return n;
  }

  /**
   * The entities standing on the tile (x, z), if any: the grid's own array, good until the grid
   * next changes (an array a tile no longer uses serves another, `spare`).
   */
  at(x: number, z: number): readonly T[] | undefined {
    return this.tiles.get(key(x, z));
  }

  /**
   * Gather into `out` the occupied tiles at Chebyshev distance `r` from (x, z) (a ring; r = 0, the
   * tile itself), and return how many: `out` is reused, its entries past the count are stale; the
   * tiles' arrays are the grid's own, good until it next changes (`at`).
   */
  ring(x: number, z: number, r: number, out: (readonly T[])[]): number {
    if (r === 0) return this.gather(x, z, out, 0);
    let n = 0;
    for (let dx = -r; dx <= r; dx++) n = this.gather(x + dx, z + r, out, this.gather(x + dx, z - r, out, n));
    for (let dz = -r + 1; dz < r; dz++) n = this.gather(x + r, z + dz, out, this.gather(x - r, z + dz, out, n));
    return n;
  }

  /** `out[n]` is the tile's entities if it holds any (then n + 1 is returned, else n). */
  private gather(x: number, z: number, out: (readonly T[])[], n: number): number {
    const bucket = this.at(x, z);
    if (bucket) out[n++] = bucket;
    return n;
  }

  get size(): number {
    return this.where.size;
  }
}

/**
 * One 32-bit integer for a pair of coordinates within ±32,767: a small integer to V8 (no number boxed
 * for each map lookup, as a key past 2³¹ was: most of the world's tiles and cells).
 */
function key(a: number, b: number): number {
  return (a << 16) | (b & 0xffff);
}

/** Chebyshev distance between two tiles given by their keys. */
function tileDistance(a: number, b: number): number {
  return Math.max(Math.abs((a >> 16) - (b >> 16)), Math.abs(((a << 16) >> 16) - ((b << 16) >> 16)));
}

function add<T extends { id: string }>(index: Map<number, Map<string, T>>, k: number, entity: T): void {
  let bucket = index.get(k);
  if (!bucket) index.set(k, (bucket = new Map<string, T>()));
  bucket.set(entity.id, entity);
}

function remove<T>(index: Map<number, Map<string, T>>, k: number, id: string): void {
  const bucket = index.get(k);
  if (!bucket) return;
  bucket.delete(id);
  if (bucket.size === 0) index.delete(k);
}
