/**
 * Tokens for load-test bots (docs/benchmarks.md "Load testing with @colyseus/loadtest"), minted with the
 * server's JWT_SECRET instead of asking the server for them: `POST /api/auth/anonymous` counts as
 * an authentication attempt (10 a minute per address), so 100 bots from one machine would be
 * blocked. A valid server token creates its account on first use.
 *
 * Bot `n` is the account `<prefix>-<n>` with the name `bot<n>`, so a second run reuses the same
 * accounts and characters instead of creating new ones. Two runs at once need different prefixes
 * (an account plays from one connection at a time).
 *
 * `mint-tokens.ts` prints them; `world.ts` mints its own when it is given the secret.
 */
import { signServerToken } from "../../src/auth/tokens.js";

export interface BotTokenOptions {
  /** Account id prefix; bot n is `<prefix>-<n>`. */
  prefix?: string;
  /** Token lifetime. Default 6 hours. */
  ttlSeconds?: number;
}

/** The account id and name of bot `n`. */
export function botIdentity(n: number, prefix = "loadtest"): { sub: string; name: string } {
  return { sub: `${prefix}-${n}`, name: `bot${n}` };
}

/** A server token for bot `n` (no roles: a plain player). */
export function botToken(secret: string, n: number, opts: BotTokenOptions = {}): string {
  return signServerToken(secret, botIdentity(n, opts.prefix), opts.ttlSeconds ?? 6 * 3600).token;
}

/** Tokens for bots `0 .. count - 1`. */
export function botTokens(secret: string, count: number, opts: BotTokenOptions = {}): string[] {
  return Array.from({ length: count }, (_, n) => botToken(secret, n, opts));
}
