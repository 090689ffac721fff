import pg from "pg";
async function main() {
  const pool = new pg.Pool({ connectionString: "postgres://postgres@127.0.0.1:5432/trade_bench", max: 40 });
  const ids: string[] = (await pool.query("select id from characters order by id limit 64")).rows.map((r: any) => r.id);
  for (const conc of [1, 8, 32]) {
    for (const mode of ["5rt-params", "3rt-multi"]) {
      let n = 0; const t0 = performance.now(); const until = t0 + 3000;
      await Promise.all(Array.from({ length: conc }, async (_, w) => {
        const a = ids[(2 * w) % ids.length], b = ids[(2 * w + 1) % ids.length];
        const c = await pool.connect();
        try {
          while (performance.now() < until) {
            if (mode === "5rt-params") {
              await c.query("begin");
              await c.query("select id, coins from characters where id in ($1, $2) order by id for update", [a, b]);
              await c.query("select character_id, slot, item_id, quantity from inventory_items where character_id in ($1, $2) order by character_id, slot for update", [a, b]);
              await c.query("with w0 as (update characters set coins = coins where id in ($1, $2) returning 1) insert into trade_audits (id, character_a, character_b, offer_a, offer_b, outcome, started_at, ended_at) values ($3, $1, $2, '{}'::jsonb, '{}'::jsonb, 'completed', now(), now())", [a, b, `raw-${Math.random()}`]);
              await c.query("commit");
            } else {
              await c.query(`begin; select id, coins from characters where id in ('${a}', '${b}') order by id for update`);
              await c.query(`select character_id, slot, item_id, quantity from inventory_items where character_id in ('${a}', '${b}') order by character_id, slot for update`);
              await c.query(`with w0 as (update characters set coins = coins where id in ('${a}', '${b}') returning 1) insert into trade_audits (id, character_a, character_b, offer_a, offer_b, outcome, started_at, ended_at) values ('raw-${Math.random()}', '${a}', '${b}', '{}'::jsonb, '{}'::jsonb, 'completed', now(), now()); commit`);
            }
            n++;
          }
        } finally { c.release(); }
      }));
      console.log(mode, "x" + conc, (n / ((performance.now() - t0) / 1000)).toFixed(0), "/s");
    }
  }
  await pool.query("delete from trade_audits where id like 'raw-%'");
  await pool.end();
}
await main();
