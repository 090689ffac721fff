/**
 * Hostile MCP tool arguments, property-based (fast-check, the suite's FUZZ_SEED), through the SDK's
 * own client over Streamable HTTP against the real server: arguments a tool's schema refuses (hostile
 * values, or valid arguments with one field corrupted) answer a tool error; well-formed arguments
 * naming things that do not exist (hostile ids) are refused or end without effect. Either way the
 * player's stored state and its private state in the world do not change, its position stays, the
 * server logs no error and the process sees no uncaught exception or unhandled rejection.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { loadConfig } from "../../../src/config.js";
import { MCP_TOOLS } from "../../../src/mcp/mcp-server.js";
import { startServer, type GameServer } from "../../../src/server/server.js";
import { tokenFor } from "../../helpers/clients.js";
import { accepted, almostValid, check, hostileString, hostileValue, plain, processFaults, recordingLogger, storedCharacter } from "../../helpers/fuzz.js";
import { McpAgent } from "../../helpers/mcp.js";
import { TEST_ENV } from "../../helpers/server.js";
import { pgliteStorage } from "../../helpers/storage.js";

/** Tools whose arguments are ids (or a name) of things that may not exist. */
const ID_FIELDS: Record<string, string[]> = {
  walk_to: ["targetId"],
  attack: ["targetId"],
  gather: ["targetId"],
  pickup: ["targetId"],
  talk: ["targetId"],
  trade_request: ["targetPlayerId"],
  trade_respond: ["tradeId"],
  trade_remove: ["tradeId"],
  trade_cancel: ["tradeId"],
  poll: ["handle"],
  friend_remove: ["friendId"],
};
/** Pace under the flood limit (60 messages a second): every call may send one event. */
const PACE_MS = 30;

describe("fuzz: MCP tool arguments", function () {
  this.timeout(180_000);
  let server: GameServer;
  let agent: McpAgent;
  let id = "";
  const recorder = recordingLogger();
  let crash: ReturnType<typeof processFaults>;

  before(async function () {
    this.timeout(300_000);
    crash = processFaults();
    server = await startServer(loadConfig({ ...TEST_ENV, DISABLE_RATE_LIMIT: "true" }), {
      storage: await pgliteStorage(),
      port: 0,
      host: "127.0.0.1",
      logger: recorder.logger,
    });
    agent = await McpAgent.connect(server.url, { token: tokenFor().token });
    id = [...server.world.players.keys()][0]!;
  });
  after(async () => {
    crash.stop();
    await agent?.close();
    await server?.close();
  });

  /** What must not change: the stored character and the world's private state of it. */
  const snapshot = async () => ({ stored: plain(await storedCharacter(server.storage, id)), live: plain(server.world.players.get(id)!.syncPayload()) });
  const pace = () => new Promise((r) => setTimeout(r, PACE_MS));
  const noFaults = () => {
    assert.deepEqual(crash.faults, []);
    assert.deepEqual(recorder.errors, []);
  };

  it("arguments a tool's schema refuses answer a tool error and change nothing", async () => {
    const before = await snapshot();
    const tools = fc.constantFrom(...MCP_TOOLS.map((t) => t.name));
    const args = tools.chain((name) => {
      const t = MCP_TOOLS.find((d) => d.name === name)!;
      return fc.tuple(fc.constant(name), fc.oneof(almostValid(t.input, hostileValue()), hostileValue()));
    });
    await check(
      fc.asyncProperty(args, async ([name, a]) => {
        const t = MCP_TOOLS.find((d) => d.name === name)!;
        if (accepted(t.input, a) || JSON.stringify(a ?? null).length > 12_000) return;
        // Arguments that are not an object are a JSON-RPC error (invalid params); others a tool error.
        const r = await agent.raw(name, a).catch((e: Error) => ({ isError: true, protocolError: e.message }));
        assert.equal(r.isError, true, `${name} ${JSON.stringify(a).slice(0, 200)} → ${JSON.stringify(r).slice(0, 300)}`);
        await pace();
      }),
      120,
      11,
    );
    assert.deepEqual(await snapshot(), before);
    noFaults();
  });

  it("well-formed arguments naming what does not exist are refused and change nothing", async () => {
    const before = await snapshot();
    const names = Object.keys(ID_FIELDS);
    const args = fc.tuple(fc.constantFrom(...names), hostileString, fc.boolean());
    await check(
      fc.asyncProperty(args, async ([name, value, flag]) => {
        const t = MCP_TOOLS.find((d) => d.name === name)!;
        const a: Record<string, unknown> = Object.fromEntries(ID_FIELDS[name]!.map((f) => [f, value]));
        if (name === "trade_respond") a.accept = flag;
        if (!accepted(t.input, a)) return;
        const r = await agent.call(name, a);
        assert.notEqual(r.outcome, "completed", `${name} ${JSON.stringify(a)} → ${JSON.stringify(r)}`);
        await pace();
      }),
      60,
      12,
    );
    assert.deepEqual(await snapshot(), before);
    noFaults();
  });
});
