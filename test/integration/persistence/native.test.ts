/**
 * src/storage/native.ts: statements whose parameters travel apart from their text, on real storage
 * (PGlite, and PostgreSQL when TEST_DATABASE_URL is set): values come back as they went (quotes,
 * question marks and backslashes in text, instants in `timestamptz`, JSON), inside a transaction when
 * given one, and a statement whose placeholders do not match its parameters is refused unrun.
 */
import assert from "node:assert/strict";
import { executeNative, numbered } from "../../../src/storage/native.js";
import type { Storage } from "../../../src/storage/orm.js";
import { storageKinds } from "../../helpers/storage.js";

describe("storage/native: numbered placeholders", () => {
  it("numbers every ? in order, and refuses a count that differs from the parameters", () => {
    assert.equal(numbered("select ?::int, ?::text where x = any(?::text[])", 3), "select $1::int, $2::text where x = any($3::text[])");
    assert.equal(numbered("select 1", 0), "select 1");
    assert.throws(() => numbered("select ?, ?", 1), /2 placeholders was given 1 parameters/);
    assert.throws(() => numbered("select ?", 2), /1 placeholders was given 2 parameters/);
  });
});

for (const kind of storageKinds()) {
  describe(`storage/native on ${kind.name}`, function () {
    this.timeout(60_000);
    let storage: Storage;
    before(async () => {
      storage = await kind.get();
    });

    it("sends values as they are: text with quotes, ? and backslashes, an instant, JSON, an array literal", async () => {
      const text = `it's a "?" \\ $1 -- not SQL`;
      const at = new Date("2026-03-04T05:06:07.089Z");
      const [row] = await executeNative<{ t: string; at: Date; j: { a: number[] }; n: number; ids: string[] }>(
        storage.orm.em.fork(),
        `select ?::text as t, ?::timestamptz as at, ?::jsonb as j, ?::int + 1 as n, ?::text[] as ids`,
        [text, at, JSON.stringify({ a: [1, 2] }), 41, `{"a b","c"}`],
      );
      assert.equal(row!.t, text);
      assert.equal(new Date(row!.at).toISOString(), at.toISOString());
      assert.deepEqual(typeof row!.j === "string" ? JSON.parse(row!.j) : row!.j, { a: [1, 2] });
      assert.equal(Number(row!.n), 42);
      assert.deepEqual(row!.ids, ["a b", "c"]);
    });

    it("runs in the transaction it is given: sees its uncommitted rows, and rolls back with it", async () => {
      const id = `native-${kind.name}-${Date.now()}`;
      await assert.rejects(
        storage.orm.em.fork().transactional(async (tx) => {
          await executeNative(
            tx,
            `insert into trade_audits (id, character_a, character_b, offer_a, offer_b, outcome, started_at, ended_at)
            values (?, 'a', 'b', '{}', '{}', 'cancelled', now(), now())`,
            [id],
            tx.getTransactionContext(),
          );
          const seen = await executeNative(tx, `select id from trade_audits where id = ?`, [id], tx.getTransactionContext());
          assert.equal(seen.length, 1, "its own uncommitted row");
          throw new Error("roll back");
        }),
        /roll back/,
      );
      assert.equal((await executeNative(storage.orm.em.fork(), `select id from trade_audits where id = ?`, [id])).length, 0, "rolled back");
    });

    it("refuses a statement whose placeholders do not match its parameters, before it reaches the database", async () => {
      await assert.rejects(executeNative(storage.orm.em.fork(), `select ?::int`, []), /1 placeholders was given 0 parameters/);
    });
  });
}
