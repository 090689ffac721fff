import { CharacterRepository } from "../../../entities/character-repository.js";
import { syncItemDefinitions } from "../../../entities/item-definitions.js";
import { loadContent } from "../../../src/content/load.js";
import { openStorage } from "../../../src/storage/orm.js";
import { settleTrade } from "../../../src/trade/settlement.js";
import { settlingSession, holdings } from "../../../test/helpers/trade.js";
async function main() {
  const s = await openStorage({ url: "postgres://postgres@127.0.0.1:5432/trade_bench", poolMax: 10, debug: process.env.DEBUG === "1", log: (m) => console.log(m) });
  const content = await loadContent("world/manifests");
  await syncItemDefinitions(s.orm as never, content);
  const items = (id: string) => content.items.get(id);
  const repo = new CharacterRepository(s.orm as never);
  const mk = async () => (await repo.create({ accountId: `x-${Math.random()}`, coins: 1e6, inventory: [{ slot: 0, itemId: "feather", quantity: 1e6 }] })).id;
  const a = await mk(), b = await mk();
  const h = holdings(10, [{ slot: 0, itemId: "feather", quantity: 10 }]);
  const N = Number(process.env.N ?? 300);
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    const [x, y] = i % 2 ? [a, b] : [b, a];
    const sess = settlingSession(`p-${Date.now()}-${i}`, { id: x, holdings: h, items: [{ slot: 0, quantity: 1 }] }, { id: y, holdings: h, coins: 1 }, items);
    const r = await settleTrade(s.orm, sess, items);
    if (!r.ok) throw new Error(JSON.stringify(r));
  }
  console.log(((performance.now() - t0) / N).toFixed(2), "ms per settlement");
  await s.close();
}
await main();
