import assert from "node:assert/strict";
import { equippedCombatant, npcCombatant, type Combatant } from "../../../src/domain/combat.js";
import type { ItemLookup } from "../../../src/domain/inventory.js";
import type { ItemDef } from "../../../src/domain/types.js";

const gear = (id: string, attack: number, strength: number, defense: number): ItemDef => ({
  id,
  name: id,
  value: 1,
  stackable: false,
  tradeable: true,
  equipSlot: "weapon",
  bonuses: { attack, strength, defense, ranged: 0 },
});
const catalogue = [gear("sword", 8, 7, 0), gear("helm", 0, 0, 4), { id: "ring", name: "ring", value: 1, stackable: false, tradeable: true }] as ItemDef[];
const items: ItemLookup = (id) => catalogue.find((i) => i.id === id);
const skills = (attack: number, strength: number, defense: number) => ({
  attack: { level: attack },
  strength: { level: strength },
  defense: { level: defense },
});

describe("domain/combat equippedCombatant", () => {
  const cases: [string, ReturnType<typeof skills>, Record<string, { itemId: string }>, "attack" | "strength" | "defense", Combatant][] = [
    ["nothing worn", skills(1, 1, 1), {}, "attack", { attack: 1, strength: 1, defense: 1, attackBonus: 0, strengthBonus: 0, defenseBonus: 0, style: "attack" }],
    [
      "a weapon's bonuses",
      skills(10, 5, 3),
      { weapon: { itemId: "sword" } },
      "strength",
      { attack: 10, strength: 5, defense: 3, attackBonus: 8, strengthBonus: 7, defenseBonus: 0, style: "strength" },
    ],
    [
      "bonuses summed over slots",
      skills(1, 1, 20),
      { weapon: { itemId: "sword" }, head: { itemId: "helm" } },
      "defense",
      { attack: 1, strength: 1, defense: 20, attackBonus: 8, strengthBonus: 7, defenseBonus: 4, style: "defense" },
    ],
    [
      "items without bonuses or unknown add nothing",
      skills(2, 2, 2),
      { ring: { itemId: "ring" }, body: { itemId: "gone" } },
      "attack",
      { attack: 2, strength: 2, defense: 2, attackBonus: 0, strengthBonus: 0, defenseBonus: 0, style: "attack" },
    ],
  ];
  for (const [name, levels, equipment, style, expected] of cases) {
    it(name, () => assert.deepEqual(equippedCombatant(levels, equipment, items, style), expected));
  }
});

describe("domain/combat npcCombatant", () => {
  const cases: [string, { attack: number; strength: number; defense: number }, number | undefined, Combatant][] = [
    ["defending: stats only", { attack: 5, strength: 4, defense: 3 }, undefined, { attack: 5, strength: 4, defense: 3 }],
    ["attacking: with its fixed max hit", { attack: 5, strength: 4, defense: 3 }, 20, { attack: 5, strength: 4, defense: 3, maxHit: 20 }],
  ];
  for (const [name, stats, maxHit, expected] of cases) it(name, () => assert.deepEqual(npcCombatant(stats, maxHit), expected));
});
