import { openStorage } from "../../../src/storage/orm.js";
const s = await openStorage({ url: "postgres://postgres@127.0.0.1:5432/trade_bench", poolMax: 4 });
const conn = s.orm.em.getConnection();
await conn.execute("create table if not exists tb_probe (id int primary key, n int)");
await conn.execute("insert into tb_probe values (1, 0) on conflict do nothing");
for (const mode of ["select", "update-autocommit", "tx-3-statements"]) {
  const t0 = performance.now(); let n = 0;
  while (performance.now() - t0 < 2000) {
    if (mode === "select") await conn.execute("select 1");
    else if (mode === "update-autocommit") await conn.execute("update tb_probe set n = n + 1 where id = 1");
    else await s.orm.em.fork().transactional(async (em) => { await em.getConnection().execute("select * from tb_probe where id = 1 for update", [], "all", em.getTransactionContext()); await em.getConnection().execute("update tb_probe set n = n + 1 where id = 1", [], "run", em.getTransactionContext()); });
    n++;
  }
  console.log(mode, (n / 2).toFixed(0), "/s", ((performance.now() - t0) / n).toFixed(2), "ms");
}
await s.close();
