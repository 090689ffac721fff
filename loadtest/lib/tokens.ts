/**
 * The secrets every server a load script starts runs with, and the tokens its bots carry. A load
 * server is a development server on 127.0.0.1 started for one run, so one well-known pair serves all
 * of them; the bots mint server tokens with it instead of asking the server (`POST
 * /api/auth/anonymous` counts as an authentication attempt, 10 a minute per address). Tests mint
 * theirs with `serverToken` and their own secret (test/helpers/server.ts TEST_ENV).
 */
import { randomUUID } from "node:crypto";
import { signServerToken } from "../../src/auth/tokens.js";

/** JWT_SECRET of every server a load script starts. */
export const LOAD_JWT_SECRET = "load-secret-0123456789-abcdefghijklmnop";
/** ADMIN_CODE of every server a load script starts (bots enter admin mode with `/admin <code>`). */
export const LOAD_ADMIN_CODE = "load-admin-code-0123456789";

/** The two secrets as server settings. */
export const LOAD_SECRETS = { JWT_SECRET: LOAD_JWT_SECRET, ADMIN_CODE: LOAD_ADMIN_CODE } as const;

export interface TokenClaims {
  characterId?: string;
  roles?: string[];
  name?: string;
}

/**
 * A server token for `accountId` (a fresh one by default) signed with `secret`: the account is made
 * on first use. Returns both, as a client harness needs the account id beside its token.
 */
export function serverToken(secret: string, accountId: string = randomUUID(), claims: TokenClaims = {}): { accountId: string; token: string } {
  return { accountId, token: signServerToken(secret, { sub: accountId, ...claims }).token };
}

/** A token of the load servers (`LOAD_JWT_SECRET`) for `accountId`. */
export const loadToken = (accountId: string = randomUUID(), claims: TokenClaims = {}) => serverToken(LOAD_JWT_SECRET, accountId, claims).token;
