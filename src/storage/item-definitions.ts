/** Keeps the item_definitions table equal to the item manifest (upsert at start-up). */
import type { MikroORM } from "@mikro-orm/core";
import type { SqlEntityManager } from "@mikro-orm/sql";
import { ItemDefinitionEntity } from "../../entities/world.js";

/** The fields of a manifest item that storage mirrors. */
export interface ItemDefinitionSource {
  items: ReadonlyMap<string, { id: string; name: string; value: number; stackable: boolean; tradeable: boolean; equipSlot?: string }>;
}

/** Upsert every manifest item into item_definitions in one transaction. */
export async function syncItemDefinitions(orm: MikroORM, content: ItemDefinitionSource): Promise<void> {
  await (orm.em.fork() as SqlEntityManager).transactional(async (em) => {
    const rows = [...content.items.values()].map((i) => ({
      id: i.id,
      name: i.name,
      value: i.value,
      stackable: i.stackable,
      tradeable: i.tradeable,
      equipSlot: i.equipSlot ?? null,
      data: i as unknown as Record<string, unknown>,
      updatedAt: new Date(),
    }));
    if (rows.length === 0) return;
    await em.createQueryBuilder(ItemDefinitionEntity).insert(rows).onConflict("id").merge().execute();
  });
}
