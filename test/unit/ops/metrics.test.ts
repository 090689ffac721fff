/**
 * src/metrics.ts: messages in and out are counted by event (names outside the protocol as `unknown`
 * in, `other` out) and reach `realm_messages_in_total` / `realm_messages_out_total` when the
 * registry is read; reading again adds nothing twice, and an event never seen has no series
 * (docs/operations.md "Metrics").
 */
import assert from "node:assert/strict";
import { Metrics } from "../../../src/metrics.js";

async function values(m: Metrics, name: string): Promise<Record<string, number>> {
  const metric = m.registry.getSingleMetric(name);
  assert.ok(metric, name);
  const { values } = await metric.get();
  return Object.fromEntries(values.map((v) => [String(v.labels.event), v.value]));
}

describe("src/metrics (messages by event)", () => {
  it("counts messages in and out by event, unknown names under one label, each read adding only what is new", async () => {
    const m = new Metrics(600);
    assert.deepEqual(await values(m, "realm_messages_in_total"), {});
    for (let i = 0; i < 3; i++) m.messageIn("player:move");
    m.messageIn("tradeAccept");
    m.messageIn("no-such-event");
    m.messageIn("constructor");
    m.messageIn("unknown");
    m.messageOut("player:sync");
    m.messageOut("made-up");
    assert.deepEqual(await values(m, "realm_messages_in_total"), { "player:move": 3, tradeAccept: 1, unknown: 3 });
    assert.deepEqual(await values(m, "realm_messages_out_total"), { "player:sync": 1, other: 1 });
    assert.deepEqual(await values(m, "realm_messages_in_total"), { "player:move": 3, tradeAccept: 1, unknown: 3 }, "read again: the same");
    m.messageIn("player:move");
    assert.match(await m.text(), /^realm_messages_in_total\{event="player:move"\} 4$/m);
  });
});
