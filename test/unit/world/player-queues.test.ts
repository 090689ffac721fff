/**
 * src/world/player-queues.ts `holdUntil`, the batched progress save's hold on its players' queues
 * (docs/persistence.md "Many players, one statement"): every player's later jobs wait for it, as
 * behind `run(id, () => done)`; a player whose queue was busy holds after its earlier jobs; the hold
 * counts one job per player while it lasts, and the queues are idle again once it ended.
 */
import assert from "node:assert/strict";
import { createLogger } from "../../../src/logger.js";
import { PlayerQueues } from "../../../src/world/player-queues.js";

const turns = async (n = 20) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

describe("world/player-queues holdUntil", () => {
  it("later jobs of every held player wait for the hold; a busy player's hold comes after its running job", async () => {
    const q = new PlayerQueues(createLogger("silent"), undefined, undefined, () => false);
    const events: string[] = [];
    let finishBusy!: () => void;
    void q.run("busy", () => new Promise<void>((r) => (finishBusy = r)).then(() => void events.push("busy job done")));
    let end!: () => void;
    const done = new Promise<void>((r) => (end = r));
    q.holdUntil(["a", "b", "busy"], done);
    assert.equal(q.depth, 4, "the running job and one held job per player");
    assert.ok(!q.idle("a") && !q.idle("b") && !q.idle("busy"));
    const later = ["a", "b", "busy"].map((id) => q.run(id, async () => void events.push(`${id} later`)));
    await turns();
    assert.deepEqual(events, [], "nothing runs while the hold lasts");
    finishBusy();
    await turns();
    assert.deepEqual(events, ["busy job done"], "the busy player's own job ends; its later job still waits for the hold");
    end();
    await Promise.all(later);
    assert.deepEqual(events.slice(1).sort(), ["a later", "b later", "busy later"]);
    await q.drain();
    assert.equal(q.depth, 0);
    assert.ok(q.idle("a") && q.idle("b") && q.idle("busy"), "idle again");
  });

  it("a hold nobody queued behind leaves the queues idle when it ends", async () => {
    const q = new PlayerQueues(createLogger("silent"), undefined, undefined, () => false);
    let end!: () => void;
    q.holdUntil(["a", "b"], new Promise<void>((r) => (end = r)));
    assert.equal(q.depth, 2);
    end();
    await turns();
    assert.equal(q.depth, 0);
    assert.ok(q.idle("a") && q.idle("b"));
  });
});
