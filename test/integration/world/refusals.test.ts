/**
 * World refusals carry stable codes end to end (docs/protocol.md "Refusal codes"): a refused event is answered
 * with a system `chat:message` whose `code` comes from src/world/refusals.ts, on both transports;
 * informational system lines carry none.
 */
import assert from "node:assert/strict";
import type { ChatMessage } from "../../../src/events.js";
import type { GameServer } from "../../../src/server/server.js";
import { closeAll, RawPlayer, SdkPlayer } from "../../helpers/clients.js";
import { startTestServer } from "../../helpers/server.js";

describe("world refusal codes (both transports)", function () {
  this.timeout(60_000);
  let server: GameServer;
  let players: (SdkPlayer | RawPlayer)[] = [];

  before(async () => {
    server = await startTestServer();
  });
  after(async () => server?.close());
  afterEach(async () => {
    await closeAll(players);
    players = [];
  });

  /** Send an event and wait for the next system line. */
  const answer = async (p: SdkPlayer | RawPlayer, event: string, data: unknown): Promise<ChatMessage> => {
    const m = p.log.mark();
    p.send(event, data);
    return p.log.system(/./, m);
  };

  // [what, event, payload, code, text]
  const cases: [string, string, unknown, string, RegExp][] = [
    ["a move outside the world", "player:move", { x: 100_000, z: 0 }, "OUT_OF_BOUNDS", /outside the world/],
    ["an attack on nothing", "player:action", { action: "attack", targetId: "npc:nobody:0" }, "NO_SUCH_TARGET", /nothing like that to attack/],
    ["using an empty slot", "inventory:use", { slot: 27 }, "EMPTY_SLOT", /That slot is empty/],
    ["an admin command without admin", "player:chat", { text: "/give logs 1" }, "ADMIN_ONLY", /need admin access/],
    ["an unknown command", "player:chat", { text: "/dance" }, "UNKNOWN_COMMAND", /Unknown command \/dance/],
    ["a command with bad arguments", "player:chat", { text: "/style sideways" }, "INVALID_COMMAND", /Usage: \/style/],
    ["an unknown event", "player:fly", {}, "UNKNOWN_EVENT", /Unknown event "player:fly"/],
    ["a payload that fails its schema", "player:move", { x: "west" }, "INVALID_PAYLOAD", /Invalid player:move/],
  ];

  for (const transport of ["sdk", "ws"] as const) {
    describe(transport === "sdk" ? "Colyseus SDK" : "/ws JSON", () => {
      const join = async () => {
        const p = transport === "sdk" ? await SdkPlayer.join(server) : await RawPlayer.connect(server);
        players.push(p);
        return p;
      };
      it("each refusal comes with its code and its text", async () => {
        const p = await join();
        for (const [what, event, data, code, text] of cases) {
          const m = await answer(p, event, data);
          assert.equal(m.code, code, what);
          assert.match(m.text, text, what);
        }
      });
      it("an informational system line has no code", async () => {
        const p = await join();
        const m = await answer(p, "player:chat", { text: "/help" });
        assert.match(m.text, /^Commands:/);
        assert.equal(m.code, undefined);
      });
    });
  }

  it("a /ws frame that is not JSON is refused with INVALID_MESSAGE", async () => {
    const p = await RawPlayer.connect(server);
    players.push(p);
    const m = p.log.mark();
    p.sendText("not json");
    const line = await p.log.system(/Messages must be JSON/, m);
    assert.equal(line.code, "INVALID_MESSAGE");
  });
});
