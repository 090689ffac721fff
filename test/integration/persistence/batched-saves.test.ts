/**
 * Batched progress saves (docs/persistence.md "Batched saves") on real storage: PGlite, and
 * PostgreSQL when TEST_DATABASE_URL is set (skipped, saying so, otherwise). The real World and
 * CharacterRepository; the test changes players' progress by hand and calls `saveDirty` itself.
 * Ordering is controlled with promises (a gate in front of the batch's statement), never with sleeps.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { PROGRESS_BATCH_MAX, type CharacterProgress } from "../../../src/storage/characters/progress.js";
import { CharacterRepository, type ProgressSnapshot } from "../../../src/storage/characters/repository.js";
import type { StoredGoal } from "../../../src/world/ports/character-store.js";
import { AccountEntity, CharacterEntity } from "../../../entities/index.js";
import { loadContent, type GameContent } from "../../../src/content/load.js";
import { SKILLS } from "../../../src/domain/types.js";
import { skillsFromXp } from "../../../src/domain/xp.js";
import { createLogger } from "../../../src/logger.js";
import { DbWorkLimiter } from "../../../src/storage/limiter.js";
import type { Storage } from "../../../src/storage/orm.js";
import type { Connection, Player } from "../../../src/world/player.js";
import { World } from "../../../src/world/world.js";
import { until } from "../../helpers/records.js";
import { pgliteStorage, postgresStorage, resetStorage, TEST_DATABASE_URL } from "../../helpers/storage.js";

const SKIP_REASON = "needs PostgreSQL (TEST_DATABASE_URL)";
const kinds = [
  { name: "pglite", get: pgliteStorage },
  { name: "postgresql", get: TEST_DATABASE_URL ? postgresStorage : undefined },
];

const connection = (): Connection => ({ id: randomUUID(), kind: "sdk", send() {}, close() {} });

/** A gate: `wait()` resolves once `open()` was called. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { open, wait: () => opened };
}

for (const kind of kinds) {
  describe(`batched progress saves on ${kind.name}${kind.get ? "" : ` (skipped: ${SKIP_REASON})`}`, function () {
    this.timeout(120_000);
    let storage: Storage;
    let content: GameContent;
    let repo: CharacterRepository;
    let world: World;
    let logLines: { msg: string; players?: number }[];
    /** Calls of the repository's save paths (wrapping the real ones): progress batches, saves alone, leave groups. */
    let batches: string[][];
    let alone: string[];
    let leaveGroups: string[][];

    before(async function () {
      if (!kind.get) {
        console.log(`      skipped: ${SKIP_REASON}`);
        this.skip();
      }
      storage = await kind.get();
      content = await loadContent("world/manifests");
    });

    beforeEach(async () => {
      await resetStorage(storage);
      repo = new CharacterRepository(storage.orm);
      batches = [];
      alone = [];
      leaveGroups = [];
      const saveLeaving = repo.saveLeaving.bind(repo);
      repo.saveLeaving = async (saves, reason) => {
        leaveGroups.push(saves.map((x) => x.snapshot.characterId));
        return saveLeaving(saves, reason);
      };
      const saveProgress = repo.saveProgress.bind(repo);
      repo.saveProgress = async (rows: readonly CharacterProgress[]) => {
        batches.push(rows.map((r) => r.characterId));
        return saveProgress(rows);
      };
      const save = repo.save.bind(repo);
      repo.save = async (s: ProgressSnapshot) => {
        alone.push(s.characterId);
        return save(s);
      };
      logLines = [];
      const logger = createLogger("info", { write: (line: string) => void logLines.push(JSON.parse(line)) });
      // Saves are background work of at most one at a time, as with SAVE_CONCURRENCY=1.
      const limiter = new DbWorkLimiter({ max: 4, background: 1 });
      world = new World({
        content,
        characters: repo,
        logger,
        saveIntervalSeconds: 3600,
        checkAdminCode: () => "wrong",
        backgroundWork: (w) => limiter.background(w),
      });
    });

    /** `n` stored characters of one account, in the world. */
    async function players(n: number): Promise<Player[]> {
      const em = storage.orm.em.fork();
      const accountId = randomUUID();
      em.create(AccountEntity, { id: accountId, anonymous: false, roles: [] });
      const ids = Array.from({ length: n }, () => randomUUID());
      ids.forEach((id, i) => em.create(CharacterEntity, { id, accountId, name: `B${i}_${id.slice(0, 6)}` }));
      await em.flush();
      const out: Player[] = [];
      for (const id of ids) out.push(world.join((await repo.load(id))!, connection(), 4009).player);
      return out;
    }

    /** Give `p` progress of its own (`i`): a position, health, every skill's XP, a goal or none. */
    function progress(p: Player, i: number) {
      p.x = (i % 40) - 20;
      p.y = 10 + i / 4;
      p.z = 20 - (i % 37);
      p.skills = skillsFromXp(Object.fromEntries(SKILLS.map((s, k) => [s, (i + 1) * (k + 3) * 17])));
      p.health = 1 + (i % 90);
      p.goal =
        i % 3 === 0
          ? null
          : {
              id: `g${i}`,
              type: "gather",
              description: `it's goal "${i}"`,
              target: "logs",
              progress: i,
              targetCount: 50,
              startedAt: new Date(0).toISOString(),
            };
      p.goalsPaused = i % 2 === 0;
      p.safety.progressChanged();
    }

    async function row(id: string) {
      return (await repo.load(id))!.character as unknown as Record<string, unknown>;
    }

    /** The stored row holds `p`'s progress, every skill column included. */
    async function assertStored(p: Player) {
      const r = await row(p.id);
      const where = `character ${p.id}`;
      assert.deepEqual([r.positionX, r.positionY, r.positionZ], [p.x, p.y, p.z], where);
      assert.equal(r.health, p.health, where);
      assert.equal(r.combatLevel, p.combatLevel, where);
      for (const s of SKILLS) {
        assert.equal(r[`${s}Level`], p.skills[s].level, `${where} ${s} level`);
        assert.equal(r[`${s}Xp`], p.skills[s].xp, `${where} ${s} xp`);
      }
      assert.deepEqual(r.goal, p.goal, where);
      assert.equal(r.goalsPaused, p.goalsPaused, where);
      assert.ok(r.lastSeenAt instanceof Date, where);
    }

    it("many players' progress lands in one statement per chunk of PROGRESS_BATCH_MAX, one chunk at a time", async () => {
      const all = await players(PROGRESS_BATCH_MAX + 7);
      all.forEach((p, i) => progress(p, i));
      let inFlight = 0;
      let maxInFlight = 0;
      const saveProgress = repo.saveProgress.bind(repo);
      repo.saveProgress = async (rows) => {
        maxInFlight = Math.max(maxInFlight, ++inFlight);
        try {
          return await saveProgress(rows);
        } finally {
          inFlight--;
        }
      };
      world.saving.saveDirty();
      await world.queues.drain();
      assert.deepEqual(
        batches.map((b) => b.length),
        [PROGRESS_BATCH_MAX, 7],
      );
      assert.deepEqual(batches.flat().sort(), all.map((p) => p.id).sort());
      assert.deepEqual(alone, [], "nobody saved alone");
      assert.equal(maxInFlight, 1, "through the background gate (one slot)");
      assert.ok(all.every((p) => !p.progressDirty));
      for (const p of all) await assertStored(p);
      // Nothing changed since: nothing is saved.
      world.saving.saveDirty();
      await world.queues.drain();
      assert.equal(batches.length, 2);
    });

    it("the batch writes every column the per-player save writes, with the same values", async () => {
      const [a, b] = await players(2);
      progress(a!, 5);
      const snapshot = a!.snapshot(false);
      await repo.save(snapshot);
      const before = Date.now();
      await repo.saveProgress([{ ...snapshot, characterId: b!.id }]);
      const raw = async (id: string) => {
        const [r] = await storage.orm.em.fork().getConnection().execute<Record<string, unknown>[]>("select * from characters where id = ?", [id]);
        for (const k of ["id", "name", "created_at", "updated_at", "last_seen_at"]) delete r![k];
        return r;
      };
      assert.deepEqual(await raw(b!.id), await raw(a!.id));
      const stored = await row(b!.id);
      for (const k of ["updatedAt", "lastSeenAt"]) assert.ok((stored[k] as Date).getTime() >= before, `${k} is set, as by the per-player save`);
    });

    it("the batch's JSON rows carry every value as the per-player save writes it: quotes, backslashes, control characters and non-ASCII in the goal, a null or absent goal, prayers, fractions", async () => {
      const ps = await players(8);
      const base = ps[0]!.snapshot(false);
      const goal = (description: string): StoredGoal => ({
        id: `g "${description.length}"`,
        type: "gather",
        description,
        target: "logs\\oak",
        progress: 3,
        targetCount: 50,
        startedAt: new Date(12_345).toISOString(),
      });
      const variants: ProgressSnapshot[] = [
        {
          ...base,
          goal: goal(`it's "quoted" \\ back\\slashed,\nnew line\ttab \u0001 é ü 漢字 🎉 </script>`),
          prayer: { points: 12.75, active: ["protect_melee", "thick_skin", "back\\slashed"] },
        },
        { ...base, x: -3.5, y: 10.25, z: 1e-7, goal: null, goalsPaused: true, prayer: { points: 0, active: ['"quoted"'] } },
        {
          ...base,
          health: 0,
          goal: goal(""),
          goalsPaused: false,
          prayer: { points: 1, active: ["é", "🎉"] },
          skills: { ...base.skills, mining: { level: 99, xp: 200_000_000 } },
        },
        (() => {
          const s: ProgressSnapshot = { ...base, x: 9, health: 7 };
          delete s.goal; // left as stored
          delete s.goalsPaused;
          delete s.prayer;
          return s;
        })(),
      ];
      const raw = async (id: string) => {
        const [r] = await storage.orm.em.fork().getConnection().execute<Record<string, unknown>[]>("select * from characters where id = ?", [id]);
        for (const k of ["id", "name", "created_at", "updated_at", "last_seen_at"]) delete r![k];
        return r;
      };
      // Each variant: the first player by the per-player save, the second in one batch with the others.
      for (const [i, v] of variants.entries()) await repo.save({ ...v, characterId: ps[2 * i]!.id });
      const before = Date.now();
      assert.deepEqual(await repo.saveProgress(variants.map((v, i) => ({ ...v, characterId: ps[2 * i + 1]!.id }))), { updated: variants.length, fenced: [] });
      const after = Date.now();
      for (const i of variants.keys()) {
        assert.deepEqual(await raw(ps[2 * i + 1]!.id), await raw(ps[2 * i]!.id), `variant ${i}`);
        const stored = await row(ps[2 * i + 1]!.id);
        for (const k of ["updatedAt", "lastSeenAt"]) {
          const t = (stored[k] as Date).getTime();
          assert.ok(t >= before - 1 && t <= after + 1, `variant ${i}: ${k} is the batch's time`);
        }
      }
      assert.deepEqual((await row(ps[1]!.id)).goal, variants[0]!.goal, "the goal reads back as it was");
    });

    it("a batch whose statement is in flight is never overwritten by the player's later saves: they wait for it", async () => {
      const [leaver, banker] = await players(2);
      const hold = gate();
      const reached = gate();
      const saveProgress = repo.saveProgress.bind(repo);
      repo.saveProgress = async (rows) => {
        reached.open();
        await hold.wait(); // the snapshots are taken: the batch holds the older progress
        return saveProgress(rows);
      };
      progress(leaver!, 1);
      progress(banker!, 2);
      world.saving.saveDirty();
      await reached.wait();
      // Newer progress, written by a save on leaving (in a leave group) and by an item transaction.
      leaver!.x = 7;
      leaver!.z = 9;
      leaver!.safety.progressChanged();
      banker!.x = -3;
      banker!.z = 4;
      const leaving = world.leave(leaver!.id, "left");
      const committing = world.commitItems(banker!, () => ({ coins: 77 }));
      // Both jobs are queued behind the batch (two held queues, two jobs), or, if they were not
      // ordered behind it, one of them has started: then let both commit before the batch does.
      await until(() => alone.length + leaveGroups.length > 0 || world.queues.depth >= 4, "the later saves queued or started");
      const startedDuringBatch = alone.length + leaveGroups.length;
      if (startedDuringBatch > 0) await Promise.all([leaving, committing]);
      hold.open();
      await leaving;
      assert.equal(await committing, true);
      await world.queues.drain();
      assert.equal(startedDuringBatch, 0, "no later save started while the batch was in flight");
      assert.deepEqual(alone, [banker!.id]);
      assert.deepEqual(leaveGroups, [[leaver!.id]]);
      const l = await row(leaver!.id);
      const b = await row(banker!.id);
      assert.deepEqual([l.positionX, l.positionZ], [7, 9], "the leave's save is the last word");
      assert.deepEqual([b.positionX, b.positionZ, b.coins], [-3, 4, 77], "the item transaction is the last word");
    });

    it("a player with a storage job under way is saved alone, after that job; the others are batched", async () => {
      const [busy, idle1, idle2] = await players(3);
      const hold = gate();
      const events: string[] = [];
      // A job of the player's queue (as a kill record is) still running at the interval.
      const job = world.queues.run(busy!.id, async () => {
        await hold.wait();
        events.push("job done");
      });
      const save = repo.save.bind(repo);
      repo.save = async (s) => {
        events.push(`save ${s.characterId === busy!.id ? "busy" : "other"}`);
        return save(s);
      };
      for (const [i, p] of [busy, idle1, idle2].entries()) progress(p!, i + 10);
      world.saving.saveDirty();
      await until(() => batches.length === 1 && !idle1!.progressDirty, "the batch of the idle players");
      assert.deepEqual(batches, [[idle1!.id, idle2!.id]]);
      assert.equal(busy!.progressDirty, true, "not taken while its queue is busy");
      hold.open();
      await job;
      await world.queues.drain();
      assert.deepEqual(events, ["job done", "save busy"], "its own save, after the job");
      for (const p of [busy, idle1, idle2]) await assertStored(p!);
    });

    it("a failed batch gives every player its progress flag back, is logged once, and its players are then saved one at a time", async () => {
      const all = await players(5);
      all.forEach((p, i) => progress(p, i));
      const bad = all[2]!;
      bad.health = -1; // the characters_health_check fails the whole statement
      world.saving.saveDirty();
      await world.queues.drain();
      assert.equal(batches.length, 1);
      assert.ok(
        all.every((p) => p.progressDirty),
        "every player's flag is back",
      );
      assert.equal(logLines.filter((l) => /batched progress save failed/.test(l.msg)).length, 1, "logged once");
      assert.equal(logLines.find((l) => /batched progress save failed/.test(l.msg))!.players, 5);
      assert.equal(logLines.filter((l) => /player storage job failed/.test(l.msg)).length, 0, "not once per player");
      for (const p of all) assert.equal((await row(p.id)).health, 100, "nothing of the statement was written");

      // The next save: one at a time, so only the bad row fails.
      world.saving.saveDirty();
      await world.queues.drain();
      assert.equal(batches.length, 1, "no batch");
      assert.deepEqual([...alone].sort(), all.map((p) => p.id).sort());
      for (const p of all) if (p !== bad) await assertStored(p);
      assert.equal(bad.progressDirty, true);
      assert.ok(all.every((p) => p === bad || !p.progressDirty));

      // Fixed: saved alone once more, then batched again with the others.
      bad.health = 40;
      world.saving.saveDirty();
      await world.queues.drain();
      await assertStored(bad);
      assert.equal(batches.length, 1);
      all.forEach((p, i) => progress(p, i + 100));
      world.saving.saveDirty();
      await world.queues.drain();
      assert.equal(batches.length, 2);
      assert.deepEqual([...batches[1]!].sort(), all.map((p) => p.id).sort());
      for (const p of all) await assertStored(p);
    });

    it("a player whose items changed is saved alone, with its items", async () => {
      const [gatherer, walker] = await players(2);
      progress(gatherer!, 1);
      progress(walker!, 2);
      gatherer!.coins = 31;
      gatherer!.safety.itemsChanged();
      world.saving.saveDirty();
      await world.queues.drain();
      assert.deepEqual(batches, [[walker!.id]]);
      assert.deepEqual(alone, [gatherer!.id]);
      assert.equal((await row(gatherer!.id)).coins, 31);
      assert.equal(gatherer!.itemsDirty, false);
    });

    it("the repository refuses a batch it can't write as the per-player save would, and skips a character that is gone", async () => {
      const [a, b] = await players(2);
      const s = a!.snapshot(false);
      await assert.rejects(repo.saveProgress([a!.snapshot(true)]), /no items or coins/);
      await assert.rejects(repo.saveProgress([s, s]), /twice/);
      await assert.rejects(repo.saveProgress(Array.from({ length: PROGRESS_BATCH_MAX + 1 }, () => s)), /at most/);
      assert.deepEqual(await repo.saveProgress([s, { ...b!.snapshot(false), characterId: randomUUID() }]), { updated: 1, fenced: [] });
      // Rows that leave the goal as stored and rows that set it: one statement each, both written.
      const keep = { ...b!.snapshot(false), health: 55 };
      delete keep.goal;
      assert.deepEqual(await repo.saveProgress([{ ...s, health: 44, goal: null }, keep]), { updated: 2, fenced: [] });
      assert.deepEqual([(await row(a!.id)).health, (await row(b!.id)).health], [44, 55]);
    });
  });
}
