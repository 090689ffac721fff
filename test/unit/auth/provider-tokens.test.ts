import assert from "node:assert/strict";
import { createLocalJWKSet, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from "jose";
import { MAX_PROVIDER_NAME_LENGTH, ProviderVerifier, TokenError } from "../../../src/auth/tokens.js";

const ISSUER = "https://idp.unit.test";
const AUDIENCE = "unit-app-id";

describe("provider tokens", () => {
  let key: CryptoKey;
  let verifier: ProviderVerifier;

  before(async () => {
    const pair = await generateKeyPair("RS256");
    key = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "RS256", use: "sig" };
    verifier = new ProviderVerifier(createLocalJWKSet({ keys: [jwk] }), AUDIENCE, ISSUER);
  });

  const sign = (claims: JWTPayload, opts: { iss?: string | null; exp?: number | null } = {}) => {
    const jwt = new SignJWT({ sub: "did:unit:alice", aud: AUDIENCE, ...claims }).setProtectedHeader({ alg: "RS256", kid: "k1" }).setIssuedAt();
    if (opts.iss !== null) jwt.setIssuer(opts.iss ?? ISSUER);
    if (opts.exp !== null) jwt.setExpirationTime(opts.exp ?? "5m");
    return jwt.sign(key);
  };

  it("accepts a token with the right issuer and audience", async () => {
    const r = await verifier.verify(await sign({ name: "Alice" }));
    assert.deepEqual(r, { subject: "did:unit:alice", name: "Alice" });
  });

  it("always checks the issuer: wrong or missing iss is rejected", async () => {
    await assert.rejects(verifier.verify(await sign({}, { iss: "https://other.test" })), TokenError);
    await assert.rejects(verifier.verify(await sign({}, { iss: null })), TokenError);
  });

  it("cannot be built without an issuer or an audience", () => {
    assert.throws(() => new ProviderVerifier(createLocalJWKSet({ keys: [] }), AUDIENCE, ""));
    assert.throws(() => new ProviderVerifier(createLocalJWKSet({ keys: [] }), "", ISSUER));
  });

  it("rejects a wrong audience, a missing exp and a missing sub", async () => {
    await assert.rejects(verifier.verify(await sign({ aud: "another-app" })), TokenError);
    await assert.rejects(verifier.verify(await sign({}, { exp: null })), TokenError);
    await assert.rejects(verifier.verify(await sign({ sub: undefined })), TokenError);
  });

  it("rejects a subject that cannot be stored (over 255 characters) as an invalid token", async () => {
    await assert.rejects(verifier.verify(await sign({ sub: "s".repeat(256) })), TokenError);
    const ok = await verifier.verify(await sign({ sub: "s".repeat(255) }));
    assert.equal(ok.subject.length, 255);
  });

  it("keeps a bounded display name", async () => {
    const r = await verifier.verify(await sign({ name: "n".repeat(1000) }));
    assert.equal(r.name, "n".repeat(MAX_PROVIDER_NAME_LENGTH));
    assert.equal((await verifier.verify(await sign({ name: 5 }))).name, undefined);
  });
});
