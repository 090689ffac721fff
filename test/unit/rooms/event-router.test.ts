/**
 * rooms/world/event-table.ts: a handler that fails, synchronously or by a rejected promise, is
 * logged ("event handler failed") and changes nothing else: routing returns, the next event runs.
 */
import assert from "node:assert/strict";
import { EVENT_TABLE, EventRouter, type EventTable } from "../../../rooms/world/event-table.js";
import type { Logger } from "../../../src/logger.js";
import type { Player } from "../../../src/world/player.js";

describe("rooms/world/event-table (EventRouter)", () => {
  it("logs a handler that throws and one that rejects, and routes the next event", async () => {
    const errors: { event: unknown; msg: string }[] = [];
    const logger = { error: (obj: { event?: unknown }, msg: string) => errors.push({ event: obj.event, msg }) } as unknown as Logger;
    const handled: string[] = [];
    const table = {
      ...EVENT_TABLE,
      "player:move": {
        ...EVENT_TABLE["player:move"],
        handle: () => {
          handled.push("move");
          throw new Error("sync failure");
        },
      },
      "player:chat": { ...EVENT_TABLE["player:chat"], handle: () => (handled.push("chat"), Promise.reject(new Error("async failure"))) },
    } as EventTable;
    const router = new EventRouter({} as never, logger, table);
    const player = { id: "p1", dead: false, leaseInDoubt: () => false } as unknown as Player;

    assert.doesNotThrow(() => router.route(player, "player:move", { x: 1, z: 2 }));
    assert.deepEqual(errors, [{ event: "player:move", msg: "event handler failed" }], "the synchronous failure, logged at once");
    router.route(player, "player:chat", { text: "hello" });
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(handled, ["move", "chat"]);
    assert.deepEqual(errors.at(-1), { event: "player:chat", msg: "event handler failed" }, "the rejection, logged");
    assert.equal(errors.length, 2);
  });
});
