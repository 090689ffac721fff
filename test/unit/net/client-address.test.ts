/**
 * `clientAddress`: one rule for the client address on every path (HTTP limits, matchmaking, /ws,
 * the flood block), keyed by `addressKey`. Table-driven, plus a check against what Express itself computes as `req.ip`
 * with the same trust setting, since the HTTP limits key on `req.ip`.
 */
import assert from "node:assert/strict";
import { createServer, request, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { addressKey, clientKey } from "../../../src/http/limits.js";
import { clientAddress, isLoopback } from "../../../src/auth/address.js";

const req = (remoteAddress: string | undefined, xff?: string | string[]) =>
  ({ socket: { remoteAddress }, headers: xff === undefined ? {} : { "x-forwarded-for": xff } }) as unknown as IncomingMessage;

describe("net/address clientAddress", () => {
  const cases: [string, IncomingMessage, boolean, string | undefined][] = [
    ["the socket address without a proxy", req("10.0.0.7"), false, "10.0.0.7"],
    ["X-Forwarded-For ignored without TRUST_PROXY", req("10.0.0.7", "203.0.113.9"), false, "10.0.0.7"],
    ["the proxy's entry with TRUST_PROXY", req("10.0.0.1", "203.0.113.9"), true, "203.0.113.9"],
    ["only the last entry: earlier ones were written by the client", req("10.0.0.1", "6.6.6.6, 203.0.113.9"), true, "203.0.113.9"],
    ["repeated headers count as one list", req("10.0.0.1", ["6.6.6.6", "203.0.113.9"]), true, "203.0.113.9"],
    ["the socket address when the proxy sent no header", req("10.0.0.1"), true, "10.0.0.1"],
    ["IPv6 unchanged", req("2001:db8::1"), false, "2001:db8::1"],
    ["no socket address", req(undefined), false, undefined],
  ];
  for (const [name, r, trust, expected] of cases) it(name, () => assert.equal(clientAddress(r, trust), expected));

  // The address is returned as given; its key (every limit and block keys by it) counts a mapped
  // address as the IPv4 address.
  const keyCases: [string, IncomingMessage, boolean, string][] = [
    ["IPv4-mapped IPv6 as plain IPv4", req("::ffff:127.0.0.1"), false, "127.0.0.1"],
    ["a mapped address in the header too", req("10.0.0.1", "::ffff:203.0.113.9"), true, "203.0.113.9"],
  ];
  for (const [name, r, trust, expected] of keyCases) it(name, () => assert.equal(addressKey(clientAddress(r, trust)), addressKey(expected)));

  for (const trust of [false, true]) {
    it(`gives the same rate-limit key as Express's req.ip (trust proxy ${trust ? "1" : "off"})`, async () => {
      const app = express();
      app.set("trust proxy", trust ? 1 : false);
      app.get("/", (r, res) => res.json({ express: clientKey(r), ours: addressKey(clientAddress(r, trust)) }));
      const server = createServer(app).listen(0, "127.0.0.1");
      await new Promise((r) => server.once("listening", r));
      const port = (server.address() as AddressInfo).port;
      try {
        for (const xff of [undefined, "203.0.113.9", "6.6.6.6, 203.0.113.9", "::ffff:198.51.100.4", "2001:db8::5"]) {
          const body = await new Promise<{ express: string; ours: string }>((resolve, reject) => {
            const r = request({ port, host: "127.0.0.1", path: "/", headers: xff ? { "x-forwarded-for": xff } : {} }, (res) => {
              let text = "";
              res.on("data", (d) => (text += d));
              res.on("end", () => resolve(JSON.parse(text)));
            });
            r.on("error", reject);
            r.end();
          });
          assert.equal(body.ours, body.express, `X-Forwarded-For: ${xff}`);
        }
      } finally {
        server.close();
      }
    });
  }
});

describe("net/address isLoopback", () => {
  it("is this machine for 127.0.0.0/8 and ::1, also IPv4-mapped; nothing else", () => {
    for (const a of ["127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1", "::FFFF:127.0.0.9"]) assert.equal(isLoopback(a), true, a);
    for (const a of [undefined, "", "10.0.0.1", "203.0.113.7", "::ffff:203.0.113.7", "::2", "1127.0.0.1", "127.0.0.1.evil", "fe80::1"])
      assert.equal(isLoopback(a), false, String(a));
  });
});
