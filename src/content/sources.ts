/**
 * Where each item comes from, computed from the loaded content: used to keep the content coherent
 * (no item that no player can ever get). Pure; no I/O.
 */
import type { GameContent } from "./load.js";

/**
 * Every way an item enters the game, keyed by item id: `drop:<npc>`, `store:<store>`,
 * `recipe:<recipe>` (cooking output or burnt result, smithing output), `gathering:<node>`,
 * `starter-kit`, `template:<template>`, or `note:<obtainedBy>` for an item marked explicitly.
 * An item absent from the map (or with an empty list) has no source.
 */
export function itemSources(content: GameContent): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const add = (itemId: string, source: string) => {
    const list = out.get(itemId) ?? [];
    if (!list.includes(source)) list.push(source);
    out.set(itemId, list);
  };
  for (const npc of content.npcs.values()) for (const d of [...npc.drops.always, ...npc.drops.table]) if (d.itemId !== "coins") add(d.itemId, `drop:${npc.id}`);
  for (const store of content.stores.values()) for (const e of store.stock) add(e.itemId, `store:${store.id}`);
  for (const r of content.recipes.cooking) {
    add(r.output, `recipe:${r.id}`);
    add(r.burnt, `recipe:${r.id}`);
  }
  for (const r of content.recipes.smithing) add(r.output.itemId, `recipe:${r.id}`);
  for (const node of content.gatheringNodes.values()) add(node.yields, `gathering:${node.id}`);
  for (const e of content.starterKit.items) add(e.itemId, "starter-kit");
  for (const t of content.templates.values()) for (const e of t.items) add(e.itemId, `template:${t.id}`);
  for (const item of content.items.values()) if (item.obtainedBy) add(item.id, `note:${item.obtainedBy}`);
  return out;
}
