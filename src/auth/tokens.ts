/**
 * Token primitives (docs/http.md#authentication). Server tokens: HS256 JWTs signed with JWT_SECRET,
 * verification pinned to HS256 with `exp` required. Provider tokens: verified against the
 * identity provider's JWKS (issuer and audience checked) with `jose`.
 */
import { createSecretKey, randomUUID, type KeyObject } from "node:crypto";
import jwt from "jsonwebtoken";
import { createRemoteJWKSet, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from "jose";
import { z } from "zod";

/** Claims of a server token. */
export interface ServerClaims {
  sub: string;
  exp: number;
  iat: number;
  name?: string;
  roles?: string[];
  characterId?: string;
  anon?: true;
  jti?: string;
}

const claimsSchema = z.object({
  sub: z.string().min(1).max(128),
  exp: z.number().int(),
  iat: z.number().int(),
  name: z.string().max(64).optional(),
  roles: z.array(z.string().max(32)).max(16).optional(),
  characterId: z.string().min(1).max(128).optional(),
  anon: z.literal(true).optional(),
  jti: z.string().max(128).optional(),
});

export class TokenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TokenError";
  }
}

/**
 * The token of an `Authorization: Bearer <token>` header (the scheme in any case), if it holds one.
 * Every transport reads its header with this: REST, matchmaking and the `/ws` adapter.
 */
export function bearerToken(authorization: string | undefined): string | undefined {
  return authorization ? /^Bearer\s+(\S+)$/i.exec(authorization)?.[1] : undefined;
}

/** Sign a server token. `ttlSeconds` defaults to 24 hours. */
export function signServerToken(secret: string, claims: Omit<ServerClaims, "exp" | "iat">, ttlSeconds = 24 * 3600): { token: string; expiresAt: string } {
  const now = Math.floor(Date.now() / 1000);
  const payload = { ...claims, iat: now, exp: now + ttlSeconds };
  const token = jwt.sign(payload, secret, { algorithm: "HS256" });
  return { token, expiresAt: new Date(payload.exp * 1000).toISOString() };
}

/**
 * The secret as a key object, made once per secret: given the string, `jwt.verify` first tries it as
 * a public key (which throws) and then makes a secret key of it, at every call, which showed in the
 * profile of 2,000 clients joining at once.
 */
let secretKey: { secret: string; key: KeyObject } | undefined;
function keyOf(secret: string): KeyObject {
  if (secretKey?.secret !== secret) secretKey = { secret, key: createSecretKey(Buffer.from(secret, "utf8")) };
  return secretKey.key;
}

/**
 * Verify a server token. Rejects other algorithms (including `none`), bad signatures, expired
 * tokens and tokens without `exp`.
 * @throws TokenError
 */
export function verifyServerToken(secret: string, token: string): ServerClaims {
  let decoded: unknown;
  try {
    decoded = jwt.verify(token, keyOf(secret), { algorithms: ["HS256"] });
  } catch (e) {
    throw new TokenError((e as Error).message);
  }
  if (typeof decoded !== "object" || decoded === null || typeof (decoded as { exp?: unknown }).exp !== "number") {
    throw new TokenError("token has no exp claim");
  }
  const parsed = claimsSchema.safeParse(decoded);
  if (!parsed.success) throw new TokenError("token claims are malformed");
  return parsed.data as ServerClaims;
}

/** Is this compact JWT signed with HS256 (a server token) rather than by the provider? */
export function tokenAlgorithm(token: string): string | undefined {
  const decoded = jwt.decode(token, { complete: true });
  return decoded && typeof decoded === "object" ? decoded.header.alg : undefined;
}

/** Longest provider subject accepted (it is stored in a varchar(255) column). */
export const MAX_PROVIDER_SUBJECT_LENGTH = 255;
/** Longest display name kept from a provider token (server tokens carry at most this many characters). */
export const MAX_PROVIDER_NAME_LENGTH = 64;

/** Algorithms accepted for provider tokens (asymmetric only: never HS*, never `none`). */
export const PROVIDER_ALGORITHMS = ["RS256", "ES256", "EdDSA", "PS256"];

/** Verifies identity-provider access tokens against the provider's JWKS; issuer and audience always checked. */
export class ProviderVerifier {
  private readonly jwks: JWTVerifyGetKey;
  /**
   * @param jwks the provider's JWKS address, or a key resolver (tests use a local key set)
   * @param audience the application id (`PUBLIC_IDP_APP_ID`)
   * @param issuer the expected `iss` (`IDP_ISSUER`)
   */
  constructor(
    jwks: string | JWTVerifyGetKey,
    private readonly audience: string,
    private readonly issuer: string,
  ) {
    if (!audience || !issuer) throw new Error("provider verification needs an audience and an issuer");
    this.jwks = typeof jwks === "string" ? createRemoteJWKSet(new URL(jwks), { timeoutDuration: 3_000, cooldownDuration: 30_000 }) : jwks;
  }

  /** @returns the provider subject and display name. @throws TokenError */
  async verify(token: string): Promise<{ subject: string; name?: string }> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.jwks, {
        audience: this.audience,
        issuer: this.issuer,
        algorithms: PROVIDER_ALGORITHMS,
        requiredClaims: ["exp", "sub", "iss", "aud"],
      }));
    } catch (e) {
      throw new TokenError((e as Error).message);
    }
    const subject = payload.sub;
    // A subject that cannot be stored is not an identity this server can link: reject, don't fail.
    if (typeof subject !== "string" || subject.length === 0 || subject.length > MAX_PROVIDER_SUBJECT_LENGTH) {
      throw new TokenError("provider token subject is empty or too long");
    }
    // The display name is informational: keep a bounded, trimmed prefix.
    const name = typeof payload.name === "string" ? payload.name.trim().slice(0, MAX_PROVIDER_NAME_LENGTH) || undefined : undefined;
    return { subject, name };
  }
}

export const newId = () => randomUUID();
