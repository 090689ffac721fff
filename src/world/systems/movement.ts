/**
 * Player movement: `player:move` targets wait in a queue until the tick's path-finding budget
 * serves them (docs/protocol.md "Movement"); players walk or run along their paths.
 * The searches of actions (chasing a target, walking to a resource or a pile: `actionPathTo`)
 * draw on the same budget, after the tick's moves; one that does not fit waits for a later tick.
 */
import type { GameContent } from "../../content/load.js";
import { chebyshev, RUN_TILES_PER_TICK, WALK_TILES_PER_TICK } from "../../domain/movement.js";
import { searchPath } from "../../domain/path-search.js";
import { MoveQueue, Regions, searchLimit, type MoveRequest, type MoveTickReport } from "../../domain/pathing.js";
import type { Tile } from "../../domain/types.js";
import { SpatialGrid } from "../grid.js";
import { refuse } from "../refusals.js";
import type { Player } from "../player.js";
import type { Interrupt } from "../world-events.js";
import type { Progress } from "./progress.js";

/** The players' grid: a player steps at most RUN_TILES_PER_TICK tiles a tick, so a farther move is a jump (`SpatialGrid.jumps`). */
export const newPlayerGrid = (): SpatialGrid<Player> => new SpatialGrid<Player>(16, RUN_TILES_PER_TICK);

/** The walkable regions of each loaded content (the map is static; worlds of one content share them). */
const regionCache = new WeakMap<GameContent, Regions>();

export function regionsOf(content: GameContent): Regions {
  let r = regionCache.get(content);
  if (!r) regionCache.set(content, (r = Regions.build(content.worldBounds, (x, z) => content.isBlocked(x, z))));
  return r;
}

export interface MovementDeps {
  players: ReadonlyMap<string, Player>;
  playerGrid: SpatialGrid<Player>;
  content: GameContent;
  regions: Regions;
  progress: Progress;
  interrupt: Interrupt;
}

export class Movement {
  /** `player:move` targets waiting for the tick's path-finding budget. */
  readonly moves = new MoveQueue();
  /** What the last tick's move searches did (diagnostics and tests). */
  lastTick: MoveTickReport = { served: [], expanded: 0, deferred: 0 };
  /** What the current tick's action searches did so far (diagnostics and tests). */
  actionSearches = { searched: 0, expanded: 0, deferred: 0 };
  /** Tiles this tick's searches may still expand (`player:move` first, then actions). */
  private budgetLeft: number;
  /** The map's blocked test as a search or a move's check takes it (one function, not one made for every search or move). */
  readonly blocked = (x: number, z: number): boolean => this.d.content.isBlocked(x, z);

  constructor(private readonly d: MovementDeps) {
    this.budgetLeft = this.moves.perTick;
  }

  /** Is the tile inside the world and free? */
  walkable(x: number, z: number): boolean {
    return this.d.content.inBounds(x, z) && !this.d.content.isBlocked(x, z);
  }

  /**
   * Record a `player:move` target; the tick searches it within its budget (`plan`). Refused at
   * once, with no search, when no path can reach it (another walkable region): returns false.
   */
  request(p: Player, req: MoveRequest): boolean {
    if (!this.d.regions.reachable(p, req)) return false;
    this.moves.request(p.id, req);
    return true;
  }

  /** Stop walking and doing: the path, a waiting move and the current action go. */
  stop(p: Player): void {
    p.path = [];
    this.moves.cancel(p.id);
    p.action = null;
  }

  /** The tick's `player:move` searches, in arrival order, within the tick's node budget. */
  plan(): void {
    this.budgetLeft = this.moves.perTick;
    this.actionSearches = { searched: 0, expanded: 0, deferred: 0 };
    if (this.moves.size === 0) {
      this.lastTick = { served: [], expanded: 0, deferred: 0 };
      return;
    }
    const stats = { expanded: 0 };
    this.lastTick = this.moves.runTick(
      (id, req) => {
        const p = this.d.players.get(id);
        return p && !p.dead && !p.dropped ? searchLimit(p, req) : undefined;
      },
      (id, req, maxNodes) => {
        const p = this.d.players.get(id)!;
        // Something the player did since asking (an attack, gathering) replaced the walk.
        if (p.action) return 0;
        p.running = req.run;
        if (!this.pathTo(p, req, false, maxNodes, stats)) refuse(p, "NO_PATH");
        return stats.expanded;
      },
    );
    this.budgetLeft -= this.lastTick.expanded;
  }

  /**
   * The path of an action (a chase, a walk to a resource or a pile), searched within what is left
   * of the tick's budget after the moves: true when found, false when no path exists (at once for
   * another region, or after a search of at most its node limit), `"wait"` when its limit does not
   * fit in what is left this tick (nothing searched; the action asks again next tick).
   */
  actionPathTo(p: Player, to: Tile, adjacent = false): boolean | "wait" {
    if (!this.d.regions.reachable(p, to, adjacent)) return false;
    const limit = Math.min(searchLimit(p, to), this.moves.perSearch);
    if (limit > this.budgetLeft) {
      this.actionSearches.deferred++;
      return "wait";
    }
    const stats = { expanded: 0 };
    const found = this.pathTo(p, to, adjacent, limit, stats);
    this.budgetLeft -= stats.expanded;
    this.actionSearches.searched++;
    this.actionSearches.expanded += stats.expanded;
    return found;
  }

  /**
   * Path a player to `to` (or next to it when `adjacent`). Returns false when no path exists: at once
   * when `to` lies in another walkable region, else after a search of at most `maxNodes` tiles
   * (proportional to the distance by default).
   */
  pathTo(p: Player, to: Tile, adjacent = false, maxNodes = searchLimit(p, to), stats?: { expanded: number }): boolean {
    if (stats) stats.expanded = 0;
    // The player is its own tile here (`p.tile` would be a new object per call): both read it at once.
    if (!this.d.regions.reachable(p, to, adjacent)) return false;
    const found = searchPath(p, to, this.blocked, this.d.content.worldBounds, maxNodes, stats);
    if (typeof found === "string") return false;
    let tiles = found; // the search's own array
    if (adjacent && tiles.length > 0) {
      // Stop on the first tile next to the target.
      const i = tiles.findIndex((t) => chebyshev(t, to) <= 1);
      if (i >= 0) tiles = tiles.slice(0, i + 1);
    }
    p.path = tiles;
    return true;
  }

  /** Move a player along its path by one tick's worth of tiles. */
  advance(p: Player): void {
    // Along the path by a cursor (`Player.stepPath`): no slice of what is left each tick.
    const at = p.stepPath(p.running ? RUN_TILES_PER_TICK : WALK_TILES_PER_TICK);
    if (!at) return;
    const content = this.d.content;
    const areaBefore = p.goal?.type === "explore" ? content.areaAt(p.x, p.z) : undefined;
    p.x = at.x;
    p.z = at.z;
    p.safety.progressChanged();
    this.d.playerGrid.set(p, p.x, p.z);
    if (p.tradeId) this.d.interrupt(p.id, "moved_away");
    if (p.goal?.type === "explore") {
      const area = content.areaAt(p.x, p.z);
      if (area && area !== areaBefore && this.d.progress.countGoal(p, { type: "explore", areaId: area.id })) p.sync();
    }
  }

  /** Admin teleport: an instant move (ends any trade, like any move). */
  teleport(p: Player, x: number, z: number): void {
    this.stop(p);
    p.x = x;
    p.z = z;
    p.safety.progressChanged();
    this.d.playerGrid.set(p, x, z);
    if (p.tradeId) this.d.interrupt(p.id, "moved_away");
    p.sync();
  }
}
