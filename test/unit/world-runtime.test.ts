/**
 * WorldRuntime.resolveCharacter and the open-death recovery: it runs only for the account's own
 * character, only when the character is not live in this world, and inside the character's storage
 * queue (after what is already queued for it). Fake storage, real World.
 */
import assert from "node:assert/strict";
import type { CharacterRecord, CharacterRepository } from "../../entities/character-repository.js";
import type { AuthService, Principal } from "../../src/auth/service.js";
import { loadContent, type GameContent } from "../../src/content/load.js";
import { SKILLS } from "../../src/domain/types.js";
import { Blocklist } from "../../src/http/limits.js";
import { createLogger } from "../../src/logger.js";
import type { Connection } from "../../src/world/player.js";
import { WorldRuntime } from "../../src/world/runtime.js";
import { World } from "../../src/world/world.js";

function record(id: string, accountId: string, bank: CharacterRecord["bank"] = []): CharacterRecord {
  const c: Record<string, unknown> = { id, accountId, name: id, isAgent: false, positionX: 0, positionY: 10, positionZ: 0, health: 100, coins: 0, goal: null, goalsPaused: false };
  for (const s of SKILLS) c[`${s}Xp`] = s === "constitution" ? 1154 : 0;
  return { character: c as CharacterRecord["character"], inventory: [], equipment: {}, bank };
}

class FakeCharacters {
  /** Characters by id; an open death's dropped items, by character id. */
  readonly rows = new Map<string, CharacterRecord>();
  readonly openDeaths = new Map<string, { itemId: string; quantity: number }[]>();
  readonly calls: string[] = [];
  async load(id: string) {
    this.calls.push(`load ${id}`);
    return this.rows.get(id) ?? null;
  }
  async listByAccount(accountId: string) {
    return [...this.rows.values()].filter((r) => r.character.accountId === accountId).map((r) => r.character);
  }
  async recoverOpenDeath(id: string) {
    this.calls.push(`recover ${id}`);
    const dropped = this.openDeaths.get(id);
    if (!dropped) return 0;
    this.openDeaths.delete(id);
    const r = this.rows.get(id)!;
    this.rows.set(id, { ...r, bank: [...r.bank, ...dropped] });
    return dropped.length;
  }
  async save() {}
  async closeSession() {}
}

const conn = (id: string): Connection => ({ id, kind: "json", send: () => undefined, close: () => undefined });
const principal = (accountId: string): Principal => ({ accountId, roles: [], anonymous: false, via: "server" });

describe("world/WorldRuntime resolveCharacter and open deaths", () => {
  let content: GameContent;
  let chars: FakeCharacters;
  let world: World;
  let runtime: WorldRuntime;
  before(async () => {
    content = await loadContent("world/manifests");
  });
  beforeEach(() => {
    chars = new FakeCharacters();
    const logger = createLogger("silent");
    world = new World({ content, characters: chars as unknown as CharacterRepository, logger, saveIntervalSeconds: 60, checkAdminCode: () => "wrong" });
    runtime = new WorldRuntime({
      world,
      auth: {} as AuthService,
      characters: chars as unknown as CharacterRepository,
      createCharacter: async () => assert.fail("no character should be created"),
      blocklist: new Blocklist(),
      blockSeconds: 60,
      tickMs: 600,
      logger,
    });
    chars.rows.set("c1", record("c1", "acc-1"));
    chars.openDeaths.set("c1", [{ itemId: "shrimp", quantity: 2 }]);
  });

  it("another account's character: refused before anything is recovered", async () => {
    await assert.rejects(runtime.resolveCharacter(principal("acc-2"), "c1"), (e: any) => e.code === 403);
    assert.ok(!chars.calls.includes("recover c1"));
    assert.ok(chars.openDeaths.has("c1"), "the lock is still open");
  });

  it("the own character, not in the world: recovered, and the returned record has the restored bank", async () => {
    const r = await runtime.resolveCharacter(principal("acc-1"), "c1");
    assert.deepEqual(r.bank, [{ itemId: "shrimp", quantity: 2 }]);
    assert.deepEqual(chars.calls, ["load c1", "recover c1", "load c1"]);
  });

  it("a character live in this world: not recovered (the world still owns its death)", async () => {
    world.join(record("c1", "acc-1"), conn("x"), 4009);
    await runtime.resolveCharacter(principal("acc-1"), "c1");
    assert.ok(!chars.calls.includes("recover c1"));
    assert.ok(chars.openDeaths.has("c1"));
  });

  it("runs in the character's storage queue, after what is already queued for it", async () => {
    let release!: () => void;
    const order: string[] = [];
    void world.queues.run("c1", async () => {
      await new Promise<void>((r) => (release = r));
      order.push("earlier job");
    });
    const resolving = runtime.resolveCharacter(principal("acc-1"), "c1").then(() => order.push("resolved"));
    await new Promise((r) => setImmediate(r));
    assert.ok(!chars.calls.includes("recover c1"), "recovery waits for the queue");
    release();
    await resolving;
    assert.deepEqual(order, ["earlier job", "resolved"]);
    assert.ok(chars.calls.includes("recover c1"));
  });
});
