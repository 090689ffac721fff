/**
 * `SocketGate`: who may open a game socket, for every WebSocket path (matchmaking and room sockets,
 * the `/ws` adapter, reconnection, the in-game `/admin` code): a token resolved to a principal, an
 * invalid one counted as an authentication attempt of the address (docs/protocol.md#authentication-attempts),
 * and the temporary blocks of flooding accounts and addresses (docs/protocol.md#limits).
 */
import { ServerError } from "@colyseus/core";
import type { AuthService, Principal } from "../auth/service.js";
import { TokenError } from "../auth/tokens.js";
import { addressKey, type Blocklist } from "../auth/address.js";

export interface SocketGateDeps {
  auth: Pick<AuthService, "anonymousMode" | "issueAnonymous" | "authenticate">;
  blocklist: Blocklist;
  /** How long a flooding account and address stay blocked (RATE_LIMIT_BLOCK_SECONDS). */
  blockSeconds: number;
  /**
   * Count an authentication attempt from an address against the HTTP authentication limit
   * (`Limits.countAuthAttempt`); true when the address is now over it. Absent: nothing is counted.
   */
  countAuthAttempt?: (address: string) => Promise<boolean>;
}

export class SocketGate {
  constructor(private readonly deps: SocketGateDeps) {}

  /**
   * Resolve a token to a principal for a WebSocket join from `address` (docs/http.md#authentication).
   * Returns undefined for a bad token, which counts as an authentication attempt of the address,
   * like on HTTP. In anonymous mode an empty token creates a temporary identity; creating one
   * counts as an attempt too (as `POST /api/auth/anonymous` does), and past the limit it is
   * refused with a 429 `ServerError` and nothing is created.
   */
  async authenticate(token: string | undefined, address?: string): Promise<Principal | undefined> {
    if (!token) {
      if (!this.deps.auth.anonymousMode) return undefined;
      if (await this.countAuthAttempt(address)) throw new ServerError(429, "too many authentication attempts; try again later");
      const issued = await this.deps.auth.issueAnonymous();
      return { accountId: issued.accountId, roles: [], anonymous: true, via: "server" };
    }
    try {
      return await this.deps.auth.authenticate(token);
    } catch (e) {
      if (!(e instanceof TokenError)) throw e;
      await this.countAuthAttempt(address);
      return undefined;
    }
  }

  /** Count one authentication attempt; true when the address is over the limit. */
  private async countAuthAttempt(address: string | undefined): Promise<boolean> {
    if (!address || !this.deps.countAuthAttempt) return false;
    return this.deps.countAuthAttempt(address);
  }

  /** Block a flooding account and address for the block period. */
  block(accountId: string, address: string | undefined) {
    this.deps.blocklist.block(`account:${accountId}`, this.deps.blockSeconds);
    if (address) this.deps.blocklist.block(addressKey(address), this.deps.blockSeconds);
  }

  /**
   * Seconds left on a block of the account or address (0 when neither is blocked): the one block
   * check of every WebSocket path (matchmaking, room upgrades, `/ws`, reconnection, `/admin`).
   */
  blockedFor(accountId?: string, address?: string): number {
    return Math.max(accountId ? this.deps.blocklist.retryAfter(`account:${accountId}`) : 0, address ? this.deps.blocklist.retryAfter(addressKey(address)) : 0);
  }
}
