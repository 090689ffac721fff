/**
 * What each client sees of the world, kept in step every tick (docs/protocol.md#interest-management):
 * the world's public views mirrored into schema objects (refreshed in place, nothing rebuilt when
 * nothing changed), with a `StateView` per SDK client holding what its player tracks, and
 * `world:update` deltas of the same selection for `/ws` clients.
 */
import type { StateView } from "@colyseus/schema";
import type { PublicViewOf, ViewKind, WorldUpdate } from "../../src/events.js";
import type { Player } from "../../src/world/player.js";
import { newCadence, type SelectionCadence, type ViewFields, type VisibleSet, type World } from "../../src/world/world.js";
import type { EntitySlots } from "./interest-encoder.js";
import { GroundItemState, NpcState, PlayerState, ResourceState, type WorldState } from "../../schema/world.js";

export const KINDS: readonly ViewKind[] = ["players", "npcs", "resources", "groundItems"];
const SCHEMA = { players: PlayerState, npcs: NpcState, resources: ResourceState, groundItems: GroundItemState } as const;
/** The entity classes, each encoded once per tick for every view that holds it (interest-encoder.ts). */
export const ENTITY_SCHEMAS = Object.values(SCHEMA);
type SchemaOf<K extends ViewKind> = InstanceType<(typeof SCHEMA)[K]>;

/** Compile-time check: every public field of a view is a field of its schema class, with the same type. */
type Fits<K extends ViewKind> =
  PublicViewOf<K> extends Pick<SchemaOf<K>, keyof PublicViewOf<K> & keyof SchemaOf<K>> & Record<keyof PublicViewOf<K>, unknown>
    ? keyof PublicViewOf<K> extends keyof SchemaOf<K>
      ? true
      : false
    : false;
const viewsFitSchema: { [K in ViewKind]: Fits<K> } = { players: true, npcs: true, resources: true, groundItems: true };
void viewsFitSchema;

/** One mirrored entity: its schema object, its public view kept in step, and a version bumped on every change. */
export interface Mirrored<K extends ViewKind = ViewKind> {
  readonly obj: SchemaOf<K>;
  readonly view: ViewFields;
  version: number;
  /** The last `syncAll` that found it in the world. */
  seen: number;
}

/** An SDK client as the mirror sees it: its `StateView` and what it tracks. */
export interface Viewer {
  readonly view: StateView;
  readonly seen?: SdkVisibility;
}

/** The world's public state as schema objects (the room's synchronised state). */
export class SchemaMirror {
  private readonly entries: { [K in ViewKind]: Map<string, Mirrored<K>> } = {
    players: new Map(),
    npcs: new Map(),
    resources: new Map(),
    groundItems: new Map(),
  };
  /** Versions of all entities come from one counter, so a re-created entity never reuses one. */
  private versions = 0;
  private sweep = 0;

  constructor(
    private readonly state: WorldState,
    private readonly world: World,
    /** The slots of the interest encoder's views, given back when an entity leaves. */
    private readonly slots?: EntitySlots,
  ) {}

  get<K extends ViewKind>(kind: K, id: string): SchemaOf<K> | undefined {
    return this.entries[kind].get(id)?.obj;
  }

  /** The mirrored entity, if any. */
  entry<K extends ViewKind>(kind: K, id: string): Mirrored<K> | undefined {
    return this.entries[kind].get(id);
  }

  /**
   * Bring every entity's schema object in step with the world: fields are compared in place and only
   * changed ones assigned (unchanged values send nothing, nothing is allocated); drop the gone.
   */
  syncAll(viewers: () => Iterable<Viewer>) {
    const mark = ++this.sweep;
    for (const kind of KINDS) {
      const live: ReadonlyMap<string, unknown> = this.world[kind];
      for (const id of live.keys()) this.upsert(kind, id, mark);
      for (const [id, e] of this.entries[kind]) if (e.seen !== mark) this.remove(kind, id, viewers());
    }
  }

  /** Create or update the schema object of one entity. */
  upsert<K extends ViewKind>(kind: K, id: string, mark = this.sweep) {
    const entries = this.entries[kind] as Map<string, Mirrored<K>>;
    const e = entries.get(id);
    if (!e) {
      const view: ViewFields = {};
      if (this.world.writeView(kind, id, view) === undefined) return;
      const obj = Object.assign(new SCHEMA[kind](), view) as SchemaOf<K>;
      entries.set(id, { obj, view, version: ++this.versions, seen: mark });
      (this.state[kind] as unknown as Map<string, SchemaOf<K>>).set(id, obj);
      return;
    }
    e.seen = mark;
    if (!this.world.writeView(kind, id, e.view)) return;
    e.version = ++this.versions;
    const fields = e.obj as unknown as ViewFields;
    for (const k in e.view) if (fields[k] !== e.view[k]) fields[k] = e.view[k]!;
  }

  /**
   * Remove an entity's schema object, from the state and from every client's view. A client that
   * tracked it forgets it and selects that collection again at its next refresh (as for anything
   * tracked that leaves): an entity that comes back under the same id (a player who logs out and in
   * between two ticks, or while the client is away in its reconnection window) has a new schema
   * object, which the client's view must be given like any newcomer's.
   */
  remove(kind: ViewKind, id: string, viewers: Iterable<Viewer>) {
    const obj = this.entries[kind].get(id)?.obj;
    if (!obj) return;
    for (const { view, seen } of viewers) {
      if (view.has(obj)) view.remove(obj);
      if (seen?.visible?.[kind].delete(id) && seen.cadence) seen.cadence.calm[kind] = seen.cadence.crowded[kind] = false;
    }
    this.entries[kind].delete(id);
    (this.state[kind] as unknown as Map<string, unknown>).delete(id);
    this.slots?.release(obj);
  }
}

/** What a client tracks: the visible ids, double-buffered (swapped every tick; the last one is the next one's `previous`). */
export interface SdkVisibility {
  visible?: VisibleSet;
  spare?: VisibleSet;
  /** When each of its collections is selected again, crowded or calm (docs/interest.md "In a crowd"). */
  cadence?: SelectionCadence;
}

/**
 * Bring an SDK client's `StateView` in step with what its player tracks (`World.visibleFor`). The
 * room runs it for every client after the tick's patch (what comes in or leaves goes out with the
 * next tick's patch), before the patch for a client with a new priority in view
 * (`World.priorityWaiting`), and once when the client joins.
 */
export function refreshView(world: World, mirror: SchemaMirror, view: StateView, seen: SdkVisibility, p: Player) {
  const cadence = (seen.cadence ??= newCadence());
  const next = world.visibleFor(p, seen.spare, seen.visible, cadence);
  const prev = seen.visible;
  const r = refresh;
  r.mirror = mirror;
  r.view = view;
  for (let k = 0; k < KINDS.length; k++) {
    const kind = KINDS[k]!;
    r.kind = kind;
    // Brought up to date in place (kept, or selected): only what changed comes in or leaves.
    if (cadence.inPlace[kind]) {
      const { added, dropped } = cadence.changes[kind];
      for (let i = 0; i < dropped.length; i++) leave(mirror, view, kind, dropped[i]!);
      for (let i = 0; i < added.length; i++) admit(mirror, view, kind, next[kind], added[i]!);
      continue;
    }
    r.prev = prev?.[kind];
    r.next = next[kind];
    next[kind].forEach(enter, r);
    if (prev) prev[kind].forEach(leaveIfGone, r);
  }
  r.mirror = r.view = r.prev = r.next = undefined;
  seen.spare = prev;
  seen.visible = next;
}

/**
 * What `refreshView`'s walks over a collection's sets need: one object for every refresh, the walks
 * a Set's `forEach` with the functions below. A `for…of` over the sets there made an iterator result
 * for every id of every view, every tick, once the function was optimized with what it calls inlined
 * (in `loadtest/bench-interest.ts --scenario spread --players 2000`, half of what the measured ticks
 * allocated).
 */
interface Refresh {
  mirror: SchemaMirror | undefined;
  view: StateView | undefined;
  kind: ViewKind;
  prev: ReadonlySet<string> | undefined;
  next: Set<string> | undefined;
}
const refresh: Refresh = { mirror: undefined, view: undefined, kind: "players", prev: undefined, next: undefined };

/** Into the client's view, if new to it. */
function enter(this: Refresh, id: string) {
  if (!this.prev?.has(id)) admit(this.mirror!, this.view!, this.kind, this.next!, id);
}

/** Into the client's view, new to it; `tracked`, the set it came into. */
function admit(mirror: SchemaMirror, view: StateView, kind: ViewKind, tracked: Set<string>, id: string) {
  const obj = mirror.get(kind, id);
  // Not mirrored yet (a player still joining): left out, so a later refresh adds it.
  if (obj) view.add(obj);
  else tracked.delete(id);
}

/** Out of the client's view, if no longer tracked. */
function leaveIfGone(this: Refresh, id: string) {
  if (!this.next!.has(id)) leave(this.mirror!, this.view!, this.kind, id);
}

/** Out of the client's view (a function, not a closure made at every refresh of every client). */
function leave(mirror: SchemaMirror, view: StateView, kind: ViewKind, id: string) {
  const obj = mirror.get(kind, id);
  if (obj && view.has(obj)) view.remove(obj);
}

/** What a `/ws` client has been told, to send it only the changes (`world:update`). */
export class WorldUpdates {
  /** Per entity sent: the mirror's version it was last told, and the fields as told. */
  private readonly sent: Record<ViewKind, Map<string, { version: number; fields: ViewFields }>> = {
    players: new Map(),
    npcs: new Map(),
    resources: new Map(),
    groundItems: new Map(),
  };
  private readonly seen: SdkVisibility = {};

  /**
   * The next `world:update` for `p`: entities that came into view whole, the changed fields of the
   * others, null for those that left. Undefined when nothing changed, unless `full` (the first one).
   * Fields are compared only for entities whose mirror version moved since they were last sent.
   */
  next(world: World, mirror: SchemaMirror, p: Player, full: boolean): WorldUpdate | undefined {
    const visible = world.visibleFor(p, this.seen.spare, this.seen.visible, (this.seen.cadence ??= newCadence()));
    this.seen.spare = this.seen.visible;
    this.seen.visible = visible;
    const update: WorldUpdate = { tick: world.tick, players: {}, npcs: {}, resources: {}, groundItems: {} };
    let changed = full;
    for (const kind of KINDS) {
      const sent = this.sent[kind];
      const delta: Record<string, Record<string, unknown> | null> = update[kind];
      let any = false;
      for (const id of visible[kind]) {
        const e = mirror.entry(kind, id);
        // Not mirrored yet: left out, so a later update sends it whole.
        if (!e) {
          visible[kind].delete(id);
          continue;
        }
        const before = sent.get(id);
        if (!before) {
          delta[id] = { ...e.view };
          sent.set(id, { version: e.version, fields: { ...e.view } });
          any = true;
          continue;
        }
        if (before.version === e.version) continue;
        before.version = e.version;
        const fields: Record<string, unknown> = {};
        let differs = false;
        for (const k in e.view)
          if (before.fields[k] !== e.view[k]) {
            fields[k] = before.fields[k] = e.view[k]!;
            differs = true;
          }
        if (differs) {
          delta[id] = fields;
          any = true;
        }
      }
      for (const id of sent.keys())
        if (!visible[kind].has(id)) {
          delta[id] = null;
          sent.delete(id);
          any = true;
        }
      if (any) changed = true;
    }
    return changed ? update : undefined;
  }
}
