/**
 * Move → visible latency, measured by bench:world and bench:scale with two bots in one worker: an
 * observer that decodes the state and a mover it watches.
 */
import type { GameContent } from "../src/content/load.js";
import type { BenchBot, Tile } from "./bot.js";

const LOST_AFTER_MS = 5_000;

/**
 * A probe: the mover walks to a free tile one or two tiles from where the observer sees it (and
 * within 2 tiles of the observer's spot), only while the observer sees it standing; the latency is
 * from `room.send("player:move")` to the first state patch in which the observer sees the mover's
 * position change. Both bots live in the same process, so one clock times both ends.
 */
export class ProbePair {
  latencies: number[] = [];
  lost = 0;
  /** Ticks of the mover's timer on which the observer did not see the mover at all. */
  unseen = 0;
  private pending: { from: Tile; at: number } | undefined;

  constructor(
    readonly observer: BenchBot,
    readonly mover: BenchBot,
    readonly spot: Tile,
    private readonly content: Pick<GameContent, "isBlocked" | "inBounds">,
    private readonly rng: () => number,
  ) {
    observer.onStateChange = () => this.onPatch();
  }

  private onPatch() {
    const p = this.pending;
    if (!p) return;
    const m = this.observer.seen(this.mover.id);
    if (m && (m.x !== p.from.x || m.z !== p.from.z)) {
      this.latencies.push(performance.now() - p.at);
      this.pending = undefined;
    }
  }

  start(everyMs: number) {
    this.mover.every(everyMs, this.rng, () => this.step());
  }

  private step() {
    if (this.pending) {
      if (performance.now() - this.pending.at < LOST_AFTER_MS) return;
      this.lost++;
      this.pending = undefined;
    }
    const m = this.observer.seen(this.mover.id);
    if (!m) {
      this.unseen++;
      return;
    }
    if (m.moving) return;
    const from = { x: m.x, z: m.z };
    for (let attempt = 0; attempt < 20; attempt++) {
      const x = from.x + Math.floor(this.rng() * 5) - 2;
      const z = from.z + Math.floor(this.rng() * 5) - 2;
      if ((x === from.x && z === from.z) || Math.max(Math.abs(x - this.spot.x), Math.abs(z - this.spot.z)) > 2) continue;
      if (!this.content.inBounds(x, z) || this.content.isBlocked(x, z)) continue;
      this.pending = { from, at: performance.now() };
      this.mover.move({ x, z });
      return;
    }
  }

  takeLatencies(): { latencies: number[]; lost: number; unseen: number } {
    const out = { latencies: this.latencies, lost: this.lost, unseen: this.unseen };
    this.latencies = [];
    this.lost = 0;
    this.unseen = 0;
    this.pending = undefined;
    return out;
  }
}
