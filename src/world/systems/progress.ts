/** XP and agent goals: what a player earns from gathering, fighting, cooking and exploring. */
import { advanceGoal, type GoalEvent } from "../../domain/goal-progress.js";
import type { SkillName } from "../../domain/types.js";
import { addXp } from "../../domain/xp.js";
import { system } from "../messages.js";
import type { Player } from "../player.js";

export class Progress {
  constructor(private readonly now: () => number) {}

  /**
   * Count an event toward the player's agent goal (`src/domain/goal-progress.ts`); a completed goal
   * is announced in chat. Returns true when the goal changed: the caller sends `player:sync`.
   */
  countGoal(p: Player, event: GoalEvent): boolean {
    const next = p.goal ? advanceGoal(p.goal, event, new Date(this.now()).toISOString()) : undefined;
    if (!next) return false;
    p.goal = next;
    p.safety.progressChanged();
    if (next.completedAt) system(p, `Goal complete: ${next.description} (${next.progress}/${next.targetCount}).`);
    return true;
  }

  /** Add XP and tell the player (`skill:xp`), once per skill. */
  grantXp(p: Player, gains: Partial<Record<SkillName, number>>): void {
    let changed = false;
    for (const [skill, amount] of Object.entries(gains) as [SkillName, number][]) {
      const whole = Math.floor(amount);
      if (whole <= 0) continue;
      const r = addXp(p.skills, skill, whole);
      if (!r.ok) continue;
      p.skills = r.value.skills;
      changed = true;
      p.send("skill:xp", { skill, gained: r.value.gained, xp: r.value.xp, level: r.value.level, leveledUp: r.value.leveledUp });
    }
    if (changed) p.safety.progressChanged();
  }
}
