/**
 * Every unlock the server advertises holds (`GET /api/data/skill-unlocks`, skill-unlocks.json): each
 * "item", "ability" or "activity" entry is checked through the real handlers of a World on fake
 * storage — refused below its level, allowed at it (for a formula, the formula at and around the
 * level). Entries whose text says they are not in the game yet are the only ones skipped; "area"
 * and "quest" entries are advice, not rules. A new entry without a check here fails the test.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import type { CharacterRecord } from "../../../src/world/ports/character-store.js";
import { loadContent, type GameContent } from "../../../src/content/load.js";
import type { SkillUnlock } from "../../../src/content/schemas.js";
import { maxHitOf } from "../../../src/domain/combat.js";
import type { SkillName } from "../../../src/domain/types.js";
import { xpForLevel } from "../../../src/domain/xp.js";
import { createLogger } from "../../../src/logger.js";
import { handleAction, handleInventoryUse } from "../../../src/world/actions.js";
import type { Connection } from "../../../src/world/player.js";
import { combatantOf } from "../../../src/world/systems/combat.js";
import { World } from "../../../src/world/world.js";
import { FakeCharacterStore } from "../../helpers/fake-store.js";
import { characterRecord } from "../../helpers/records.js";

class Conn implements Connection {
  static n = 0;
  readonly id = `unlock-conn-${++Conn.n}`;
  readonly kind = "json" as const;
  sent: { event: string; data: any }[] = [];
  send(event: string, data: unknown) {
    this.sent.push({ event, data });
  }
  close() {}
}

/** An entry's check at one level: the refusal code, or undefined when allowed. */
type Gate = (level: number) => Promise<string | undefined>;
/** An ability that is a formula: asserts it at and around the level. */
type Formula = { formula: (level: number) => void | Promise<void> };

describe("every skill unlock holds (skill-unlocks.json)", () => {
  let content: GameContent;
  let world: World;
  let draw = 0.5;
  let n = 0;

  before(async () => {
    content = await loadContent("world/manifests");
  });
  beforeEach(() => {
    draw = 0.5;
    world = new World({
      content,
      characters: new FakeCharacterStore(false),
      logger: createLogger("silent"),
      saveIntervalSeconds: 600,
      checkAdminCode: () => "wrong",
      rng: () => draw,
      now: () => 1_000_000,
    });
  });

  /** A player with `skill` at `level`, the items given (slot order) and the equipment given. */
  const player = (skill: SkillName, level: number, at: { x: number; z: number }, items: string[] = [], equipment: CharacterRecord["equipment"] = {}) => {
    const rec = characterRecord(`u${++n}`, {
      at,
      inventory: items.map((itemId, slot) => ({ slot, itemId, quantity: content.items.get(itemId)!.stackable ? 10 : 1 })),
    });
    (rec.character as unknown as Record<string, number>)[`${skill}Xp`] = xpForLevel(level);
    rec.equipment = equipment;
    const conn = new Conn();
    const { player: p } = world.join(rec, conn, 4009);
    return { p, conn };
  };
  const code = (conn: Conn) => conn.sent.find((s) => s.event === "chat:message" && s.data.code)?.data.code as string | undefined;
  const free = (near: { x: number; z: number }) => {
    for (let r = 1; r < 6; r++)
      for (let dx = -r; dx <= r; dx++)
        for (let dz = -r; dz <= r; dz++) if (!content.isBlocked(near.x + dx, near.z + dz)) return { x: near.x + dx, z: near.z + dz };
    throw new Error("no free tile");
  };

  /** Equip an item: refused (LEVEL_TOO_LOW) or worn. */
  const equip =
    (itemId: string, skill: SkillName): Gate =>
    async (level) => {
      const { p, conn } = player(skill, level, { x: 0, z: 0 }, [itemId]);
      await handleInventoryUse(world, p, { slot: 0 });
      return code(conn) ?? (Object.values(p.equipment).some((e) => e?.itemId === itemId) ? undefined : "NOT_WORN");
    };
  /** Start gathering a node type with the tools given. */
  const gather =
    (nodeId: string, skill: SkillName, tools: string[]): Gate =>
    async (level) => {
      const r = [...world.resources.values()].find((x) => x.node?.id === nodeId)!;
      const { p, conn } = player(skill, level, free(r), tools);
      await handleAction(world, p, { action: "gather", targetId: r.id });
      return code(conn) ?? (p.action?.kind === "gather" ? undefined : "NOT_GATHERING");
    };
  /** Light logs with a tinderbox. */
  const light =
    (logs: string): Gate =>
    async (level) => {
      const { p, conn } = player("firemaking", level, { x: 3, z: 3 }, ["tinderbox", logs]);
      await handleInventoryUse(world, p, { slot: 1, targetSlot: 0 });
      return code(conn) ?? ([...world.resources.values()].some((r) => r.type === "fire" && r.x === p.x && r.z === p.z) ? undefined : "NO_FIRE");
    };
  /** Use an item at a station (cooking at the range, smithing at the furnace or anvil). */
  const atStation =
    (type: "range" | "furnace" | "anvil", skill: SkillName, items: string[], recipeId?: string, expect?: string): Gate =>
    async (level) => {
      const s = content.stations.find((x) => x.type === type)!;
      const { p, conn } = player(skill, level, free(s), items);
      const before = JSON.stringify(p.inventory);
      await handleInventoryUse(world, p, { slot: 0, targetId: s.id, ...(recipeId ? { recipeId } : {}) });
      const made = expect ? p.inventory.some((i) => i?.itemId === expect) : JSON.stringify(p.inventory) !== before;
      return code(conn) ?? (made ? undefined : "NOTHING_MADE");
    };
  /** Shoot a chicken from three tiles. */
  const shoot =
    (arrow: string): Gate =>
    async (level) => {
      const c = world.npcs.get(world.npcIdsOf("chicken")[0]!)!;
      const { p, conn } = player("ranged", level, { x: c.x - 3, z: c.z }, [], {
        weapon: { itemId: "shortbow", quantity: 1 },
        ammo: { itemId: arrow, quantity: 5 },
      });
      await handleAction(world, p, { action: "attack", targetId: c.id });
      return code(conn) ?? (p.action?.kind === "attack" ? undefined : "NOT_ATTACKING");
    };
  /** Switch a prayer on. */
  const pray =
    (name: string): Gate =>
    async (level) => {
      const prayer = content.prayers.find((x) => x.name === name)!;
      const { p, conn } = player("prayer", level, { x: 0, z: 0 });
      await handleAction(world, p, { action: "pray", targetId: prayer.id });
      return code(conn) ?? (p.prayer.active.includes(prayer.id) ? undefined : "NOT_PRAYING");
    };

  /** The check of each entry, by `<skill>@<level>`. */
  const checks: Record<string, Gate | Formula> = {
    "attack@1": equip("bronze_sword", "attack"),
    "attack@10": equip("iron_sword", "attack"),
    "attack@20": equip("steel_sword", "attack"),
    "strength@1": {
      formula: (level) => {
        const hit = (l: number) => maxHitOf(combatantOf(player("strength", l, { x: 0, z: 0 }).p, content));
        assert.ok(hit(level + 1) >= hit(level) && hit(level + 9) > hit(level), "the max hit grows with strength");
      },
    },
    "defense@1": equip("bronze_platebody", "defense"),
    "defense@10": equip("iron_platebody", "defense"),
    "defense@20": equip("steel_platebody", "defense"),
    "constitution@10": {
      formula: (level) => {
        assert.equal(player("constitution", level, { x: 0, z: 0 }).p.maxHealth, 100);
        assert.equal(player("constitution", level + 1, { x: 0, z: 0 }).p.maxHealth, 110);
      },
    },
    "ranged@1": shoot("bronze_arrow"),
    "ranged@10": shoot("iron_arrow"),
    "ranged@20": equip("oak_shortbow", "ranged"),
    "woodcutting@1": gather("tree", "woodcutting", ["bronze_axe"]),
    "woodcutting@10": gather("tree", "woodcutting", ["iron_axe"]),
    "woodcutting@15": gather("oak_tree", "woodcutting", ["bronze_axe"]),
    "woodcutting@20": gather("tree", "woodcutting", ["steel_axe"]),
    "woodcutting@30": gather("willow_tree", "woodcutting", ["bronze_axe"]),
    "fishing@1": gather("shrimp_spot", "fishing", ["small_fishing_net"]),
    "fishing@5": gather("sardine_spot", "fishing", ["fishing_rod", "fishing_bait"]),
    "fishing@20": gather("trout_spot", "fishing", ["fly_fishing_rod", "feather"]),
    "mining@1": gather("copper_rock", "mining", ["bronze_pickaxe"]),
    "mining@10": gather("copper_rock", "mining", ["iron_pickaxe"]),
    "mining@15": gather("iron_rock", "mining", ["bronze_pickaxe"]),
    "mining@20": gather("copper_rock", "mining", ["steel_pickaxe"]),
    "mining@30": gather("coal_rock", "mining", ["bronze_pickaxe"]),
    "firemaking@1": light("logs"),
    "firemaking@15": light("oak_logs"),
    "firemaking@30": light("willow_logs"),
    "cooking@1": atStation("range", "cooking", ["raw_shrimp"]),
    "cooking@5": atStation("range", "cooking", ["raw_sardine"]),
    "cooking@15": atStation("range", "cooking", ["raw_trout"]),
    "cooking@30": {
      formula: (level) => {
        // The worst draw a roll can give: below the level some shrimp burn, at it none does.
        const cooked = async (l: number) => {
          draw = 0;
          const s = content.stations.find((x) => x.type === "range")!;
          const { p } = player("cooking", l, free(s), ["raw_shrimp"]);
          await handleInventoryUse(world, p, { slot: 0, targetId: s.id });
          return p.inventory[0]?.itemId;
        };
        return Promise.all([cooked(level - 1), cooked(level)]).then(([below, at]) => assert.deepEqual([below, at], ["burnt_shrimp", "shrimp"]));
      },
    },
    "smithing@1": atStation("furnace", "smithing", ["copper_ore", "tin_ore"], undefined, "bronze_bar"),
    "smithing@15": atStation("furnace", "smithing", ["iron_ore"], "smelt_iron_bar"),
    "smithing@19": atStation(
      "anvil",
      "smithing",
      ["bronze_bar", "bronze_bar", "bronze_bar", "bronze_bar", "bronze_bar", "hammer"],
      "smith_bronze_platebody",
      "bronze_platebody",
    ),
    "smithing@30": atStation("furnace", "smithing", ["iron_ore", "coal", "coal"], "smelt_steel_bar", "steel_bar"),
  };
  for (const p of [
    "Bark Ward",
    "Ember Grip",
    "Keen Edge",
    "Kestrel Eye",
    "Granite Ward",
    "Bull's Resolve",
    "Duelist's Focus",
    "Falcon Eye",
    "Ward of Blades",
    "Ward of Arrows",
  ]) {
    checks[`prayer@${content0().prayers.find((x) => x.name === p)!.level}`] = pray(p);
  }

  const unlocks = content0().skillUnlocks as Record<string, readonly SkillUnlock[]>;
  for (const [skill, entries] of Object.entries(unlocks)) {
    for (const entry of entries) {
      const key = `${skill}@${entry.level}`;
      const title = `${key} ${entry.type}: ${entry.description}`;
      if (/not in the game/i.test(entry.description)) {
        it.skip(`${title} (not in the game, says its text)`);
        continue;
      }
      if (entry.type === "area" || entry.type === "quest") continue;
      it(title, async () => {
        const check = checks[key];
        assert.ok(check, `no rule checks ${key}: add one, or say in its text that it is not in the game`);
        if ("formula" in check) return check.formula(entry.level);
        if (entry.level > 1) assert.ok((await check(entry.level - 1)) !== undefined, `allowed below level ${entry.level}`);
        assert.equal(await check(entry.level), undefined, `refused at level ${entry.level}`);
      });
    }
  }
});

/** The shipped content, read synchronously to name the tests (mocha builds them before `before`). */
function content0(): { prayers: { name: string; level: number }[]; skillUnlocks: Record<string, SkillUnlock[]> } {
  const read = (f: string) => JSON.parse(readFileSync(`world/manifests/${f}`, "utf8"));
  return { prayers: read("prayers.json"), skillUnlocks: read("skill-unlocks.json") };
}
