/**
 * `FakeCharacterStore`: the world's `CharacterStore` port (src/world/ports/character-store.ts) in
 * memory, for unit tests that run the real World, its systems and the `CharacterResolver` without a
 * database. It keeps what the world asked of it (saves, batches, deaths, kills, logouts, reads) so a
 * test can check it, and lets a test hold writes open (`gate`, `saveGate`, `deathGate`, `loadGate`)
 * or make them fail (`failSaves`, `failDeath`, `failResolves`).
 *
 * Stored characters are `rows` (a read copies the row when it starts, as a database read sees it);
 * a save writes its position, health, coins and items there when the row exists. Death locks are
 * `deaths`: at most one open per character, closed once, either for the ground (`resolveDeath`) or
 * for the bank (`recoverOpenDeath`, which adds the dropped items to the stored bank).
 */
import type {
  CharacterProgress,
  CharacterRecord,
  CharacterStore,
  DeathItems,
  DeathRecovery,
  LeaveBatchResult,
  LeaveSave,
  LoadedRecord,
  NewDeath,
  ProgressBatchResult,
  ProgressSnapshot,
} from "../../src/world/ports/character-store.js";
import { isStorageUnavailable } from "../../src/storage/unavailable.js";

/** A death lock as the fake stores it. */
export interface FakeDeath {
  id: string;
  characterId: string;
  items: DeathItems;
  /** The post-death state the death wrote. */
  after: ProgressSnapshot;
  resolved: boolean;
}

export class FakeCharacterStore implements CharacterStore {
  /** Stored characters by id (what `load` reads). */
  readonly rows = new Map<string, CharacterRecord>();
  /** Every save, in order: alone, in a progress batch or in a shutdown batch. */
  saves: ProgressSnapshot[] = [];
  /** Batched progress saves (`saveProgress`), each also in `saves`. */
  batches: ProgressSnapshot[][] = [];
  /** Leave batches (`saveLeaving`: the shutdown's batches, the leave groups): the characters of each; each save also in `saves`, each closed login in `logouts`. */
  leaveBatches: string[][] = [];
  deaths: FakeDeath[] = [];
  logouts: { loginId: string; reason: string }[] = [];
  kills: { characterId: string; npcId: string }[] = [];
  /** `load <id>` and `recover <id>`, in the order they happened. */
  readonly calls: string[] = [];
  /** The outcome of each `resolveDeath`: closed by it (true), already closed (false), or failed. */
  resolveResults: (boolean | "failed")[] = [];

  /** Holds every write open while set. */
  gate: Promise<void> | undefined;
  /** Holds saves (alone and batched) open while set. */
  saveGate: Promise<void> | undefined;
  /** Holds death transactions open while set. */
  deathGate: Promise<void> | undefined;
  /** Holds reads open while set (the rows are copied before it). */
  loadGate: Promise<void> | undefined;
  /** Saves (alone and batched) throw "storage down". */
  failSaves = false;
  /** `recordDeath` throws "storage down". */
  failDeath = false;
  /** This many `resolveDeath` attempts throw "storage down" before one runs. */
  failResolves = 0;

  /**
   * @param keep false: keep nothing the world writes (saves, kills, logouts), for a world that runs
   * long with no storage behind it (test/helpers/world.ts); reads and death locks still work.
   */
  constructor(private readonly keep = true) {}

  /** The dropped items of every open death lock, by character. */
  get openDeaths(): ReadonlyMap<string, DeathItems["dropped"]> {
    return new Map(this.deaths.filter((d) => !d.resolved).map((d) => [d.characterId, d.items.dropped]));
  }

  /** A death lock left open (by a process that died before resolving it), dropping `dropped`. */
  openDeath(characterId: string, dropped: DeathItems["dropped"]): void {
    const c = this.rows.get(characterId)?.character;
    const after = { characterId, x: c?.positionX ?? 0, y: c?.positionY ?? 10, z: c?.positionZ ?? 0, health: c?.health ?? 100, combatLevel: 3, skills: {} };
    this.deaths.push({ id: `death-${this.deaths.length + 1}`, characterId, items: { dropped, kept: [] }, after, resolved: false });
  }

  /** The stored row and whether a death lock of the character is open, both as the read starts. */
  async load(id: string): Promise<LoadedRecord | null> {
    this.calls.push(`load ${id}`);
    const row = this.rows.get(id);
    const read = row ? { ...structuredClone(row), openDeath: this.deaths.some((d) => d.characterId === id && !d.resolved) } : null;
    await this.loadGate;
    return read;
  }

  async firstOfAccount(accountId: string): Promise<string | undefined> {
    return [...this.rows.values()].find((r) => r.character.accountId === accountId)?.character.id;
  }

  async save(s: ProgressSnapshot): Promise<void> {
    await this.writing(this.saveGate);
    if (this.failSaves) throw new Error("storage down");
    this.write(s);
  }

  async saveProgress(rows: readonly CharacterProgress[]): Promise<ProgressBatchResult> {
    await this.writing(this.saveGate);
    if (this.failSaves) throw new Error("storage down");
    if (this.keep) this.batches.push(structuredClone([...rows]));
    for (const s of rows) this.write(s);
    return { updated: rows.length, fenced: [] };
  }

  async saveLeaving(saves: readonly LeaveSave[], reason: string): Promise<LeaveBatchResult> {
    await this.writing(this.saveGate);
    if (this.failSaves) throw new Error("storage down");
    if (this.keep) this.leaveBatches.push(saves.map((r) => r.snapshot.characterId));
    for (const r of saves) this.write(r.snapshot);
    for (const r of saves) if (r.loginId) await this.recordLogout(r.loginId, reason);
    return { written: saves.length, fenced: [], busy: [] };
  }

  async recordKill(characterId: string, npcId: string): Promise<void> {
    if (this.keep) this.kills.push({ characterId, npcId });
  }

  async recordLogout(loginId: string, reason: string): Promise<void> {
    if (this.keep) this.logouts.push({ loginId, reason });
  }

  async recordDeath(death: NewDeath, after: ProgressSnapshot): Promise<string | null> {
    await this.writing(this.deathGate);
    if (this.failDeath) throw new Error("storage down");
    if (this.deaths.some((d) => d.characterId === death.characterId && !d.resolved)) return null;
    const id = `death-${this.deaths.length + 1}`;
    this.deaths.push({ id, characterId: death.characterId, items: structuredClone(death.items), after: structuredClone(after), resolved: false });
    this.write(after, false);
    return id;
  }

  async deathRecorded(deathId: string): Promise<boolean> {
    return this.deaths.some((d) => d.id === deathId);
  }

  /** Close the lock if it is still open (the world then puts the dropped items on the ground). */
  async resolveDeath(deathId: string): Promise<boolean> {
    await this.gate;
    if (this.failResolves > 0) {
      this.failResolves--;
      this.resolveResults.push("failed");
      throw new Error("storage down");
    }
    const d = this.deaths.find((x) => x.id === deathId);
    const closed = !!d && !d.resolved;
    if (d) d.resolved = true;
    this.resolveResults.push(closed);
    return closed;
  }

  /** Close the character's open lock, if any, giving its dropped items to the stored bank. */
  async recoverOpenDeath(characterId: string): Promise<DeathRecovery> {
    this.calls.push(`recover ${characterId}`);
    const d = this.deaths.find((x) => x.characterId === characterId && !x.resolved);
    if (!d) return { restored: 0, overflow: [], at: { x: 0, z: 0 } };
    d.resolved = true;
    const r = this.rows.get(characterId);
    if (r) this.rows.set(characterId, { ...r, bank: [...r.bank, ...d.items.dropped] });
    return { restored: d.items.dropped.length, overflow: [], at: { x: d.after.x, z: d.after.z } };
  }

  isUnavailable(e: unknown): boolean {
    return isStorageUnavailable(e);
  }

  isTransient(e: unknown): boolean {
    return isStorageUnavailable(e);
  }

  /** Wait for `gate` and the gate of one kind of write. */
  private async writing(gate: Promise<void> | undefined): Promise<void> {
    await this.gate;
    await gate;
  }

  /** Record a save and write it into the stored row, when there is one. */
  private write(s: ProgressSnapshot, record = true): void {
    if (!this.keep) return;
    if (record) this.saves.push(structuredClone(s));
    const r = this.rows.get(s.characterId);
    if (!r) return;
    const character = { ...r.character, positionX: s.x, positionZ: s.z, health: s.health, ...(s.coins !== undefined ? { coins: s.coins } : {}) };
    const items = s.items ? { inventory: s.items.inventory, equipment: s.items.equipment, bank: s.items.bank ?? r.bank } : {};
    this.rows.set(s.characterId, structuredClone({ ...r, ...items, character }));
  }
}
