/**
 * Trade test helpers: opening a trade over the socket, admin set-up commands that wait for their
 * effect, waiting for a trade room to be gone (so nothing late can still be sent), counting events
 * after the fact, and the storage invariants (totals of every item id and of coins, slot and stack
 * bounds, audit records) computed in SQL.
 */
import assert from "node:assert/strict";
import { matchMaker } from "@colyseus/core";
import { CharacterRepository } from "../../src/storage/characters/repository.js";
import { type TradeContext, type TradeHoldings, type Trade } from "../../src/domain/trade/trade.js";
import { acceptTrade, createTrade, respondToRequest, setOfferCoins, setOfferItem } from "../../src/domain/trade/transitions.js";
import { inventoryFromSlots, type ItemLookup } from "../../src/domain/inventory.js";
import { MAX_STACK } from "../../src/domain/types.js";
import type { Tile } from "../../src/domain/types.js";
import type { Orm, Storage } from "../../src/storage/orm.js";
import type { GameServer } from "../../src/server/server.js";
import { jsonPlayer, sdkPlayer, type TestPlayer } from "./clients.js";
import { startTestServer } from "./server.js";
import { resetStorage } from "./storage.js";

export const ADMIN_CODE = "test-admin-code";

/** Poll `check` until it returns a truthy value (waiting on a condition, never on a guessed time). */
export async function until<T>(check: () => T | Promise<T>, what: string, timeoutMs = 10_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Open a trade between a and b; both on the offer screen. Returns its id and room id. */
export async function openTrade(a: TestPlayer, b: TestPlayer): Promise<{ tradeId: string; roomId: string }> {
  const ma = a.mark();
  const mb = b.mark();
  a.send("tradeRequest", { targetPlayerId: b.id });
  const incoming = await b.next("tradeIncoming", (d) => d.fromPlayerId === a.id, { after: mb });
  b.send("tradeRequestRespond", { tradeId: incoming.tradeId, accept: true });
  const started = await a.next("tradeStarted", (d) => d.tradeId === incoming.tradeId, { after: ma });
  await b.next("tradeStarted", (d) => d.tradeId === incoming.tradeId, { after: mb });
  return { tradeId: incoming.tradeId, roomId: started.roomId };
}

/**
 * A (SDK) offers its bronze axe and B (plain WebSocket) 10 coins: resolves with both on the offer
 * screen at that revision, and the storage totals of both players from before the trade. The
 * players are added to `players` so the caller's cleanup closes them.
 */
export async function axeForCoins(server: GameServer, players: TestPlayer[]) {
  const a = await sdkPlayer(server);
  const b = await jsonPlayer(server);
  players.push(a, b);
  const ids = [a.id, b.id];
  const before = await totals(server.storage.orm, ids);
  const { tradeId, roomId } = await openTrade(a, b);
  const revision = await offerAxeForCoins(a, b, tradeId);
  return { a, b, ids, before, tradeId, roomId, revision };
}

/** In an open trade, A offers its bronze axe and B 10 coins; resolves with the revision both have seen. */
export async function offerAxeForCoins(a: TestPlayer, b: TestPlayer, tradeId: string): Promise<number> {
  const m = a.mark();
  a.send("tradeAddItem", { tradeId, inventorySlot: slotOf(a, "bronze_axe"), quantity: 1 });
  b.send("tradeAddItem", { tradeId, coins: 10 });
  const upd = await a.next("tradeUpdated", (d) => d.myOffer.items.length === 1 && d.theirOffer.coins === 10, { after: m });
  await b.next("tradeUpdated", (d) => d.revision === upd.revision);
  return upd.revision;
}

/** Both accept on the offer screen at `revision`; resolves with the confirmation screen's revision. */
export async function toConfirm(a: TestPlayer, b: TestPlayer, tradeId: string, revision: number): Promise<number> {
  const ma = a.mark();
  const mb = b.mark();
  a.send("tradeAccept", { tradeId, revision });
  b.send("tradeAccept", { tradeId, revision });
  const conf = await a.next("tradeConfirmScreen", (d) => d.tradeId === tradeId, { after: ma });
  await b.next("tradeConfirmScreen", (d) => d.tradeId === tradeId, { after: mb });
  return conf.revision;
}

/**
 * Both accept on the offer screen at `revision`, then on the confirmation screen: the settlement
 * starts. Resolves with a's mark from before the first accept.
 */
export async function acceptTwice(a: TestPlayer, b: TestPlayer, tradeId: string, revision: number): Promise<number> {
  const m = a.mark();
  a.send("tradeAccept", { tradeId, revision });
  b.send("tradeAccept", { tradeId, revision });
  const conf = await a.next("tradeConfirmScreen", (d) => d.tradeId === tradeId, { after: m });
  a.send("tradeAccept", { tradeId, revision: conf.revision });
  b.send("tradeAccept", { tradeId, revision: conf.revision });
  return m;
}

/** Two free tiles at most 2 apart, both within 3 tiles of `at` (a bank booth or a store). */
export function freeTilesNear(server: GameServer, at: Tile): [Tile, Tile] {
  const c = server.content;
  const free: Tile[] = [];
  for (let dx = -3; dx <= 3; dx++)
    for (let dz = -3; dz <= 3; dz++) {
      const t = { x: at.x + dx, z: at.z + dz };
      if ((dx !== 0 || dz !== 0) && c.inBounds(t.x, t.z) && !c.isBlocked(t.x, t.z)) free.push(t);
    }
  for (const t of free) {
    const u = free.find((o) => o !== t && Math.max(Math.abs(o.x - t.x), Math.abs(o.z - t.z)) <= 2);
    if (u) return [t, u];
  }
  throw new Error(`no two free tiles near ${at.x},${at.z}`);
}

/**
 * One in-process server per describe block (rate limits off) on the given storage, reset first;
 * the players passed to `track` are closed after each test.
 */
export function useTradeServer(storage: () => Promise<Storage>) {
  const ctx = {
    server: undefined as unknown as GameServer,
    players: [] as TestPlayer[],
    track<T extends TestPlayer>(p: T): T {
      ctx.players.push(p);
      return p;
    },
  };
  before(async () => {
    const s = await storage();
    await resetStorage(s);
    ctx.server = await startTestServer({ DISABLE_RATE_LIMIT: "true" }, s);
  });
  after(async () => ctx.server?.close());
  afterEach(async () => {
    await Promise.all(ctx.players.map((p) => p.close()));
    ctx.players = [];
  });
  return ctx;
}

/** Send a request and wait for the target's `tradeIncoming`; returns the trade id. */
export async function requestTrade(a: TestPlayer, b: TestPlayer): Promise<string> {
  const mb = b.mark();
  a.send("tradeRequest", { targetPlayerId: b.id });
  const incoming = await b.next("tradeIncoming", (d) => d.fromPlayerId === a.id, { after: mb });
  return incoming.tradeId;
}

/** The next `tradeError` the player receives after `after`, with `code`. */
export function nextError(p: TestPlayer, code: string, after: number, timeoutMs?: number): Promise<any> {
  return p.next("tradeError", (d) => d.code === code, { after, timeoutMs });
}

/** Send an event and wait for the `tradeError` it causes; asserts its code. */
export async function expectError(p: TestPlayer, event: string, data: unknown, code: string): Promise<any> {
  const m = p.mark();
  p.send(event, data);
  const e = await p.next("tradeError", () => true, { after: m });
  assert.equal(e.code, code, `${event} ${JSON.stringify(data)}: expected ${code}, got ${e.code} (${e.message})`);
  return e;
}

/** A system chat line matching `re` after `after`. */
export function systemLine(p: TestPlayer, re: RegExp, after: number): Promise<any> {
  return p.next("chat:message", (d) => d.type === "system" && re.test(d.text), { after });
}

/** Run a chat command and wait for the system line that answers it. */
export async function command(p: TestPlayer, text: string, answer: RegExp): Promise<void> {
  const m = p.mark();
  p.send("player:chat", { text });
  await systemLine(p, answer, m);
}

export const becomeAdmin = (p: TestPlayer) => command(p, `/admin ${ADMIN_CODE}`, /Admin mode enabled/);

/** `/give` and wait until the item is in the synced inventory. */
export async function give(p: TestPlayer, itemId: string, quantity = 1): Promise<void> {
  const m = p.mark();
  p.send("player:chat", { text: `/give ${itemId} ${quantity}` });
  await systemLine(p, /^Gave /, m);
  await p.next("player:sync", () => true, { after: m });
}

/** `/coins` and wait for the synced total. */
export async function setCoins(p: TestPlayer, n: number): Promise<void> {
  const m = p.mark();
  p.send("player:chat", { text: `/coins ${n}` });
  await p.next("player:sync", (d) => d.coins === n, { after: m });
}

/** `/tp` and wait for the synced position. */
export async function teleport(p: TestPlayer, x: number, z: number): Promise<void> {
  const m = p.mark();
  p.send("player:chat", { text: `/tp ${x} ${z}` });
  await p.next("player:sync", (d) => d.position.x === x && d.position.z === z, { after: m });
}

/**
 * A round trip through the player's connection: every event the server sent before this point has
 * arrived when it resolves.
 */
export async function marker(p: TestPlayer): Promise<void> {
  await command(p, "/help", /^Commands:/);
}

/** Wait until the trade room is gone: after that it can send nothing more. */
export async function roomGone(roomId: string): Promise<void> {
  await until(() => !matchMaker.getLocalRoomById(roomId), `trade room ${roomId} to be disposed`);
}

/** How many events named `event` (matching `pred`) the player has received since `after`. */
export function count(p: TestPlayer, event: string, pred: (d: any) => boolean = () => true, after = 0): number {
  return p.received.filter((r) => r.seq >= after && r.event === event && pred(r.data)).length;
}

/** Slot of the first stack of `itemId` in the player's last synced inventory. */
export function slotOf(p: TestPlayer, itemId: string): number {
  const s = (p.sync().inventory as { slot: number; itemId: string }[]).find((x) => x.itemId === itemId);
  assert.ok(s, `${itemId} in inventory`);
  return s.slot;
}

/** An inventory slot that holds nothing in the last sync. */
export function emptySlot(p: TestPlayer): number {
  const used = new Set((p.sync().inventory as { slot: number }[]).map((s) => s.slot));
  for (let i = 0; i < 28; i++) if (!used.has(i)) return i;
  throw new Error("inventory is full");
}

// ---------------------------------------------------------------------------------- storage

const sql = <T = any>(orm: Orm, q: string, params: unknown[] = []) => orm.em.fork().getConnection().execute<T[]>(q, params);

/**
 * Total of every item id over inventory, equipment and bank of every character (or only of
 * `ids`), plus coins as "coins". One SQL statement, so it is one consistent snapshot.
 */
export async function totals(orm: Orm, ids?: string[]): Promise<Record<string, number>> {
  const filter = ids ? `where character_id in (${ids.map(() => "?").join(",")})` : "";
  const cfilter = ids ? `where id in (${ids.map(() => "?").join(",")})` : "";
  const params = ids ? [...ids, ...ids, ...ids, ...ids] : [];
  const rows = await sql<{ item_id: string; total: string }>(
    orm,
    `select item_id, sum(quantity)::bigint as total from (
       select item_id, quantity from inventory_items ${filter}
       union all select item_id, quantity from equipment_items ${filter}
       union all select item_id, quantity from bank_items ${filter}
       union all select 'coins' as item_id, coins as quantity from characters ${cfilter}
     ) t group by item_id order by item_id`,
    params,
  );
  return Object.fromEntries(rows.map((r) => [r.item_id, Number(r.total)]).filter(([, n]) => n !== 0));
}

/** Every broken storage invariant: more than 28 slots, a slot out of range, a bad stack, bad coins. */
export async function violations(orm: Orm, items?: ItemLookup): Promise<string[]> {
  const out: string[] = [];
  for (const r of await sql(orm, `select character_id, count(*)::int n from inventory_items group by character_id having count(*) > 28`))
    out.push(`${r.character_id} holds ${r.n} inventory slots`);
  for (const r of await sql(orm, `select character_id, slot, quantity from inventory_items where slot < 0 or slot > 27 or quantity < 1 or quantity > ?`, [
    MAX_STACK,
  ]))
    out.push(`${r.character_id} slot ${r.slot} quantity ${r.quantity}`);
  for (const r of await sql(orm, `select id, coins from characters where coins < 0 or coins > ?`, [MAX_STACK])) out.push(`${r.id} coins ${r.coins}`);
  for (const r of await sql(orm, `select character_id, item_id, quantity from bank_items where quantity < 1 or quantity > ?`, [MAX_STACK]))
    out.push(`${r.character_id} bank ${r.item_id} ${r.quantity}`);
  // A non-stackable item never shares a slot with another unit.
  if (items)
    for (const r of await sql(orm, `select character_id, slot, item_id, quantity from inventory_items where quantity > 1`)) {
      const def = items(r.item_id);
      if (!def) out.push(`${r.character_id} slot ${r.slot} holds unknown item ${r.item_id}`);
      else if (!def.stackable) out.push(`${r.character_id} slot ${r.slot} holds ${r.quantity} × non-stackable ${r.item_id}`);
    }
  return out;
}

/** Audit records by outcome, optionally for some trade ids only. */
export async function audits(orm: Orm, ids?: string[]): Promise<{ id: string; outcome: string; reason: string | null }[]> {
  if (ids && ids.length === 0) return [];
  const where = ids ? `where id in (${ids.map(() => "?").join(",")})` : "";
  return sql(orm, `select id, outcome, reason from trade_audits ${where}`, ids ?? []);
}

// ------------------------------------------------------------------------------------ trades

/** A character made directly in storage with the given holdings. */
export async function insertCharacter(
  orm: Orm,
  holdings: { coins?: number; inventory?: { slot: number; itemId: string; quantity: number }[] },
): Promise<string> {
  const repo = new CharacterRepository(orm);
  const c = await repo.create({
    accountId: `acc-${Math.random().toString(36).slice(2)}`,
    coins: holdings.coins ?? 0,
    inventory: holdings.inventory ?? [],
  });
  return c.id;
}

/** Holdings as the trade machine sees them. */
export function holdings(coins: number, slots: { slot: number; itemId: string; quantity: number }[]): TradeHoldings {
  const inv = inventoryFromSlots(slots);
  if (!inv.ok) throw new Error(inv.error.message);
  return { inventory: inv.value, coins };
}

export interface SideSpec {
  id: string;
  holdings: TradeHoldings;
  items?: { slot: number; quantity: number }[];
  coins?: number;
}

/**
 * A trade on its way to settlement, built with the domain transitions only: request, accept,
 * offers, both accept twice. Its state is `settling`, exactly what `settleTrade` receives.
 */
export function settlingTrade(id: string, a: SideSpec, b: SideSpec, items: ItemLookup, now = Date.now()): Trade {
  const ctx: TradeContext = { items, holdingsOf: (pid) => (pid === a.id ? a.holdings : b.holdings) };
  const must = <T>(r: { ok: true; value: T } | { ok: false; error: { code: string; message: string } }): T => {
    if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
    return r.value;
  };
  let s = must(createTrade({ id, a: { playerId: a.id, name: "A", level: 3 }, b: { playerId: b.id, name: "B", level: 3 }, now }));
  s = must(respondToRequest(s, { playerId: b.id, accept: true }, now)).trade;
  for (const side of [a, b]) {
    for (const line of side.items ?? []) s = must(setOfferItem(s, { playerId: side.id, slot: line.slot, quantity: line.quantity }, now, ctx)).trade;
    if (side.coins) s = must(setOfferCoins(s, { playerId: side.id, coins: side.coins }, now, ctx)).trade;
  }
  for (let round = 0; round < 2; round++) {
    s = must(acceptTrade(s, { playerId: a.id, revision: s.revision }, now, ctx)).trade;
    s = must(acceptTrade(s, { playerId: b.id, revision: s.revision }, now, ctx)).trade;
  }
  assert.equal(s.state, "settling");
  return s;
}

// ---------------------------------------------------------------------------------- row locks

/** Number of PostgreSQL backends of this database waiting for a lock. */
export async function lockWaiters(orm: Orm): Promise<number> {
  const rows = await sql<{ n: number }>(orm, `select count(*)::int n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`);
  return Number(rows[0]!.n);
}

/**
 * Hold character `id`'s row locked (`FOR UPDATE`, as every item transaction takes it) in a
 * transaction of its own, until `release()` (PostgreSQL only: PGlite has one connection). Every
 * storage write of that character queues behind it meanwhile.
 */
export async function holdCharacterLock(orm: Orm, id: string): Promise<{ release: () => Promise<void> }> {
  let release!: () => void;
  let held!: () => void;
  const isHeld = new Promise<void>((r) => (held = r));
  const done = orm.em.fork().transactional(async (em) => {
    await em.getConnection().execute(`select 1 from characters where id = ? for update`, [id], "all", em.getTransactionContext());
    held();
    await new Promise<void>((r) => (release = r));
  });
  await Promise.race([isHeld, done]);
  return {
    release: async () => {
      release();
      await done;
    },
  };
}
