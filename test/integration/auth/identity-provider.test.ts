import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createHmac } from "node:crypto";
import { exportJWK, exportPKCS8, exportSPKI, generateKeyPair, importPKCS8, SignJWT, type CryptoKey } from "jose";
import { startTestServer } from "../../helpers/server.js";
import type { GameServer } from "../../../src/server/server.js";

const ISSUER = "https://idp.test";
const AUDIENCE = "test-app-id";
const APP_SECRET = "provider-app-secret-0123456789";

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
/** A compact JWT signed with HMAC (`alg` HS256/HS384/HS512) by hand: any secret, even a PEM. */
function hmacToken(alg: "HS256" | "HS512", secret: string, payload: Record<string, unknown>): string {
  const input = `${b64({ alg, typ: "JWT" })}.${b64(payload)}`;
  const hash = alg === "HS256" ? "sha256" : "sha512";
  return `${input}.${createHmac(hash, secret).update(input).digest("base64url")}`;
}

describe("identity-provider mode", function () {
  let jwksServer: Server;
  let server: GameServer;
  let key: CryptoKey;
  let otherKey: CryptoKey;
  let publicPem: string;
  /** The same RSA private key, usable with RS512. */
  let sameKeyRs512: CryptoKey;

  before(async () => {
    const pair = await generateKeyPair("RS256", { extractable: true });
    key = pair.privateKey;
    otherKey = (await generateKeyPair("RS256")).privateKey;
    publicPem = await exportSPKI(pair.publicKey);
    sameKeyRs512 = await importPKCS8(await exportPKCS8(pair.privateKey), "RS512");
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
      IDP_APP_SECRET: APP_SECRET,
      DISABLE_RATE_LIMIT: "true",
    });
  });
  after(async () => {
    await server?.close();
    jwksServer?.close();
  });

  interface TokenOpts {
    sub?: string | null;
    aud?: string;
    iss?: string;
    exp?: string | number | null;
    name?: string;
    signer?: CryptoKey;
    alg?: string;
  }
  const providerToken = (opts: TokenOpts = {}) => {
    const jwt = new SignJWT({ name: opts.name ?? "Provider User" })
      .setProtectedHeader({ alg: opts.alg ?? "RS256", kid: "k1" })
      .setAudience(opts.aud ?? AUDIENCE)
      .setIssuer(opts.iss ?? ISSUER)
      .setIssuedAt();
    if (opts.sub !== null) jwt.setSubject(opts.sub ?? "did:provider:alice");
    if (opts.exp !== null) jwt.setExpirationTime(opts.exp ?? "10m");
    return jwt.sign(opts.signer ?? key);
  };
  /** Valid provider claims, for tokens built by hand. */
  const claims = () => ({
    sub: "did:provider:alice",
    aud: AUDIENCE,
    iss: ISSUER,
    iat: Math.floor(Date.now() / 1000),
    exp: Math.floor(Date.now() / 1000) + 600,
  });
  const exchange = (token: string) => fetch(`${server.url}/api/auth/exchange`, { method: "POST", headers: { authorization: `Bearer ${token}` } });
  const protectedGet = (token: string) => fetch(`${server.url}/api/v1/player`, { headers: { authorization: `Bearer ${token}` } });

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
    // No character yet: the route ran for an authenticated caller.
    const player = await protectedGet(await providerToken());
    assert.equal(player.status, 404);
  });

  it("keeps a long provider display name short enough for the server token it issues", async () => {
    const r = await exchange(await providerToken({ sub: "did:provider:long-name", name: "N".repeat(500) }));
    assert.equal(r.status, 200);
    const { token } = await r.json();
    const me = await fetch(`${server.url}/api/auth/session`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(me.status, 200);
  });

  const bad: [string, () => Promise<string>][] = [
    ["wrong audience", () => providerToken({ aud: "other-app" })],
    ["wrong issuer", () => providerToken({ iss: "https://evil.test" })],
    ["expired", () => providerToken({ exp: Math.floor(Date.now() / 1000) - 60 })],
    ["signed by another key", () => providerToken({ signer: otherKey })],
    ["no exp", () => providerToken({ exp: null })],
    ["no sub", () => providerToken({ sub: null })],
    ["a sub over 255 characters", () => providerToken({ sub: `did:provider:${"x".repeat(300)}` })],
    ["alg none", async () => `${b64({ alg: "none", typ: "JWT" })}.${b64(claims())}.`],
    [
      "a tampered payload",
      async () => {
        const [h, , sig] = (await providerToken()).split(".");
        return `${h}.${b64({ ...claims(), sub: "did:provider:mallory" })}.${sig}`;
      },
    ],
    ["RS512 (the key is published for RS256)", () => providerToken({ alg: "RS512", signer: sameKeyRs512 })],
    ["HS256 signed with the app secret, app id as audience", async () => hmacToken("HS256", APP_SECRET, claims())],
    ["HS256 signed with the provider's public key (key confusion)", async () => hmacToken("HS256", publicPem, claims())],
  ];
  for (const [name, make] of bad) {
    it(`rejects a provider token with ${name}: 401 on exchange and on a protected route`, async () => {
      const token = await make();
      for (const r of [await exchange(token), await protectedGet(token)]) {
        assert.equal(r.status, 401, r.url);
        assert.equal((await r.json()).error.code, "UNAUTHORIZED");
      }
    });
  }

  it("refuses anonymous accounts in this mode", async () => {
    const r = await fetch(`${server.url}/api/auth/anonymous`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    assert.equal(r.status, 403);
  });
});
