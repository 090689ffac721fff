/**
 * The social relation cache: a load that an invalidation overtakes must not be stored. The storage
 * boundary is replaced by queries the test answers by hand, so the interleaving is exact.
 */
import assert from "node:assert/strict";
import { SocialService } from "../../../src/services/social.js";
import type { Storage } from "../../../src/storage/orm.js";

/** A storage whose every query waits until the test answers it. */
function controlledStorage() {
  const queries: { sql: string; params: unknown[]; answer: (rows: Record<string, unknown>[]) => void }[] = [];
  const connection = {
    execute: (sql: string, params: unknown[]) => new Promise<Record<string, unknown>[]>((resolve) => queries.push({ sql, params, answer: resolve })),
  };
  const storage = { orm: { em: { fork: () => ({ getConnection: () => connection }) } } } as unknown as Storage;
  return { storage, queries };
}

/** Let pending promise callbacks run. */
const settle = () => new Promise((r) => setImmediate(r));

describe("SocialService relation cache", () => {
  it("does not store an ignore list loaded while an invalidation ran; the next read loads again", async () => {
    const { storage, queries } = controlledStorage();
    const social = new SocialService(storage);
    const first = social.isIgnoring("target", "sender");
    await settle();
    assert.equal(queries.length, 1);
    social.invalidate(["target"]); // the ignore was removed while the load was reading
    queries[0]!.answer([{ ignored_character_id: "sender" }]);
    assert.equal(await first, true, "the caller gets what its load read");

    const second = social.isIgnoring("target", "sender");
    await settle();
    assert.equal(queries.length, 2, "the stale answer was not cached");
    queries[1]!.answer([]);
    assert.equal(await second, false);

    assert.equal(await social.isIgnoring("target", "sender"), false, "an undisturbed load is cached");
    assert.equal(queries.length, 2);
  });

  it("does not store a friend list loaded while an invalidation ran", async () => {
    const { storage, queries } = controlledStorage();
    const social = new SocialService(storage);
    const first = social.areFriends("a", "b");
    await settle();
    social.invalidate(["a"]);
    queries[0]!.answer([{ id: "b" }]);
    assert.equal(await first, true);
    const second = social.areFriends("a", "b");
    await settle();
    assert.equal(queries.length, 2);
    queries[1]!.answer([]);
    assert.equal(await second, false);
  });

  it("an invalidation of another key, or one before the load started, does not stop caching", async () => {
    const { storage, queries } = controlledStorage();
    const social = new SocialService(storage);
    social.invalidate(["target"]);
    const first = social.isIgnoring("target", "sender");
    await settle();
    social.invalidate(["someone-else"]);
    queries[0]!.answer([{ ignored_character_id: "sender" }]);
    assert.equal(await first, true);
    assert.equal(await social.isIgnoring("target", "sender"), true);
    assert.equal(queries.length, 1, "served from the cache");
  });

  it("two loads of one key overtaken by an invalidation: neither is stored", async () => {
    const { storage, queries } = controlledStorage();
    const social = new SocialService(storage);
    const a = social.isIgnoring("target", "x");
    const b = social.isIgnoring("target", "x");
    await settle();
    assert.equal(queries.length, 2);
    social.invalidate(["target"]);
    queries[0]!.answer([{ ignored_character_id: "x" }]);
    queries[1]!.answer([{ ignored_character_id: "x" }]);
    await Promise.all([a, b]);
    const c = social.isIgnoring("target", "x");
    await settle();
    assert.equal(queries.length, 3);
    queries[2]!.answer([]);
    assert.equal(await c, false);
  });
});
