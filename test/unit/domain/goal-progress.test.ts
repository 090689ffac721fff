import assert from "node:assert/strict";
import { advanceGoal, type GoalEvent, type ProgressingGoal } from "../../../src/domain/goal-progress.js";

const NOW = "2026-11-05T12:00:00.000Z";
const goal = (g: Partial<ProgressingGoal> & { type: string }): ProgressingGoal & { description: string } => ({
  progress: 0,
  description: "test goal",
  ...g,
});

describe("domain/goal-progress", () => {
  // [goal, event, counts?]
  const table: [string, ProgressingGoal, GoalEvent, boolean][] = [
    ["woodcutting by node id", goal({ type: "woodcutting", target: "tree" }), { type: "woodcutting", nodeId: "tree", itemId: "logs" }, true],
    ["woodcutting by produced item", goal({ type: "woodcutting", target: "logs" }), { type: "woodcutting", nodeId: "tree", itemId: "logs" }, true],
    ["woodcutting, another node", goal({ type: "woodcutting", target: "oak_tree" }), { type: "woodcutting", nodeId: "tree", itemId: "logs" }, false],
    [
      "woodcutting without a target counts any tree",
      goal({ type: "woodcutting" }),
      { type: "woodcutting", nodeId: "willow_tree", itemId: "willow_logs" },
      true,
    ],
    ["fishing", goal({ type: "fishing", target: "shrimp_spot" }), { type: "fishing", nodeId: "shrimp_spot", itemId: "raw_shrimp" }, true],
    ["mining", goal({ type: "mining", target: "copper_rock" }), { type: "mining", nodeId: "copper_rock", itemId: "copper_ore" }, true],
    ["another skill does not count", goal({ type: "mining", target: "tree" }), { type: "woodcutting", nodeId: "tree", itemId: "logs" }, false],
    ["combat on the target NPC", goal({ type: "combat", target: "chicken" }), { type: "combat", npcId: "chicken" }, true],
    ["combat on another NPC", goal({ type: "combat", target: "goblin" }), { type: "combat", npcId: "chicken" }, false],
    ["cooking by recipe", goal({ type: "cooking", target: "cook_shrimp" }), { type: "cooking", recipeId: "cook_shrimp", itemId: "shrimp" }, true],
    ["cooking by output", goal({ type: "cooking", target: "shrimp" }), { type: "cooking", recipeId: "cook_shrimp", itemId: "shrimp" }, true],
    ["firemaking by logs", goal({ type: "firemaking", target: "logs" }), { type: "firemaking", itemId: "logs" }, true],
    ["firemaking other logs", goal({ type: "firemaking", target: "oak_logs" }), { type: "firemaking", itemId: "logs" }, false],
    [
      "smelting by recipe",
      goal({ type: "smithing", target: "smelt_bronze_bar" }),
      { type: "smithing", recipeId: "smelt_bronze_bar", itemId: "bronze_bar" },
      true,
    ],
    [
      "smithing by output",
      goal({ type: "smithing", target: "bronze_dagger" }),
      { type: "smithing", recipeId: "smith_bronze_dagger", itemId: "bronze_dagger" },
      true,
    ],
    ["explore the target area", goal({ type: "explore", target: "greenwood" }), { type: "explore", areaId: "greenwood" }, true],
    ["explore another area", goal({ type: "explore", target: "greenwood" }), { type: "explore", areaId: "lumbrook" }, false],
    ["banking is never counted", goal({ type: "banking" }), { type: "combat", npcId: "chicken" }, false],
    ["custom is never counted", goal({ type: "custom" }), { type: "explore", areaId: "lumbrook" }, false],
  ];
  for (const [name, g, e, counts] of table) {
    it(`${name}: ${counts ? "counts" : "does not count"}`, () => {
      const next = advanceGoal(g, e, NOW);
      if (!counts) return assert.equal(next, undefined);
      assert.ok(next);
      assert.equal(next.progress, g.progress + 1);
      assert.equal(next.completedAt, undefined, "no targetCount: never complete");
      assert.equal(g.progress, 0, "the input is not changed");
    });
  }

  it("completes when targetCount is reached, then stops counting", () => {
    const e: GoalEvent = { type: "combat", npcId: "chicken" };
    let g: ProgressingGoal | undefined = goal({ type: "combat", target: "chicken", targetCount: 2 });
    g = advanceGoal(g, e, NOW);
    assert.deepEqual([g?.progress, g?.completedAt], [1, undefined]);
    g = advanceGoal(g!, e, NOW);
    assert.deepEqual([g?.progress, g?.completedAt], [2, NOW]);
    assert.equal(advanceGoal(g!, e, "2027-01-01T00:00:00.000Z"), undefined, "a complete goal does not change");
  });

  it("keeps the goal's other fields", () => {
    const g = { ...goal({ type: "explore", target: "greenwood", targetCount: 1 }), id: "g1", startedAt: NOW, setBy: "agent" as const };
    assert.deepEqual(advanceGoal(g, { type: "explore", areaId: "greenwood" }, NOW), { ...g, progress: 1, completedAt: NOW });
  });
});
