import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import jwt from "jsonwebtoken";
import { signServerToken, verifyServerToken, TokenError } from "../../../src/auth/tokens.js";

const SECRET = "unit-test-secret-0123456789-abcdef";
const now = () => Math.floor(Date.now() / 1000);

describe("server tokens", () => {
  it("round-trips claims", () => {
    const { token } = signServerToken(SECRET, { sub: "acc-1", roles: ["admin"], characterId: "c1", name: "Ann" });
    const c = verifyServerToken(SECRET, token);
    assert.equal(c.sub, "acc-1");
    assert.deepEqual(c.roles, ["admin"]);
    assert.equal(c.characterId, "c1");
    assert.ok(c.exp > now());
  });

  const rejects: [string, () => string][] = [
    ["alg none", () => jwt.sign({ sub: "a", exp: now() + 60 }, "", { algorithm: "none" })],
    ["HS512", () => jwt.sign({ sub: "a", exp: now() + 60 }, SECRET, { algorithm: "HS512" })],
    [
      "RS256",
      () => {
        const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
        return jwt.sign({ sub: "a", exp: now() + 60 }, privateKey, { algorithm: "RS256" });
      },
    ],
    ["expired", () => jwt.sign({ sub: "a", exp: now() - 10 }, SECRET, { algorithm: "HS256" })],
    ["missing exp", () => jwt.sign({ sub: "a" }, SECRET, { algorithm: "HS256" })],
    ["wrong secret", () => jwt.sign({ sub: "a", exp: now() + 60 }, "another-secret-0123456789", { algorithm: "HS256" })],
    [
      "tampered payload",
      () => {
        const t = jwt.sign({ sub: "a", exp: now() + 60 }, SECRET, { algorithm: "HS256" });
        const [h, , s] = t.split(".");
        const p = Buffer.from(JSON.stringify({ sub: "admin", exp: now() + 60, roles: ["admin"] })).toString("base64url");
        return `${h}.${p}.${s}`;
      },
    ],
    ["malformed claims", () => jwt.sign({ sub: 5, exp: now() + 60 }, SECRET, { algorithm: "HS256" })],
    ["garbage", () => "not.a.token"],
  ];
  for (const [name, make] of rejects) {
    it(`rejects ${name}`, () => {
      assert.throws(() => verifyServerToken(SECRET, make()), TokenError);
    });
  }
});
