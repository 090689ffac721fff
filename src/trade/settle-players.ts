/**
 * A trade's settlement, run for the two players in this world (docs/trading.md#settlement): in
 * both players' storage queues, with their items held, their pending progress saved first; the
 * transaction itself (`settleTrade`, settlement.ts) then decides, and both players' items and coins
 * follow what storage holds afterwards. The trade's session (session.ts) calls it once, and
 * `evictStale` after it has told the players how the trade ended.
 */
import type { CharacterRepository } from "../storage/characters/repository.js";
import type { ItemLookup } from "../domain/inventory.js";
import type { Trade } from "../domain/trade/trade.js";
import { TRADE_ERROR } from "../domain/trade/codes.js";
import type { Logger } from "../logger.js";
import type { Metrics } from "../metrics.js";
import { isLeaseLost } from "../storage/fence.js";
import type { Orm } from "../storage/orm.js";
import type { Player } from "../world/player.js";
import type { World } from "../world/world.js";
import { settleTrade, type SettlementResult } from "./settlement.js";

/** Close code of a connection whose player must reload from storage after a trade (see `evictStale`); not one of Colyseus's reconnect codes (4010 would make the SDK try to resume the stale connection). */
export const TRADE_RELOAD_CLOSE_CODE = 4012;

/** What settling a trade works with: the world of its players, storage, item definitions. */
export interface SettleDeps {
  world: World;
  orm: Orm;
  characters: CharacterRepository;
  items: ItemLookup;
  logger: Logger;
  /** Prometheus metrics (docs/operations.md "Metrics"). */
  metrics?: Metrics;
}

/** What `settleForPlayers` reports: the settlement's result and the players to evict after it. */
export interface SettleOutcome {
  result: SettlementResult;
  /** Players whose items in memory may differ from storage (the outcome is unknown, or a reload failed). */
  stale: readonly Player[];
}

/**
 * Settle in both players' storage queues: save their pending progress, run the transaction,
 * then replace both players' items and coins with what was committed (the holdings the
 * transaction wrote; after a failure, a reload from storage). Players whose items can't be
 * trusted afterwards are returned in `stale`, for the session to evict once it has told them.
 *
 * The Player objects are taken when the settlement is asked for: a player who leaves while it
 * runs is removed from the world at once, but the world saves that same object after this job
 * (its queue), so that object — and any newer one for the same character — must follow storage,
 * or the save would write the pre-trade items back.
 */
export async function settleForPlayers(deps: SettleDeps, trade: Trade, signal?: AbortSignal): Promise<SettleOutcome> {
  const world = deps.world;
  const ids = [trade.a.playerId, trade.b.playerId];
  const taken = ids.map((id) => world.player(id));
  const live = () => {
    const all = new Set<Player>();
    ids.forEach((id, i) => {
      const t = taken[i];
      const now = world.player(id);
      if (t) all.add(t);
      if (now) all.add(now);
    });
    return [...all];
  };
  /** Players whose items in memory may not be what storage holds (see `evictStale`). */
  const stale = new Set<Player>();
  // From now until both players follow storage, their items are held: locked now, and a player
  // who rejoins meanwhile (a new Player built from rows that may predate the settlement) is
  // locked too, so nothing it does (a bank deposit, kill coins) is planned from pre-trade items.
  const release = world.holdItems(ids);
  try {
    return { result: await settleHeld(deps, trade, ids, taken, live, stale, release, signal), stale: [...stale] };
  } finally {
    release();
  }
}

/** The settlement job of `settleForPlayers`, run while the players' items are held (`release` ends it). */
async function settleHeld(
  deps: SettleDeps,
  trade: Trade,
  ids: string[],
  taken: (Player | undefined)[],
  live: () => Player[],
  stale: Set<Player>,
  release: () => void,
  signal?: AbortSignal,
): Promise<SettlementResult> {
  const world = deps.world;
  return world.queues.runMany(ids, async (): Promise<SettlementResult> => {
    // Abandoned (shutdown) while waiting for the queues: nothing started, nothing to undo.
    if (signal?.aborted) {
      release();
      for (const q of live()) q.safety.unlock();
      return { ok: false, failure: "server_error", message: "The trade was cancelled by the server." };
    }
    for (const id of ids) {
      const p = world.player(id) ?? taken[ids.indexOf(id)];
      if (p && (p.itemsDirty || p.progressDirty)) {
        try {
          await world.saving.save(p);
        } catch (e) {
          // Its lease changed hands: dropped without writing (logged there), the trade fails.
          if (isLeaseLost(e)) world.dropLost(id, "a save before a settlement was refused by the lease fence", p.fence?.epoch);
          else deps.logger.error({ err: e, tradeId: trade.id, playerId: id }, "save before settlement failed");
          release();
          for (const q of live()) q.safety.unlock();
          return { ok: false, failure: "server_error", message: "The trade could not be completed." } as const;
        }
      }
    }
    const players = live();
    for (const p of players) p.safety.lock();
    try {
      const timer = deps.metrics?.settlementSeconds.startTimer();
      // Each side commits only under the lease its player was loaded under (docs/cluster.md "The fence").
      const fences = Object.fromEntries(ids.map((id, i) => [id, (world.player(id) ?? taken[i])?.fence]));
      const result = await settleTrade(deps.orm, trade, deps.items, signal, fences);
      timer?.({ result: result.ok ? "ok" : result.failure });
      if (result.ok) deps.metrics?.trades.inc({ outcome: "completed" });
      // Whatever happened, memory now follows storage. After a commit the settlement returns the
      // inventories and coins it wrote (the trade changes nothing else), so no reload is needed.
      if (result.ok) {
        for (const p of live()) {
          const held = result.holdings[p.id];
          if (!held) continue;
          p.inventory = held.inventory;
          p.coins = held.coins;
        }
        return result;
      }
      if (result.failure === "unknown") {
        // Storage could not say whether the trade committed: neither memory state can be trusted.
        for (const p of live()) stale.add(p);
        deps.logger.error({ tradeId: trade.id }, "trade outcome unknown; both players will reload from storage");
        return result;
      }
      const lost = new Set(result.lost);
      for (const id of lost) world.dropLost(id, "a settlement was refused by the lease fence", fences[id]?.epoch);
      for (const id of ids) {
        if (lost.has(id)) continue;
        try {
          const record = await deps.characters.load(id);
          if (!record) continue;
          for (const p of live()) if (p.id === id) p.loadItems(record, record.character.coins);
        } catch (e) {
          for (const p of live()) if (p.id === id) stale.add(p);
          deps.logger.error({ err: e, tradeId: trade.id, playerId: id }, "reload after a failed settlement failed; the player will reload from storage");
        }
      }
      return result;
    } finally {
      // Synchronously with the unlock: a player joining after this reads the committed rows.
      release();
      for (const p of new Set([...players, ...live()])) {
        if (stale.has(p)) p.safety.markStale();
        else p.safety.unlock();
      }
    }
  });
}

/**
 * Players whose items in memory may differ from storage (the outcome of their settlement is
 * unknown, or the reload after a failed one failed): their items stay locked and are never
 * written again (`itemsStale`), they are told, removed from the world (progress is saved, items
 * are not) and disconnected, so the next join loads them from what storage holds. The session
 * calls this after it has sent `tradeCancelled` (a removed player can't be sent anything).
 */
export function evictStale(deps: SettleDeps, trade: Trade, players: readonly Player[], result: SettlementResult): void {
  const message =
    !result.ok && result.failure === "unknown"
      ? "The trade's result could not be confirmed. Reconnect to see your items."
      : "Your items could not be reloaded after the trade. Reconnect to see them.";
  for (const p of players) {
    p.send("tradeError", { tradeId: trade.id, code: TRADE_ERROR.TRADE_FAILED, message });
    const connection = p.connection;
    void deps.world
      .leave(p.id, "trade_reload", undefined, true)
      .catch((e) => deps.logger.error({ err: e, playerId: p.id }, "leave after an unknown trade outcome failed"));
    connection?.close(TRADE_RELOAD_CLOSE_CODE, "reconnect to reload your items");
  }
}
