/**
 * A uniform spatial hash for interest management: entities are bucketed by cell so a view query
 * touches only the cells around the viewer, whatever the size of the world.
 */
export class SpatialGrid<T extends { id: string }> {
  private readonly cells = new Map<string, Map<string, T>>();
  private readonly where = new Map<string, string>();
  constructor(readonly cellSize = 16) {}

  private key(x: number, z: number) {
    return `${Math.floor(x / this.cellSize)},${Math.floor(z / this.cellSize)}`;
  }

  /** Insert or move an entity. */
  set(entity: T, x: number, z: number): void {
    const k = this.key(x, z);
    const old = this.where.get(entity.id);
    if (old === k) return;
    if (old !== undefined) this.cells.get(old)?.delete(entity.id);
    let cell = this.cells.get(k);
    if (!cell) this.cells.set(k, (cell = new Map<string, T>()));
    cell.set(entity.id, entity);
    this.where.set(entity.id, k);
  }

  delete(id: string): void {
    const old = this.where.get(id);
    if (old === undefined) return;
    this.cells.get(old)?.delete(id);
    this.where.delete(id);
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
        const cell = this.cells.get(`${cx},${cz}`);
        if (cell) yield* cell.values();
      }
  }

  get size(): number {
    return this.where.size;
  }
}
