/**
 * The world's collaborators, bundled for the rooms and the `/ws` adapter: authentication, character
 * resolution, the event router, and flood blocking. Created once by the server.
 */
import type { CharacterRecord, CharacterRepository } from "../../entities/character-repository.js";
import type { AuthService, Principal } from "../auth/service.js";
import { TokenError } from "../auth/tokens.js";
import { TRADE_EVENTS, type ClientEventName } from "../events.js";
import { addressKey, type Blocklist } from "../lib/blocklist.js";
import type { Logger } from "../logger.js";
import type { Metrics } from "../metrics.js";
import { WORLD_EVENT_HANDLERS } from "./actions.js";
import { WorldError } from "./errors.js";
import type { Player } from "./player.js";
import { REFUSAL } from "./refusals.js";
import type { World } from "./world.js";

/**
 * Creates a character for an account that joins without one (starter kit and defaults), named
 * after `preferredName` when that is a valid free name.
 */
export type CharacterFactory = (accountId: string, preferredName: string | undefined) => Promise<{ id: string }>;

/** Handles trade events (the trade system plugs in here). */
export interface TradeEventHandler {
  handle(player: Player, event: ClientEventName, payload: unknown): Promise<void> | void;
}

export interface WorldRuntimeDeps {
  world: World;
  auth: AuthService;
  characters: CharacterRepository;
  createCharacter: CharacterFactory;
  blocklist: Blocklist;
  blockSeconds: number;
  /**
   * Count an authentication attempt from an address against the HTTP authentication limit
   * (`Limits.countAuthAttempt`); true when the address is now over it. Absent: nothing is counted.
   */
  countAuthAttempt?: (address: string) => Promise<boolean>;
  tickMs: number;
  logger: Logger;
  /** Prometheus metrics (README "Metrics"). */
  metrics?: Metrics;
}

export class WorldRuntime {
  readonly world: World;
  readonly characters: CharacterRepository;
  readonly tickMs: number;
  readonly logger: Logger;
  readonly metrics: Metrics | undefined;
  trade: TradeEventHandler | undefined;

  constructor(private readonly deps: WorldRuntimeDeps) {
    this.world = deps.world;
    this.characters = deps.characters;
    this.tickMs = deps.tickMs;
    this.logger = deps.logger;
    this.metrics = deps.metrics;
  }

  /**
   * Resolve a token to a principal for a WebSocket join from `address` (docs/http.md#authentication).
   * Returns undefined for a bad token, which counts as an authentication attempt of the address,
   * like on HTTP. In anonymous mode an empty token creates a temporary identity; creating one
   * counts as an attempt too (as `POST /api/auth/anonymous` does), and past the limit it is
   * refused (`WorldError` RATE_LIMITED, 429) and nothing is created.
   */
  async authenticate(token: string | undefined, address?: string): Promise<Principal | undefined> {
    if (!token) {
      if (!this.deps.auth.anonymousMode) return undefined;
      if (await this.countAuthAttempt(address)) throw new WorldError("RATE_LIMITED", "too many authentication attempts; try again later");
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

  /**
   * Which character a join plays — the one its token is bound to, the one requested (it must belong
   * to the account), the account's first, or a new one with the starter kit — and its record, read
   * inside the character's storage queue after every write already queued for it (a leave's save, a
   * death, a settlement), so a player is never built from rows read before those landed. An open
   * death lock is recovered there first. `enter` (the join) runs in the same queue job with the
   * record: nothing queued after the read (a save, an agent flag change, a rename) can come between
   * the read and the join.
   * @throws WorldError CHARACTER_NOT_FOUND (404), CHARACTER_FORBIDDEN (403: another account's, or the
   * token is bound to another character), CHARACTER_BUSY (409: an out-of-world change of the
   * character is queued or running).
   */
  async resolveCharacter<T = CharacterRecord>(
    principal: Principal,
    requested: string | undefined,
    enter: (record: CharacterRecord) => T = (record) => record as T,
  ): Promise<T> {
    let id = principal.characterId ?? requested;
    if (principal.characterId && requested && requested !== principal.characterId) {
      throw new WorldError("CHARACTER_FORBIDDEN", "this token is bound to another character");
    }
    if (!id) {
      const mine = await this.characters.listByAccount(principal.accountId);
      id = mine[0]?.id ?? (await this.deps.createCharacter(principal.accountId, principal.name)).id;
    }
    const characterId = id;
    // Refused at once rather than queued behind the change (which may take a while).
    this.world.assertMayJoin(characterId);
    // Refusals come back as values: a thrown one would be logged as a failed storage job.
    const entered = await this.world.queues.run(characterId, async (): Promise<{ value: T } | WorldError> => {
      const record = await this.characters.load(characterId);
      if (!record) return new WorldError("CHARACTER_NOT_FOUND", "no such character");
      if (record.character.accountId !== principal.accountId) return new WorldError("CHARACTER_FORBIDDEN", "that character belongs to another account");
      try {
        return { value: enter((await this.recoverDeath(characterId)) ?? record) };
      } catch (e) {
        if (e instanceof WorldError) return e;
        throw e;
      }
    });
    if (entered instanceof WorldError) throw entered;
    return entered.value;
  }

  /**
   * A death lock left open (the process ended, or could not resolve it, before the dropped items
   * went on the ground) gives those items to the bank. Only for a character that is not live in
   * this world — a live one's death is still being resolved by the world. What the bank can't hold
   * (past the stack cap) is put on the ground where the player died, owned by it. Runs inside the
   * character's storage queue (`resolveCharacter`). Returns the reloaded record when something was
   * restored.
   */
  private async recoverDeath(characterId: string): Promise<CharacterRecord | undefined> {
    if (this.world.player(characterId)) return undefined;
    const recovered = await this.characters.recoverOpenDeath(characterId);
    // What the bank could not hold (past the stack cap) goes where the player died, as it would have.
    for (const o of recovered.overflow) this.world.ground.drop(o.itemId, o.quantity, recovered.at.x, recovered.at.z, characterId);
    if (recovered.restored === 0) return undefined;
    return (await this.characters.load(characterId)) ?? undefined;
  }

  /**
   * Route a validated event to its handler. A dead player (its death is being written) does
   * nothing: every event is refused with the code `PLAYER_DEAD` — a system `chat:message`, or a
   * `tradeError` for trade events — and changes nothing (README "Refusal codes").
   */
  async handle(player: Player, event: ClientEventName, payload: unknown): Promise<void> {
    const w = this.world;
    if (player.dead) {
      if ((TRADE_EVENTS as readonly string[]).includes(event)) return player.send("tradeError", { code: REFUSAL.PLAYER_DEAD, message: "You are dead." });
      return w.refuse(player, REFUSAL.PLAYER_DEAD, "You are dead.");
    }
    const handler = WORLD_EVENT_HANDLERS[event] as ((w: World, p: Player, payload: unknown) => unknown) | undefined;
    if (handler) return void (await handler(w, player, payload));
    if (this.trade) return this.trade.handle(player, event, payload);
    player.send("tradeError", { code: "TRADE_FAILED", message: "Trading is not available." });
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
    return Math.max(
      accountId ? this.deps.blocklist.retryAfter(`account:${accountId}`) : 0,
      address ? this.deps.blocklist.retryAfter(addressKey(address)) : 0,
    );
  }
}
