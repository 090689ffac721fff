/**
 * Resolves bearer tokens into principals and issues server tokens (docs/http.md#authentication).
 * Accounts are created on first use of a valid server token, and linked on provider exchange.
 */
import { timingSafeEqual, createHash } from "node:crypto";
import { insertAccount } from "../storage/accounts.js";
import type { Orm } from "../storage/orm.js";
import { AccountEntity, AgentMappingEntity } from "../../entities/index.js";
import type { Config } from "../config.js";
import { isLoopback } from "./address.js";
import { newId, ProviderVerifier, signServerToken, tokenAlgorithm, TokenError, verifyServerToken } from "./tokens.js";

/** Who is calling. */
export interface Principal {
  accountId: string;
  roles: string[];
  /** Set when the token is bound to one character (agent tokens). */
  characterId?: string;
  anonymous: boolean;
  name?: string;
  via: "server" | "provider";
}

export interface IssuedToken {
  token: string;
  accountId: string;
  expiresAt: string;
}

/** Constant-time comparison of two secrets of any length. */
export function secretEquals(a: string, b: string): boolean {
  const ha = createHash("sha256").update(a).digest();
  const hb = createHash("sha256").update(b).digest();
  return timingSafeEqual(ha, hb);
}

export class AuthService {
  private readonly provider?: ProviderVerifier;
  /** Accounts known to exist, so a hot path does not insert-or-select on every request. */
  private readonly knownAccounts = new Set<string>();

  constructor(
    private readonly config: Config,
    private readonly orm: Orm,
  ) {
    if (config.idp) {
      this.provider = new ProviderVerifier(config.idp.jwksUrl, config.idp.appId, config.idp.issuer);
    }
  }

  /** Anonymous mode: no identity provider configured. */
  get anonymousMode(): boolean {
    return !this.config.idp;
  }

  /**
   * Verify a token (server token, or provider token in provider mode) and resolve its account.
   * @throws TokenError when the token is invalid, expired, revoked or of an unknown kind.
   */
  async authenticate(token: string): Promise<Principal> {
    if (!token || token.length > 8192) throw new TokenError("token missing or too long");
    const alg = tokenAlgorithm(token);
    if (alg === "HS256") {
      const claims = verifyServerToken(this.config.jwtSecret, token);
      if (claims.jti && claims.characterId) await this.assertAgentTokenLive(claims.characterId, claims.jti);
      await this.ensureAccount(claims.sub, { anonymous: claims.anon === true, name: claims.name });
      return {
        accountId: claims.sub,
        roles: claims.roles ?? [],
        characterId: claims.characterId,
        anonymous: claims.anon === true,
        name: claims.name,
        via: "server",
      };
    }
    if (this.provider && alg) {
      const { subject, name } = await this.provider.verify(token);
      const accountId = await this.linkProviderSubject(subject, name);
      return { accountId, roles: [], anonymous: false, name, via: "provider" };
    }
    throw new TokenError("unsupported token");
  }

  /** Create a temporary anonymous account and its token. */
  async issueAnonymous(name?: string): Promise<IssuedToken> {
    const accountId = `anon-${newId()}`;
    await this.ensureAccount(accountId, { anonymous: true, name });
    const { token, expiresAt } = signServerToken(this.config.jwtSecret, { sub: accountId, anon: true, name });
    return { token, accountId, expiresAt };
  }

  /** Exchange a verified provider token for a server token bound to the linked account. */
  async exchange(providerToken: string): Promise<IssuedToken> {
    if (!this.provider) throw new TokenError("no identity provider configured");
    const { subject, name } = await this.provider.verify(providerToken);
    const accountId = await this.linkProviderSubject(subject, name);
    const { token, expiresAt } = signServerToken(this.config.jwtSecret, { sub: accountId, name });
    return { token, accountId, expiresAt };
  }

  /** Sign a server token for an account (used for agent credentials). */
  sign(claims: Parameters<typeof signServerToken>[1], ttlSeconds?: number) {
    return signServerToken(this.config.jwtSecret, claims, ttlSeconds);
  }

  /**
   * Admin: role in a server token, or the admin code presented from `address` (the client address,
   * see `clientAddress`).
   */
  isAdmin(principal: Principal | undefined, adminCodeHeader: string | undefined, address: string | undefined): boolean {
    if (adminCodeHeader !== undefined && this.checkAdminCode(adminCodeHeader, address)) return true;
    return principal?.via === "server" && principal.roles.includes("admin");
  }

  /**
   * Check an admin code (in-game `/admin <code>`, `X-Admin-Code`) presented from `address`. The
   * development code of a server without ADMIN_CODE is accepted only from a loopback address.
   */
  checkAdminCode(code: string, address: string | undefined): boolean {
    const matches = secretEquals(code, this.config.adminCode);
    return matches && (!this.config.adminCodeLoopbackOnly || isLoopback(address));
  }

  private async assertAgentTokenLive(characterId: string, jti: string): Promise<void> {
    const em = this.orm.em.fork();
    const mapping = await em.findOne(AgentMappingEntity, { characterId });
    if (!mapping || mapping.revokedAt || mapping.tokenId !== jti) throw new TokenError("agent token revoked");
  }

  private async ensureAccount(accountId: string, init: { anonymous: boolean; name?: string }): Promise<void> {
    if (this.knownAccounts.has(accountId)) return;
    await insertAccount(this.orm.em.fork(), { id: accountId, anonymous: init.anonymous, displayName: init.name ?? null }, "id");
    this.rememberAccount(accountId);
  }

  private async linkProviderSubject(subject: string, name?: string): Promise<string> {
    const em = this.orm.em.fork();
    const existing = await em.findOne(AccountEntity, { idpSubject: subject });
    if (existing) {
      this.rememberAccount(existing.id);
      return existing.id;
    }
    const id = newId();
    await insertAccount(em, { id, idpSubject: subject, anonymous: false, displayName: name ?? null }, "idpSubject");
    const linked = await em.fork().findOneOrFail(AccountEntity, { idpSubject: subject });
    this.rememberAccount(linked.id);
    return linked.id;
  }

  private rememberAccount(id: string) {
    if (this.knownAccounts.size > 50_000) this.knownAccounts.clear();
    this.knownAccounts.add(id);
  }
}
