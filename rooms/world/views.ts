/**
 * What each client sees of the world, kept in step every tick (docs/protocol.md#interest-management):
 * the world's public views mirrored into schema objects, with a `StateView` per SDK client holding
 * the visible ones, and `world:update` deltas of the same views for `/ws` clients.
 */
import type { StateView } from "@colyseus/schema";
import type { PublicViewOf, ViewKind, WorldUpdate } from "../../src/events.js";
import type { Player } from "../../src/world/player.js";
import type { VisibleSet, World } from "../../src/world/world.js";
import { GroundItemState, NpcState, PlayerState, ResourceState, type WorldState } from "../../schema/world.js";

export const KINDS: readonly ViewKind[] = ["players", "npcs", "resources", "groundItems"];
const SCHEMA = { players: PlayerState, npcs: NpcState, resources: ResourceState, groundItems: GroundItemState } as const;
type SchemaOf<K extends ViewKind> = InstanceType<(typeof SCHEMA)[K]>;

/** Compile-time check: every public field of a view is a field of its schema class, with the same type. */
type Fits<K extends ViewKind> = PublicViewOf<K> extends Pick<SchemaOf<K>, keyof PublicViewOf<K> & keyof SchemaOf<K>> & Record<keyof PublicViewOf<K>, unknown>
  ? keyof PublicViewOf<K> extends keyof SchemaOf<K>
    ? true
    : false
  : false;
const viewsFitSchema: { [K in ViewKind]: Fits<K> } = { players: true, npcs: true, resources: true, groundItems: true };
void viewsFitSchema;

/** The world's public state as schema objects (the room's synchronised state). */
export class SchemaMirror {
  private readonly objects: { [K in ViewKind]: Map<string, SchemaOf<K>> } = {
    players: new Map(),
    npcs: new Map(),
    resources: new Map(),
    groundItems: new Map(),
  };

  constructor(
    private readonly state: WorldState,
    private readonly world: World,
  ) {}

  get<K extends ViewKind>(kind: K, id: string): SchemaOf<K> | undefined {
    return this.objects[kind].get(id);
  }

  /** Copy every entity's public view into its schema object (unchanged values send nothing); drop the gone. */
  syncAll(views: () => Iterable<StateView>) {
    const world = this.world;
    const live: Record<ViewKind, Iterable<string>> = {
      players: world.players.keys(),
      npcs: world.npcs.keys(),
      resources: world.resources.keys(),
      groundItems: world.groundItems.keys(),
    };
    for (const kind of KINDS) {
      const seen = new Set<string>();
      for (const id of live[kind]) {
        seen.add(id);
        this.upsert(kind, id);
      }
      for (const id of [...this.objects[kind].keys()]) if (!seen.has(id)) this.remove(kind, id, views());
    }
  }

  /** Create or update the schema object of one entity. */
  upsert<K extends ViewKind>(kind: K, id: string) {
    const view = this.world.publicView(kind, id);
    if (!view) return;
    const objects = this.objects[kind] as Map<string, SchemaOf<K>>;
    const obj = objects.get(id);
    if (!obj) {
      const created = Object.assign(new SCHEMA[kind](), view) as SchemaOf<K>;
      objects.set(id, created);
      (this.state[kind] as unknown as Map<string, SchemaOf<K>>).set(id, created);
      return;
    }
    const fields = obj as unknown as Record<string, unknown>;
    for (const [k, v] of Object.entries(view)) if (fields[k] !== v) fields[k] = v;
  }

  /** Remove an entity's schema object, from the state and from every client's view. */
  remove(kind: ViewKind, id: string, views: Iterable<StateView>) {
    const obj = this.objects[kind].get(id);
    if (!obj) return;
    for (const view of views) if (view.has(obj)) view.remove(obj);
    this.objects[kind].delete(id);
    (this.state[kind] as unknown as Map<string, unknown>).delete(id);
  }
}

/** What an SDK client's `StateView` holds: the visible ids, double-buffered (swapped every tick). */
export interface SdkVisibility {
  visible?: VisibleSet;
  spare?: VisibleSet;
}

/** Keep an SDK client's `StateView` equal to what its player can see. */
export function refreshView(world: World, mirror: SchemaMirror, view: StateView, seen: SdkVisibility, p: Player) {
  const next = world.visibleFor(p, seen.spare);
  const prev = seen.visible;
  for (const kind of KINDS) {
    for (const id of next[kind]) {
      if (prev?.[kind].has(id)) continue;
      const obj = mirror.get(kind, id);
      // Not mirrored yet (a player still joining): left out, so a later refresh adds it.
      if (obj) view.add(obj);
      else next[kind].delete(id);
    }
    if (prev)
      for (const id of prev[kind]) {
        if (next[kind].has(id)) continue;
        const obj = mirror.get(kind, id);
        if (obj && view.has(obj)) view.remove(obj);
      }
  }
  seen.spare = prev;
  seen.visible = next;
}

/** What a `/ws` client has been told, to send it only the changes (`world:update`). */
export class WorldUpdates {
  private readonly sent: Record<ViewKind, Map<string, Record<string, unknown>>> = {
    players: new Map(),
    npcs: new Map(),
    resources: new Map(),
    groundItems: new Map(),
  };

  /**
   * The next `world:update` for `p`: entities that came into view whole, the changed fields of the
   * others, null for those that left. Undefined when nothing changed, unless `full` (the first one).
   */
  next(world: World, p: Player, full: boolean): WorldUpdate | undefined {
    const visible = world.visibleFor(p);
    const update: WorldUpdate = { tick: world.tick, players: {}, npcs: {}, resources: {}, groundItems: {} };
    let changed = full;
    for (const kind of KINDS) {
      const sent = this.sent[kind];
      const delta: Record<string, Record<string, unknown> | null> = update[kind];
      for (const id of visible[kind]) {
        const view = world.publicView(kind, id);
        if (!view) continue;
        const before = sent.get(id);
        if (!before) {
          delta[id] = view;
          sent.set(id, { ...view });
          continue;
        }
        const fields: Record<string, unknown> = {};
        let any = false;
        for (const [k, v] of Object.entries(view))
          if (before[k] !== v) {
            fields[k] = v;
            before[k] = v;
            any = true;
          }
        if (any) delta[id] = fields;
      }
      for (const id of [...sent.keys()])
        if (!visible[kind].has(id)) {
          delta[id] = null;
          sent.delete(id);
        }
      if (Object.keys(delta).length > 0) changed = true;
    }
    return changed ? update : undefined;
  }
}
