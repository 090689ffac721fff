/**
 * The order a tick's patches leave in (rooms/world/send-order.ts): each broadcast starts at another
 * client, and every client's place spreads evenly over the ticks.
 */
import assert from "node:assert/strict";
import { ClientArray, type Client } from "@colyseus/core";
import { SendOrder } from "../../../rooms/world/send-order.js";

describe("world room: the order the tick's patches leave in", () => {
  for (const n of [0, 1, 2, 3, 10, 101, 2000])
    it(`${n} clients: every tick a rotation of the same clients; each served first as often as the others, and midway on average`, () => {
      const order = new SendOrder();
      const clients = Array.from({ length: n }, (_, i) => i);
      const sum = new Array<number>(n).fill(0);
      const ticks = 200;
      const first = new Array<number>(n).fill(0);
      for (let t = 0; t < ticks; t++) {
        order.rotate(clients);
        assert.equal(clients.length, n);
        // Still the same clients, in the same cyclic order.
        for (let i = 0; i < n; i++) assert.equal(clients[(i + 1) % n], (clients[i]! + 1) % n, `tick ${t}`);
        clients.forEach((c, place) => (sum[c]! += place));
        // Colyseus serves the last in the list first.
        if (n > 0) first[clients.at(-1)!]!++;
      }
      // Each client is served first about as often as any other (n ≤ 200 here: over 200 ticks).
      if (n >= 2 && n <= 200)
        for (let c = 0; c < n; c++)
          assert.ok(Math.abs(first[c]! - ticks / n) <= Math.max(2, ticks / n / 2), `client ${c}: first ${first[c]} times of ${ticks}`);
      // Each client's average place is about the middle: none is always served late.
      if (n >= 10)
        for (let c = 0; c < n; c++) assert.ok(Math.abs(sum[c]! / ticks - (n - 1) / 2) < n * 0.05, `client ${c}: average place ${sum[c]! / ticks} of ${n}`);
    });

  it("Colyseus's client list keeps finding every client by session id", () => {
    const clients = new ClientArray();
    for (let i = 0; i < 50; i++) clients.push({ sessionId: `s${i}` } as Client);
    const order = new SendOrder();
    for (let t = 0; t < 7; t++) order.rotate(clients);
    assert.equal(clients.length, 50);
    for (let i = 0; i < 50; i++) assert.equal(clients.get(`s${i}`)?.sessionId, `s${i}`);
  });
});
