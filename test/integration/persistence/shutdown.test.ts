/**
 * Shutdown (docs/persistence.md#shutdown): every player in the world is saved exactly once — one save,
 * one closed login — whatever transport it uses, and the server closes.
 */
import assert from "node:assert/strict";
import type { ProgressSnapshot } from "../../../src/storage/characters/repository.js";
import { closeAll, RawPlayer, SdkPlayer } from "../../helpers/clients.js";
import { startTestServer } from "../../helpers/server.js";

describe("world shutdown", function () {
  this.timeout(40_000);

  it("saves each player once and closes each login once", async () => {
    const server = await startTestServer();
    const clients: (RawPlayer | SdkPlayer)[] = [];
    try {
      for (let i = 0; i < 4; i++) clients.push(await RawPlayer.connect(server));
      for (let i = 0; i < 3; i++) clients.push(await SdkPlayer.join(server));
      const ids = clients.map((c) => c.id);
      // Everyone moved: there is progress to save.
      for (const [i, c] of clients.entries()) c.send("player:move", { x: i + 1, z: 1 });
      for (const [i, c] of clients.entries()) {
        if (c instanceof SdkPlayer) await c.waitAt(i + 1, 1);
        else await c.waitWorld((w) => w.players.get(c.id)?.x === i + 1 && w.players.get(c.id)?.z === 1, "moved");
      }
      // Count what storage is asked to do from here on.
      const repo = server.characters;
      const saves: string[] = [];
      const closed: string[] = [];
      const save = repo.save.bind(repo);
      const recordLogout = repo.recordLogout.bind(repo);
      repo.save = async (s: ProgressSnapshot) => {
        saves.push(s.characterId);
        return save(s);
      };
      repo.recordLogout = async (loginId: string, reason: string) => {
        closed.push(reason);
        return recordLogout(loginId, reason);
      };
      // The shutdown's batches (docs/persistence.md "The shutdown save"): a save and a closed login each.
      const saveLeaving = repo.saveLeaving.bind(repo);
      repo.saveLeaving = async (rows, reason) => {
        for (const r of rows) {
          saves.push(r.snapshot.characterId);
          if (r.loginId) closed.push(reason);
        }
        return saveLeaving(rows, reason);
      };
      await server.close();
      assert.deepEqual([...saves].sort(), [...ids].sort(), "one save per player");
      assert.equal(closed.length, ids.length, "one closed login per player");
      for (const [i, id] of ids.entries()) {
        const row = (await repo.load(id))!.character;
        assert.deepEqual([row.positionX, row.positionZ], [i + 1, 1], `${id} saved where it stood`);
      }
    } finally {
      await closeAll(clients);
      await server.close();
    }
  });
});
