/**
 * Characters as the application sees them: creation with the starter kit and a template, renaming,
 * deletion, the agent flag and goal persistence, and the private player view (the `player:sync`
 * shape of docs/protocol.md#private-state plus `online`).
 *
 * No HTTP types here: the world calls `createCharacter` when an account joins without a character,
 * and the REST routes map the `ServiceError`s this throws.
 */
import { AccountFullError, CharacterRepository, NameTakenError, type CharacterRecord } from "../storage/characters/repository.js";
import { CharacterEntity, type Character, type StoredGoal } from "../../entities/character.js";
import type { GameContent } from "../content/load.js";
import type { CharacterTemplate } from "../content/schemas.js";
import { maxHealth } from "../domain/combat.js";
import { addItem, emptyInventory, inventoryToSlots, type Inventory } from "../domain/inventory.js";
import { SKILLS, type SkillName } from "../domain/types.js";
import { combatLevel, levelsOf, skillsFromXp, startingSkills, xpForLevel, type SkillProgress, type SkillSet } from "../domain/xp.js";
import { isUniqueViolation } from "../storage/errors.js";
import type { Storage } from "../storage/orm.js";
import type { WorldAccess } from "../world/access.js";
import { storedPart, type StoredPlayerSync } from "../protocol/player.js";
import { invalid, missing, conflict, ServiceError, SERVICE_ERROR } from "./errors.js";

/** docs/rest.md#rules-that-hold-everywhere: 3 to 12 letters, digits, spaces, `_` or `-`. */
export const CHARACTER_NAME_PATTERN = /^[A-Za-z0-9 _-]{3,12}$/;
/** Characters one account may own. */
export const MAX_CHARACTERS_PER_ACCOUNT = 10;

/** Trim and collapse runs of spaces, so "Bob  Smith" and "Bob Smith" cannot both exist. */
export function normalizeName(raw: string): string {
  return raw.trim().replace(/ {2,}/g, " ");
}

/** Why a (normalized) name is refused, or undefined when it is acceptable. */
export function nameProblem(name: string): string | undefined {
  if (name.length < 3 || name.length > 12) return "a name has 3 to 12 characters";
  if (!CHARACTER_NAME_PATTERN.test(name)) return "a name may hold only letters, digits, spaces, _ and -";
  return undefined;
}

export interface CreateCharacterInput {
  /** A generated name (`Player123456`) is used when absent. */
  name?: string;
  /** A content template: starting levels, items and coins on top of the starter kit. */
  templateId?: string;
  isAgent?: boolean;
}

/** What a new character starts with, before it is stored. */
export interface StartingState {
  skills: SkillSet;
  inventory: Inventory;
  coins: number;
  combatLevel: number;
  health: number;
}

/**
 * The private state of a character as REST shows it: the stored part of `player:sync`
 * (docs/protocol.md#private-state, `StoredPlayerSync`) plus its online flag.
 */
export type PlayerView = StoredPlayerSync & { online: boolean };

/** Skill levels and XP of a stored character (levels derived from XP, as the world does). */
export function storedSkills(c: Character): SkillSet {
  const row = c as unknown as Record<string, number>;
  const xp: Partial<Record<SkillName, number>> = {};
  for (const s of SKILLS) xp[s] = row[`${s}Xp`];
  return skillsFromXp(xp);
}

/** Plain `{ skill: { level, xp } }` of a skill set. */
export function skillsView(skills: SkillSet): Record<SkillName, { level: number; xp: number }> {
  const out = {} as Record<SkillName, { level: number; xp: number }>;
  for (const s of SKILLS) out[s] = { level: skills[s].level, xp: skills[s].xp };
  return out;
}

export class CharacterService {
  readonly repo: CharacterRepository;

  constructor(
    private readonly storage: Storage,
    private readonly content: GameContent,
  ) {
    this.repo = new CharacterRepository(storage.orm);
  }

  /**
   * The starting state of a new character: default levels with the template's overrides (XP at
   * the threshold of each level), the starter kit plus the template's items, both coin amounts.
   * @throws ServiceError INVALID for an unknown template or content that does not fit 28 slots.
   */
  startingState(templateId?: string): StartingState {
    let template: CharacterTemplate | undefined;
    if (templateId !== undefined) {
      template = this.content.templates.get(templateId);
      if (!template) throw invalid(`unknown template "${templateId}"`, "templateId");
    }
    const skills: Record<SkillName, SkillProgress> = { ...startingSkills() };
    for (const [skill, level] of Object.entries(template?.skills ?? {}) as [SkillName, number][]) {
      skills[skill] = { level, xp: xpForLevel(level) };
    }
    let inventory = emptyInventory();
    for (const entry of [...this.content.starterKit.items, ...(template?.items ?? [])]) {
      const item = this.content.items.get(entry.itemId);
      if (!item) throw invalid(`the starting item "${entry.itemId}" is not in the content`, "templateId");
      const added = addItem(inventory, item, entry.quantity);
      if (!added.ok) throw invalid(`the starting items do not fit: ${added.error.message}`, "templateId");
      inventory = added.value;
    }
    return {
      skills,
      inventory,
      coins: this.content.starterKit.coins + (template?.coins ?? 0),
      combatLevel: combatLevel(levelsOf(skills)),
      health: maxHealth(skills.constitution.level),
    };
  }

  /**
   * Create a character for an account (the account row is created when missing). Fits the
   * world's `CharacterFactory` as it is (the result carries `id`).
   * Phases: validate the name, check the per-account cap (a fast refusal; the insert checks it again atomically) and the name, build the starting state,
   * insert with items (one transaction), then write the derived combat level and health.
   * @throws ServiceError INVALID (bad name or template), NAME_TAKEN, CONFLICT (account full).
   */
  async createCharacter(accountId: string, input: CreateCharacterInput = {}): Promise<CharacterRecord & { id: string }> {
    const name = input.name === undefined ? undefined : this.validName(input.name);
    const existing = await this.repo.listByAccount(accountId);
    if (existing.length >= MAX_CHARACTERS_PER_ACCOUNT) {
      throw conflict(`an account may own at most ${MAX_CHARACTERS_PER_ACCOUNT} characters`);
    }
    if (name !== undefined && (await this.repo.isNameTaken(name))) throw nameTaken(name);
    const start = this.startingState(input.templateId);
    let created: Character;
    try {
      created = await this.repo.create({
        accountId,
        name,
        isAgent: input.isAgent ?? false,
        skills: skillsView(start.skills),
        coins: start.coins,
        inventory: inventoryToSlots(start.inventory),
        maxPerAccount: MAX_CHARACTERS_PER_ACCOUNT,
      });
    } catch (e) {
      if (e instanceof AccountFullError) throw conflict(`an account may own at most ${MAX_CHARACTERS_PER_ACCOUNT} characters`);
      if (e instanceof NameTakenError && name !== undefined) throw nameTaken(name);
      throw e;
    }
    // The repository writes column defaults for these; a template can raise both.
    if (created.combatLevel !== start.combatLevel || created.health !== start.health) {
      await this.em().nativeUpdate(CharacterEntity, { id: created.id }, { combatLevel: start.combatLevel, health: start.health });
    }
    const record = await this.repo.load(created.id);
    if (!record) throw missing("character");
    return { id: created.id, ...record };
  }

  /**
   * The character an account gets when it joins the world without one: named after `preferredName`
   * (the token's `name`, e.g. from `POST /api/auth/anonymous`) when that is a valid name nobody has,
   * otherwise a generated one.
   */
  async createForJoin(accountId: string, preferredName: string | undefined): Promise<{ id: string }> {
    const wanted = preferredName === undefined ? undefined : normalizeName(preferredName);
    if (wanted !== undefined && nameProblem(wanted) === undefined) {
      try {
        return await this.createCharacter(accountId, { name: wanted });
      } catch (e) {
        if (!(e instanceof ServiceError && e.code === SERVICE_ERROR.NAME_TAKEN)) throw e;
      }
    }
    return this.createCharacter(accountId, {});
  }

  /** A character with its items, or null. */
  async load(characterId: string): Promise<CharacterRecord | null> {
    return this.repo.load(characterId);
  }

  /** The character row alone, or null. */
  async find(characterId: string): Promise<Character | null> {
    return this.repo.findById(characterId);
  }

  /** An account's characters, oldest first. */
  async listByAccount(accountId: string): Promise<Character[]> {
    return this.repo.listByAccount(accountId);
  }

  /**
   * Rename a character. The caller makes sure it is offline (the world keeps the name in memory).
   * @throws ServiceError INVALID, NAME_TAKEN, NOT_FOUND.
   */
  async rename(characterId: string, rawName: string): Promise<Character> {
    const name = this.validName(rawName);
    if (await this.repo.isNameTaken(name, characterId)) throw nameTaken(name);
    try {
      const updated = await this.em().nativeUpdate(CharacterEntity, { id: characterId }, { name });
      if (updated === 0) throw missing("character");
    } catch (e) {
      if (isUniqueViolation(e)) throw nameTaken(name);
      throw e;
    }
    const c = await this.repo.findById(characterId);
    if (!c) throw missing("character");
    return c;
  }

  /** Delete a character and everything that hangs off it (cascades). @throws NOT_FOUND. */
  async remove(characterId: string): Promise<void> {
    const deleted = await this.em().nativeDelete(CharacterEntity, { id: characterId });
    if (deleted === 0) throw missing("character");
  }

  /** Set or clear the agent flag. @throws NOT_FOUND. */
  async setAgentFlag(characterId: string, isAgent: boolean): Promise<void> {
    const updated = await this.em().nativeUpdate(CharacterEntity, { id: characterId }, { isAgent });
    if (updated === 0) throw missing("character");
  }

  /** Persist an agent's goal and pause flag. @throws NOT_FOUND. */
  async saveGoal(characterId: string, goal: StoredGoal | null, goalsPaused: boolean): Promise<void> {
    const updated = await this.em().nativeUpdate(CharacterEntity, { id: characterId }, { goal, goalsPaused });
    if (updated === 0) throw missing("character");
  }

  /** The private view of a stored character. `online` is the caller's knowledge of the world. */
  toPlayerView(record: CharacterRecord, online: boolean): PlayerView {
    return { ...this.storedSync(record), online };
  }

  /** The stored part of `player:sync`, built from the stored record. */
  private storedSync(record: CharacterRecord): StoredPlayerSync {
    const c = record.character;
    const skills = storedSkills(c);
    const max = maxHealth(skills.constitution.level);
    return {
      id: c.id,
      accountId: c.accountId,
      name: c.name,
      isAgent: c.isAgent,
      position: { x: c.positionX, y: c.positionY, z: c.positionZ },
      health: Math.min(c.health, max),
      maxHealth: max,
      coins: c.coins,
      combatLevel: combatLevel(levelsOf(skills)),
      skills: skillsView(skills),
      inventory: record.inventory.map((s) => ({ slot: s.slot, itemId: s.itemId, quantity: s.quantity })),
      equipment: Object.fromEntries(Object.entries(record.equipment).map(([slot, e]) => [slot, { itemId: e.itemId, quantity: e.quantity }])),
      bank: record.bank.map((b) => ({ itemId: b.itemId, quantity: b.quantity })),
      goal: c.goal ?? null,
      goalsPaused: c.goalsPaused,
    };
  }

  /**
   * The current view of a character: the stored part of its live `player:sync` when the world has
   * it (laid over the stored record), else the stored record. A dropped character still lingering
   * in the world reads from memory too (newer than its row) but is not `online`.
   * @returns null when the character does not exist.
   */
  async currentView(characterId: string, world: Pick<WorldAccess, "isOnline" | "livePlayerSync">): Promise<PlayerView | null> {
    const record = await this.repo.load(characterId);
    if (!record) return null;
    const live = await world.livePlayerSync(characterId);
    return { ...this.storedSync(record), ...(live ? storedPart(live) : {}), online: await world.isOnline(characterId) };
  }

  private validName(raw: string): string {
    const name = normalizeName(raw);
    const problem = nameProblem(name);
    if (problem) throw invalid(problem, "name");
    return name;
  }

  private em() {
    return this.storage.orm.em.fork();
  }
}

const nameTaken = (name: string) => new ServiceError(SERVICE_ERROR.NAME_TAKEN, `the name "${name}" is taken`, "name");
