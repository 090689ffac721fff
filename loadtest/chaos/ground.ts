/**
 * Items lying on the ground in storage, for the conservation check (docs/chaos.md "Ground"). Today
 * ground piles live only in memory and `world_chunks` is empty; once piles are persisted (issue 28,
 * "The world's modifications persist") they count here without changing the harness:
 *
 * - every `world_chunks.data` JSON is searched for pile-shaped objects, `{ itemId, quantity }`
 *   (a string and a positive integer), wherever they sit in it;
 * - every other table with `item_id` and `quantity` columns, beside the characters' own
 *   (inventory, equipment, bank), is summed too (a table per kind, e.g. `ground_items`).
 *
 * The report names each source with what it held, so a misread shape shows.
 */
import { withRunDatabase, type Totals } from "./database.js";

export interface GroundCount {
  totals: Totals;
  /** What was read, e.g. `world_chunks: 3 rows, 2 piles`, `ground_items: 5 rows`. */
  sources: string[];
}

const CHARACTER_TABLES = new Set(["inventory_items", "equipment_items", "bank_items"]);

/** Pile-shaped objects anywhere inside `value`. */
export function pilesIn(value: unknown, out: { itemId: string; quantity: number }[] = []): { itemId: string; quantity: number }[] {
  if (Array.isArray(value)) {
    for (const v of value) pilesIn(v, out);
  } else if (value && typeof value === "object") {
    const o = value as Record<string, unknown>;
    if (typeof o.itemId === "string" && Number.isInteger(o.quantity) && (o.quantity as number) > 0) {
      out.push({ itemId: o.itemId, quantity: o.quantity as number });
    } else {
      for (const v of Object.values(o)) pilesIn(v, out);
    }
  }
  return out;
}

/** Ground items in storage now (with everything stopped). */
export async function groundTotals(url: string): Promise<GroundCount> {
  return withRunDatabase(url, async (q) => {
    const totals: Totals = {};
    const sources: string[] = [];
    const add = (itemId: string, n: number) => (totals[itemId] = (totals[itemId] ?? 0) + n);
    const chunks = await q<{ data: unknown }>(`select data from world_chunks`);
    let piles = 0;
    for (const row of chunks) {
      const data = typeof row.data === "string" ? (JSON.parse(row.data) as unknown) : row.data;
      for (const p of pilesIn(data)) {
        add(p.itemId, p.quantity);
        piles++;
      }
    }
    sources.push(`world_chunks: ${chunks.length} rows, ${piles} piles`);
    const tables = await q<{ table_name: string }>(
      `select table_name from information_schema.columns where table_schema = 'public' and column_name in ('item_id', 'quantity')
       group by table_name having count(*) = 2 order by table_name`,
    );
    for (const { table_name } of tables) {
      if (CHARACTER_TABLES.has(table_name)) continue;
      const rows = await q<{ item_id: string; total: string; n: number }>(
        `select item_id, sum(quantity)::bigint total, count(*)::int n from "${table_name}" group by item_id`,
      );
      let n = 0;
      for (const r of rows) {
        add(r.item_id, Number(r.total));
        n += r.n;
      }
      sources.push(`${table_name}: ${n} rows`);
    }
    return { totals, sources };
  });
}
