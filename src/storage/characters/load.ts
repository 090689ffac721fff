/**
 * Characters' whole records in one statement (`CharacterRepository.load`, docs/persistence.md
 * "Loading a character"): each character row, its inventory, equipment and bank as JSON arrays
 * aggregated by subqueries, and whether a death lock of the character is still open. One round trip
 * where the entity manager's `findOne` and three `find`s took two (the item reads ran in parallel),
 * and one statement's work in the process instead of four; the loads of concurrent joins go
 * together (src/storage/batches.ts).
 */
import type { SqlEntityManager } from "@mikro-orm/sql";
import { CharacterEntity, type Character } from "../../../entities/character.js";
import type { ItemRows } from "../../world/ports/character-store.js";
import { executeNative } from "../native.js";

/**
 * The row and its items. Each item row is a JSON array of its columns (smaller to send and parse
 * than an object). The orders are those of the entity reads it replaced: inventory by slot, bank by
 * item id (the column's collation, as before); equipment, keyed by slot type, in insertion order.
 * `open_death` reads the partial unique index `player_deaths_one_open_per_character`.
 */
const LOAD_SQL = `select c.*,
  coalesce((select json_agg(json_build_array(i.slot, i.item_id, i.quantity) order by i.slot) from inventory_items i where i.character_id = c.id), '[]') as load_inventory,
  coalesce((select json_agg(json_build_array(e.slot_type, e.item_id, e.quantity) order by e.id) from equipment_items e where e.character_id = c.id), '[]') as load_equipment,
  coalesce((select json_agg(json_build_array(b.item_id, b.quantity) order by b.item_id) from bank_items b where b.character_id = c.id), '[]') as load_bank,
  exists (select 1 from player_deaths d where d.character_id = c.id and d.resolved_at is null) as load_open_death
from characters c where c.id = any(?::text[])`;

interface LoadRow extends Record<string, unknown> {
  load_inventory: unknown;
  load_equipment: unknown;
  load_bank: unknown;
  load_open_death: boolean;
}

/** A JSON column as the driver gives it: parsed already (node-postgres, PGlite), or text. */
const json = <T>(v: unknown): T => (typeof v === "string" ? JSON.parse(v) : v) as T;

export type LoadedCharacter = { character: Character; openDeath: boolean } & ItemRows;

/**
 * Read characters with their item rows, hydrated exactly as `findOne` would (column names to
 * properties, dates, JSON), and whether a death lock is open for each: at each position of `ids`
 * its record, null when no such character. Each record has its own entity (an id asked twice is
 * hydrated twice), managed by a fork of `em`; an Error for a row that does not hydrate.
 */
export async function loadCharacters(em: SqlEntityManager, ids: readonly string[]): Promise<(LoadedCharacter | null | Error)[]> {
  const rows = await executeNative<LoadRow>(em, LOAD_SQL, [[...new Set(ids)]]);
  const byId = new Map(rows.map((r) => [r.id as string, r]));
  const hydrated = new Set<string>();
  let fork = em;
  return ids.map((id) => {
    const row = byId.get(id);
    if (!row) return null;
    // A second entity of the same id needs an identity map of its own.
    if (hydrated.has(id)) {
      fork = em.fork();
      hydrated.clear();
    }
    hydrated.add(id);
    // A row that does not hydrate fails its own load, not the others'.
    try {
      return toRecord(fork, row);
    } catch (e) {
      return e instanceof Error ? e : new Error(String(e));
    }
  });
}

function toRecord(em: SqlEntityManager, row: LoadRow): LoadedCharacter {
  const { load_inventory, load_equipment, load_bank, load_open_death, ...columns } = row;
  const character = em.map(CharacterEntity, columns as never);
  return {
    character,
    inventory: json<[number, string, number][]>(load_inventory).map(([slot, itemId, quantity]) => ({ slot, itemId, quantity })),
    equipment: Object.fromEntries(json<[string, string, number][]>(load_equipment).map(([slotType, itemId, quantity]) => [slotType, { itemId, quantity }])),
    bank: json<[string, number][]>(load_bank).map(([itemId, quantity]) => ({ itemId, quantity })),
    openDeath: load_open_death === true,
  };
}
