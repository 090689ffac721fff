/**
 * Presence of characters another process holds (src/cluster/remote.ts `quiet`): private messages
 * to one character cost one lease lookup per PRESENCE_TTL_MS window, not one per message; a holder
 * that no longer has the character is looked up again at once. Two buses on one local presence.
 */
import assert from "node:assert/strict";
import { LocalPresence } from "@colyseus/core";
import { z } from "zod";
import { ClusterBus } from "../../../src/cluster/bus.js";
import type { LeaseHolder, LeaseStore } from "../../../src/cluster/leases.js";
import { PRESENCE_TTL_MS, RemoteWorlds } from "../../../src/cluster/remote.js";
import { createLogger } from "../../../src/logger.js";

describe("cluster presence: lease lookups of private messages", () => {
  const presence = new LocalPresence();
  const asking = new ClusterBus({ presence, processId: "pa", namespace: "presence-test" });
  const holding = new ClusterBus({ presence, processId: "pb", namespace: "presence-test" });
  let lookups = 0;
  let holder: LeaseHolder | undefined = { owner: "pb", world: 1, expiresInSeconds: 30 };
  /** The lease store of the asking process: who holds a character, counted. */
  const leases = {
    owner: "pa",
    holder: (_id: string) => {
      lookups++;
      return Promise.resolve(holder);
    },
  } as unknown as LeaseStore;
  let online = true;
  let clock = 0;
  const remote = new RemoteWorlds(asking, leases, createLogger("silent"), 1_000, () => clock);

  before(async () => {
    await asking.start();
    await holding.start();
    holding.handle("world.deliverPrivateMessage", z.object({ characterId: z.string() }).loose(), () => online);
  });
  after(async () => {
    await asking.close();
    await holding.close();
    presence.shutdown();
  });

  const deliver = () => remote.quiet("world.deliverPrivateMessage", { characterId: "c1", from: { id: "x", name: "X" }, text: "hi" }, false);

  it("50 messages within the window: one lookup; after it, one more", async () => {
    lookups = 0;
    for (let i = 0; i < 50; i++) assert.equal(await deliver(), true);
    assert.equal(lookups, 1);
    clock += PRESENCE_TTL_MS;
    assert.equal(await deliver(), true);
    assert.equal(lookups, 2);
  });

  it("a holder that no longer has the character is forgotten: the next message looks again", async () => {
    clock += PRESENCE_TTL_MS;
    lookups = 0;
    online = false;
    assert.equal(await deliver(), false);
    holder = undefined;
    assert.equal(await deliver(), false);
    assert.equal(lookups, 2, "looked up again after the refusal");
    // "Nobody holds it" is kept for the window.
    assert.equal(await deliver(), false);
    assert.equal(lookups, 2);
  });
});
