import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from "jose";
import { startTestServer } from "../helpers/server.js";
import type { GameServer } from "../../src/server.js";

const ISSUER = "https://idp.test";
const AUDIENCE = "test-app-id";

describe("identity-provider mode", function () {
  let jwksServer: Server;
  let server: GameServer;
  let key: CryptoKey;
  let otherKey: CryptoKey;

  before(async () => {
    const pair = await generateKeyPair("RS256");
    key = pair.privateKey;
    otherKey = (await generateKeyPair("RS256")).privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "RS256", use: "sig" };
    jwksServer = createServer((req, res) => {
      if (req.url === "/.well-known/jwks.json") {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ keys: [jwk] }));
      } else {
        res.statusCode = 404;
        res.end();
      }
    });
    await new Promise<void>((r) => jwksServer.listen(0, "127.0.0.1", r));
    const jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/.well-known/jwks.json`;
    server = await startTestServer({
      PUBLIC_IDP_APP_ID: AUDIENCE,
      IDP_JWKS_URL: jwksUrl,
      IDP_ISSUER: ISSUER,
      DISABLE_RATE_LIMIT: "true",
    });
  });
  after(async () => {
    await server?.close();
    jwksServer?.close();
  });

  const providerToken = (opts: { sub?: string; aud?: string; iss?: string; exp?: string | number; signer?: CryptoKey } = {}) => {
    const jwt = new SignJWT({ name: "Provider User" })
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setSubject(opts.sub ?? "did:provider:alice")
      .setAudience(opts.aud ?? AUDIENCE)
      .setIssuer(opts.iss ?? ISSUER)
      .setIssuedAt();
    if (opts.exp !== undefined) jwt.setExpirationTime(opts.exp);
    else jwt.setExpirationTime("10m");
    return jwt.sign(opts.signer ?? key);
  };
  const exchange = (token: string) =>
    fetch(`${server.url}/api/auth/exchange`, { method: "POST", headers: { authorization: `Bearer ${token}` } });

  it("exchanges a provider token for a server token, linking one account per subject", async () => {
    const r1 = await exchange(await providerToken());
    assert.equal(r1.status, 200);
    const a = await r1.json();
    const r2 = await exchange(await providerToken());
    const b = await r2.json();
    assert.equal(a.accountId, b.accountId);
    const me = await fetch(`${server.url}/api/auth/session`, { headers: { authorization: `Bearer ${a.token}` } });
    assert.equal((await me.json()).accountId, a.accountId);
  });

  it("accepts a provider token directly on protected routes", async () => {
    const me = await fetch(`${server.url}/api/auth/session`, { headers: { authorization: `Bearer ${await providerToken()}` } });
    assert.equal(me.status, 200);
  });

  const bad: [string, () => Promise<string>][] = [
    ["wrong audience", () => providerToken({ aud: "other-app" })],
    ["wrong issuer", () => providerToken({ iss: "https://evil.test" })],
    ["expired", () => providerToken({ exp: Math.floor(Date.now() / 1000) - 60 })],
    ["signed by another key", () => providerToken({ signer: otherKey })],
  ];
  for (const [name, make] of bad) {
    it(`rejects a provider token with ${name}`, async () => {
      const r = await exchange(await make());
      assert.equal(r.status, 401);
      assert.equal((await r.json()).error.code, "UNAUTHORIZED");
    });
  }

  it("refuses anonymous accounts in this mode", async () => {
    const r = await fetch(`${server.url}/api/auth/anonymous`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    assert.equal(r.status, 403);
  });
});
