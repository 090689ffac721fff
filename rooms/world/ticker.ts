/**
 * The world room's tick timer (`TICK_PHASE`, docs/operations.md "Scaling: several processes and machines").
 *
 * - `auto`: each tick lands on the world's slot of the wall-clock tick grid (src/world/tick-grid.ts),
 *   so the worlds of the processes of one machine tick at different moments instead of contending
 *   for its cores. Each tick arms a `setTimeout` for the next slot (no drift accumulates); a tick
 *   that ran past slots takes the next free one and counts the ones it left out
 *   (`realm_tick_slots_skipped_total`).
 * - `off`: Colyseus's `setSimulationInterval` (a Node `setInterval`, which drifts by each tick's lateness).
 *
 * Either way each tick ticks the room's Colyseus clock first (its `clock.setTimeout` timers run
 * there) and an exception goes to the room's `onUncaughtException` as a `TimestepException` of
 * `setTimestep`, as Colyseus's `setTimestep` does.
 */
import { TimestepException, type Room } from "@colyseus/core";
import { nextTick, slotAtOrAfter, tickPhaseMs } from "../../src/world/tick-grid.js";

export type TickPhase = "auto" | "off";

/** What the ticker uses of its room. */
export type TickedRoom = Pick<Room, "clock" | "onUncaughtException" | "setSimulationInterval">;

/** The room's settings (a `WorldRoomDeps` is one). */
export interface TickerOptions {
  tickMs: number;
  tickPhase: TickPhase;
  /** The world's number: its phase on the grid. */
  worldNumber: number;
  /** Counts the slots left out (`Metrics.tickSlotsSkipped`, `realm_tick_slots_skipped_total`). */
  metrics?: { tickSlotsSkipped: { inc(slots: number): void } };
  /** The wall clock in milliseconds, `Date.now` unless a test gives its own. */
  now?: () => number;
}

/** Start ticking `room`: `tick` once per tick until `stop`. */
export function startTicker(room: TickedRoom, tick: () => void, o: TickerOptions): Ticker {
  return o.tickPhase === "auto" ? new PhasedTicker(room, tick, o) : new IntervalTicker(room, tick, o.tickMs);
}

export interface Ticker {
  /** The slot of the tick running or next to run (a `Date.now()` time); undefined for `off` and once stopped. */
  readonly slot: number | undefined;
  /** Clears the timer; no tick runs after it. */
  stop(): void;
}

class IntervalTicker implements Ticker {
  readonly slot = undefined;
  constructor(
    private readonly room: TickedRoom,
    tick: () => void,
    tickMs: number,
  ) {
    room.setSimulationInterval(tick, tickMs);
  }
  stop() {
    this.room.setSimulationInterval(undefined);
  }
}

class PhasedTicker implements Ticker {
  private readonly phaseMs: number;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  slot: number | undefined;

  constructor(
    private readonly room: TickedRoom,
    private readonly tick: () => void,
    private readonly o: TickerOptions,
  ) {
    this.phaseMs = tickPhaseMs(o.worldNumber, o.tickMs);
    this.now = o.now ?? Date.now;
    this.arm(slotAtOrAfter(this.now(), o.tickMs, this.phaseMs));
  }

  stop() {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.slot = undefined;
    setTimestepHandle(this.room, undefined);
  }

  private arm(slot: number) {
    this.slot = slot;
    this.timer = setTimeout(this.fire, Math.max(0, slot - this.now()));
    setTimestepHandle(this.room, this.timer);
  }

  private readonly fire = () => {
    const slot = this.slot!;
    try {
      this.room.clock.tick();
      this.tick();
    } catch (e) {
      const error = e instanceof Error ? e : new Error(String(e));
      // Without a handler the exception ends the process, as from Colyseus's own timer.
      if (!this.room.onUncaughtException) throw error;
      this.room.onUncaughtException(new TimestepException(error, error.message), "setTimestep");
    }
    // Stopped during the tick (the room disposed): no next tick.
    if (this.slot === undefined) return;
    const { next, skipped } = nextTick(slot, this.now(), this.o.tickMs, this.phaseMs);
    if (skipped > 0) this.o.metrics?.tickSlotsSkipped.inc(skipped);
    this.arm(next);
  };
}

/**
 * Colyseus's own timestep handle, a private field of `Room` (node_modules/@colyseus/core Room.mjs,
 * `setTimestep`): while it is set, `broadcastPatch` does not tick the room clock a second time and
 * `setPatchRate(null)` starts no 60 Hz timer of its own to tick it; disposing the room clears it.
 * The ticker keeps it on its current timeout (`clearInterval` clears a timeout too).
 */
function setTimestepHandle(room: TickedRoom, timer: NodeJS.Timeout | undefined) {
  (room as unknown as { _simulationInterval: NodeJS.Timeout | undefined })._simulationInterval = timer;
}
