/**
 * When a viewer's collections are selected again, and what the last selection changed
 * (docs/interest.md "In a crowd"): the room's own selections (`Visibility.visibleFor` with a
 * cadence) keep one per client.
 */
import { CALM_RESELECT_TICKS, CROWD_RESELECT_TICKS } from "../../domain/interest.js";
import { TrackedMark, type SelectionChanges } from "./tracked-mark.js";

/** The collections a viewer tracks (`VisibleSet`'s). */
export type CollectionKind = "players" | "npcs" | "resources" | "groundItems";

/**
 * A viewer's selection cadence (docs/interest.md "In a crowd"): a collection that was crowded at its last
 * selection is selected again only on the viewer's turn, every CROWD_RESELECT_TICKS ticks; one that
 * was calm (every candidate chosen) every CALM_RESELECT_TICKS; one that was filling, every tick.
 */
export interface SelectionCadence {
  /** The viewer's turns: ticks where (tick + phase) % CROWD_RESELECT_TICKS (or % CALM_RESELECT_TICKS) is 0. */
  readonly phase: number;
  /** Per collection, whether its candidates passed the bound, with the view full, at the last selection. */
  readonly crowded: Record<CollectionKind, boolean>;
  /** Per collection, whether every candidate was chosen at the last selection (nothing left out). */
  readonly calm: Record<CollectionKind, boolean>;
  /** Per collection, whether the last `visibleFor` kept the previous set with no selection (less what it dropped, `changes`). */
  readonly kept: Record<CollectionKind, boolean>;
  /**
   * Per collection, whether the last `visibleFor` brought the previous set itself up to date (kept,
   * or selected in place), `changes` listing what came in and what left: the new VisibleSet then
   * holds the previous one's Set object, and the previous VisibleSet a stale one.
   */
  readonly inPlace: Record<CollectionKind, boolean>;
  /** Per collection brought up to date in place, what the last `visibleFor` added to the set and dropped from it (gone, past the leave radius, or not chosen). */
  readonly changes: Record<CollectionKind, SelectionChanges>;
  /** Per collection, what it tracks by reference, and until when each cannot have passed the leave radius (`TrackedMark`); made by each selection. */
  readonly marks: Record<CollectionKind, TrackedMark>;
}

let phases = 0;
/** A new viewer's cadence; turns are handed out in rotation, so each tick selects a share of the crowd. */
export const newCadence = (): SelectionCadence => ({
  phase: phases++ % CROWD_RESELECT_TICKS,
  crowded: { players: false, npcs: false, resources: false, groundItems: false },
  calm: { players: false, npcs: false, resources: false, groundItems: false },
  kept: { players: false, npcs: false, resources: false, groundItems: false },
  inPlace: { players: false, npcs: false, resources: false, groundItems: false },
  changes: {
    players: { added: [], dropped: [] },
    npcs: { added: [], dropped: [] },
    resources: { added: [], dropped: [] },
    groundItems: { added: [], dropped: [] },
  },
  marks: { players: new TrackedMark(), npcs: new TrackedMark(), resources: new TrackedMark(), groundItems: new TrackedMark() },
});

/** Whether a collection of the viewer's selected every `period` ticks is selected at `tick`. */
const onTurn = (cadence: SelectionCadence, tick: number, period: number) => (tick + cadence.phase) % period === 0;

/** Whether the viewer's collection `kind` is due for a selection at `tick` by its cadence. */
export function due(cadence: SelectionCadence, kind: CollectionKind, tick: number): boolean {
  if (cadence.crowded[kind]) return onTurn(cadence, tick, CROWD_RESELECT_TICKS);
  return !cadence.calm[kind] || onTurn(cadence, tick, CALM_RESELECT_TICKS);
}
