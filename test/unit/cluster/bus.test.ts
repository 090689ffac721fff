/**
 * The cluster bus (src/cluster/bus.ts) on Colyseus's local presence (one process) and on two
 * Redis presences (two processes' worth of connections in one test process): broadcasts,
 * request-reply with its typed errors, payload validation at the receiver, unsubscribe on close.
 */
import assert from "node:assert/strict";
import { LocalPresence, type Presence } from "@colyseus/core";
import { RedisPresence } from "@colyseus/redis-presence";
import { Redis } from "ioredis";
import { z } from "zod";
import { BusError, ClusterBus } from "../../../src/cluster/bus.js";
import { useTestRedis } from "../../helpers/redis.js";

/** Collects messages and resolves waits as they arrive (no sleeping). */
function inbox<T>() {
  const got: T[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  return {
    got,
    push(m: T) {
      got.push(m);
      for (const w of [...waiters]) {
        if (got.length < w.n) continue;
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    },
    until(n: number) {
      return got.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve }));
    },
  };
}

const expectBusError = async (p: Promise<unknown>, code: string) => {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof BusError, String(e));
    assert.equal(e.code, code);
    return e as BusError;
  }
  throw new Error(`expected a BusError ${code}`);
};

function busContract(make: () => Promise<{ a: ClusterBus; b: ClusterBus; close(): Promise<void> }>) {
  let a: ClusterBus, b: ClusterBus, close: () => Promise<void>;
  beforeEach(async () => ({ a, b, close } = await make()));
  afterEach(async () => {
    await a.close();
    await b.close();
    await close();
  });

  it("delivers a broadcast to every subscriber, with the sender's id; a malformed one is dropped", async () => {
    const schema = z.object({ friend: z.string(), online: z.boolean() });
    const atA = inbox<[unknown, string]>();
    const atB = inbox<[unknown, string]>();
    await a.subscribe("friends", schema, (m, from) => atA.push([m, from]));
    await b.subscribe("friends", schema, (m, from) => atB.push([m, from]));
    // Refused by the schema; sent first on the same connection, so it arrives before the good one.
    await a.publish("friends", { friend: "x", online: "yes" });
    await a.publish("friends", { friend: "bob", online: true });
    await Promise.all([atA.until(1), atB.until(1)]);
    assert.deepEqual(atA.got, [[{ friend: "bob", online: true }, a.processId]]);
    assert.deepEqual(atB.got, [[{ friend: "bob", online: true }, a.processId]]);
  });

  it("answers a request addressed to one process, and only that process runs it", async () => {
    const ran: string[] = [];
    a.handle("agent.stop", z.object({ characterId: z.string() }), (p) => (ran.push(`a:${p.characterId}`), { stopped: false }));
    b.handle("agent.stop", z.object({ characterId: z.string() }), (p, from) => (ran.push(`b:${p.characterId}:${from}`), { stopped: true }));
    const result = await a.request(b.processId, "agent.stop", { characterId: "c1" }, { result: z.object({ stopped: z.boolean() }) });
    assert.deepEqual(result, { stopped: true });
    assert.deepEqual(ran, [`b:c1:${a.processId}`]);
    // A process may address itself.
    assert.deepEqual(await a.request(a.processId, "agent.stop", { characterId: "c2" }), { stopped: false });
  });

  it("refuses a payload the handler's schema does not accept, without running the handler", async () => {
    let ran = 0;
    b.handle("move", z.object({ x: z.number().int().min(0) }), () => ++ran);
    await expectBusError(a.request(b.processId, "move", { x: -1 }), "BAD_PAYLOAD");
    await expectBusError(a.request(b.processId, "move", "not an object"), "BAD_PAYLOAD");
    assert.equal(ran, 0);
  });

  it("typed errors: no handler, a handler that throws (its code kept), a timeout, a result off its schema", async () => {
    await expectBusError(a.request(b.processId, "nope", {}), "NO_HANDLER");
    b.handle("fails", z.unknown(), () => {
      throw Object.assign(new Error("character not here"), { code: "NOT_HOSTED" });
    });
    const e = await expectBusError(a.request(b.processId, "fails", {}), "REMOTE_ERROR");
    assert.equal(e.remoteCode, "NOT_HOSTED");
    assert.equal(e.message, "character not here");
    await expectBusError(a.request("no-such-process", "x", {}, { timeoutMs: 200 }), "TIMEOUT");
    b.handle("n", z.unknown(), () => 5);
    await expectBusError(a.request(b.processId, "n", {}, { result: z.string() }), "BAD_PAYLOAD");
  });

  it("close rejects pending requests and refuses new calls", async () => {
    b.handle("slow", z.unknown(), () => new Promise(() => undefined));
    const refused = expectBusError(a.request(b.processId, "slow", {}, { timeoutMs: 60_000 }), "CLOSED");
    await a.close();
    await refused;
    await expectBusError(a.publish("t", 1), "CLOSED");
    await expectBusError(a.request(b.processId, "slow", {}), "CLOSED");
  });
}

describe("cluster bus", function () {
  describe("on the local presence (one process)", () => {
    busContract(async () => {
      const presence = new LocalPresence();
      const a = new ClusterBus({ presence, processId: "pa", namespace: "test" });
      const b = new ClusterBus({ presence, processId: "pb", namespace: "test" });
      await a.start();
      await b.start();
      return { a, b, close: async () => presence.shutdown() };
    });
  });

  describe("on Redis presences (two processes)", function () {
    const url = useTestRedis(this, 14);
    busContract(async () => {
      const pa: Presence = new RedisPresence(new Redis(url));
      const pb: Presence = new RedisPresence(new Redis(url));
      const ns = `test:${Date.now()}`;
      const a = new ClusterBus({ presence: pa, processId: "pa", namespace: ns });
      const b = new ClusterBus({ presence: pb, processId: "pb", namespace: ns });
      await a.start();
      await b.start();
      return {
        a,
        b,
        close: async () => {
          pa.shutdown();
          pb.shutdown();
        },
      };
    });

    it("unsubscribes its Redis channels on close", async () => {
      const redis = new Redis(url);
      const presence = new RedisPresence(new Redis(url));
      const bus = new ClusterBus({ presence, processId: "px", namespace: "gone" });
      await bus.start();
      await bus.subscribe("t", z.unknown(), () => undefined);
      assert.deepEqual((await redis.pubsub("CHANNELS", "gone:*")).sort(), ["gone:rp:px", "gone:rq:px", "gone:t:t"]);
      await bus.close();
      assert.deepEqual(await redis.pubsub("CHANNELS", "gone:*"), []);
      presence.shutdown();
      redis.disconnect();
    });
  });
});
