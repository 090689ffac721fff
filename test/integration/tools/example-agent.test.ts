/**
 * The example agent (examples/agent) against a real server (TICK_MS=50): run in-process through
 * its exported `runAgent`, it chops and banks logs (stored), stands still while its goals are
 * paused (counted in world ticks seen by a second client), takes its goal up again on resume, and
 * answers private messages. Every wait is on an event or a state patch.
 */
import assert from "node:assert/strict";
import { runAgent, type AgentEvent } from "../../../examples/agent/agent.js";
import type { GameServer } from "../../../src/server/server.js";
import { GATHER_INTERVAL_TICKS } from "../../../src/world/world.js";
import { restClient, uniqueName } from "../../helpers/api.js";
import { EventLog, SdkPlayer } from "../../helpers/clients.js";
import { startTestServer } from "../../helpers/server.js";

/** Commands that change what a player does (chat is not one of them). */
const ACTIONS = new Set(["sent:player:move", "sent:player:action", "sent:bank:deposit", "sent:bank:withdraw", "sent:inventory:use"]);

/** Generous bound for one step of the agent on a loaded machine (a wait ends as soon as the event comes). */
const WAIT = 30_000;

const logsIn = (list: { itemId: string; quantity: number }[] = []) => list.filter((s) => s.itemId === "logs").reduce((n, s) => n + s.quantity, 0);

describe("example agent (examples/agent)", function () {
  this.timeout(180_000);
  let server: GameServer;
  let request: ReturnType<typeof restClient>;
  const running: { controller: AbortController; finished: Promise<unknown> }[] = [];
  let friend: SdkPlayer | undefined;

  before(async () => {
    server = await startTestServer();
    request = restClient(server.url);
  });
  afterEach(async () => {
    for (const r of running.splice(0)) {
      r.controller.abort();
      await r.finished;
    }
    await friend?.leave();
    friend = undefined;
  });
  after(async () => server?.close());

  /**
   * Start the agent with an event log of everything it does: frames received (by event name),
   * frames sent (`sent:<event>`), state changes (`state`) and its credentials (`ready`).
   */
  const start = (opts: { token: string; name?: string }) => {
    const log = new EventLog();
    const lines: string[] = [];
    const controller = new AbortController();
    const observer = (e: AgentEvent) => {
      if (e.type === "received") log.push(e.event, e.data);
      else if (e.type === "sent") log.push(`sent:${e.event}`, e.data);
      else log.push(e.type, e);
    };
    const finished = runAgent({ url: server.url, ...opts, bankAt: 2, goalCount: 1000, signal: controller.signal, log: (l) => lines.push(l), observer }).then(
      () => "stopped",
      (e: Error) => e,
    );
    running.push({ controller, finished });
    return { log, lines, controller, finished };
  };

  it("chops and banks logs, stands still while paused, resumes, and answers private messages", async () => {
    const owner = await request("POST", "/api/auth/anonymous", { body: { name: "Owner" } });
    assert.equal(owner.status, 201);
    const ownerToken = owner.body.token as string;
    const agent = start({ token: ownerToken, name: uniqueName("Wood") });
    const ready = await agent.log.waitFor<{ agentId: string; characterId: string }>("ready", undefined, { timeoutMs: WAIT });
    const { agentId, characterId } = ready;

    // A friend of the agent, also our clock: the room state's tick reaches it every tick.
    friend = await SdkPlayer.join(server);
    const f = friend;
    const asked = await request("POST", `/api/player/${characterId}/friend-requests`, { token: ownerToken, body: { characterId: f.id } });
    assert.equal(asked.status, 201);
    const accepted = await request("POST", `/api/player/${f.id}/friend-requests`, { token: f.token, body: { characterId } });
    assert.equal(accepted.body.status, "friends");
    /**
     * Wait until `n` more world ticks have run, counted from the server's tick now (not from the
     * friend's last patch, which may lag) and seen by the friend's room state.
     */
    const ticks = async (n: number) => {
      const from = server.world.tick;
      await f.waitState((s) => s.tick >= from + n, `${n} world ticks`, WAIT);
    };

    // It set itself a goal, chops (XP and logs), and banks the logs.
    const goalSync = await agent.log.waitFor("player:sync", (s) => s.goal?.type === "woodcutting" && s.goal.setBy === "agent", { timeoutMs: WAIT });
    assert.equal(goalSync.goal.targetCount, 1000);
    const xp = await agent.log.waitFor("skill:xp", (x) => x.skill === "woodcutting", { timeoutMs: WAIT });
    assert.ok(xp.gained > 0);
    await agent.log.waitFor("player:sync", (s) => logsIn(s.inventory) >= 1, { timeoutMs: WAIT });
    const banked = await agent.log.waitFor("player:sync", (s) => logsIn(s.bank) >= 2, { timeoutMs: WAIT });
    assert.ok(agent.log.all("sent:bank:deposit").length >= 1);
    const stored = await server.characters.load(characterId);
    assert.ok(logsIn(stored!.bank) >= logsIn(banked.bank), "the deposit is in storage");
    const gathered = agent.log.all("player:sync").at(-1).goal.progress as number;
    assert.ok(gathered >= 2, `goal progress counts the logs (${gathered})`);

    // A friend's private message gets a private answer; the owner's (REST, no sender) a public one.
    let mark = agent.log.mark();
    const fm = f.log.mark();
    f.send("player:chat", { text: "How goes it?", to: characterId });
    const answer = await f.log.waitFor("chat:message", (m) => m.type === "private" && m.fromId === characterId, { since: fm, timeoutMs: WAIT });
    assert.match(answer.text, /Goal: Chop trees \d+\/1000\. Logs: \d+ carried, \d+ banked\./);
    const sent = await agent.log.waitFor("sent:player:chat", () => true, { since: mark, timeoutMs: WAIT });
    assert.equal(sent.to, f.id);
    mark = agent.log.mark();
    const msg = await request("POST", `/api/agents/${agentId}/message`, { token: ownerToken, body: { text: "Status?" } });
    assert.equal(msg.status, 200);
    const aloud = await agent.log.waitFor("sent:player:chat", () => true, { since: mark, timeoutMs: WAIT });
    assert.equal(aloud.to, undefined);
    assert.match(aloud.text, /^Hi Owner! I'm /);

    // Stop: the agent sees goalsPaused and stands still. After the stand-still order it sends on
    // seeing the pause has been handled (2 ticks), position, action, XP and logs stay as they are
    // for three gathering intervals, and it sends no command at all.
    mark = agent.log.mark();
    const stop = await request("POST", `/api/agents/${agentId}/goal/stop`, { token: ownerToken });
    assert.equal(stop.body.goalsPaused, true);
    await agent.log.waitFor("state", (e) => e.to === "paused", { since: mark, timeoutMs: WAIT });
    await ticks(2);
    const player = server.world.player(characterId)!;
    const before = { x: player.x, z: player.z, xp: player.skills.woodcutting.xp, logs: logsIn(agent.log.last("player:sync").inventory) };
    assert.equal(player.action, null);
    assert.deepEqual(player.path, []);
    const quiet = agent.log.mark();
    await ticks(3 * GATHER_INTERVAL_TICKS);
    assert.deepEqual({ x: player.x, z: player.z, xp: player.skills.woodcutting.xp, logs: logsIn(agent.log.last("player:sync").inventory) }, before);
    assert.equal(player.action, null);
    assert.deepEqual(player.path, []);
    const commands = agent.log.events.slice(quiet).filter((e) => ACTIONS.has(e.type));
    assert.deepEqual(commands, [], "no command while paused");
    // The only command since the stop is the stand-still move onto its own tile.
    const sinceStop = agent.log.events.slice(mark).filter((e) => ACTIONS.has(e.type));
    assert.ok(
      sinceStop.every((e) => e.type === "sent:player:move" && e.data.x === before.x && e.data.z === before.z),
      JSON.stringify(sinceStop),
    );

    // Resume (the owner's token): the agent sets its goal again and chops on.
    mark = agent.log.mark();
    const resume = await request("POST", `/api/agents/${agentId}/goal/resume`, { token: ownerToken });
    assert.equal(resume.body.goalsPaused, false);
    await agent.log.waitFor("player:sync", (s) => !s.goalsPaused && s.goal?.setBy === "agent", { since: mark, timeoutMs: WAIT });
    await agent.log.waitFor("sent:player:action", (a) => a.action === "gather", { since: mark, timeoutMs: WAIT });
    await agent.log.waitFor("skill:xp", (x) => x.skill === "woodcutting", { since: mark, timeoutMs: WAIT });

    agent.controller.abort();
    assert.equal(await agent.finished, "stopped");
  });

  it("plays the character of an agent token it is given", async () => {
    const owner = await request("POST", "/api/auth/anonymous", { body: {} });
    const character = await request("POST", "/api/character", { token: owner.body.token, body: { name: uniqueName("Axe") } });
    assert.equal(character.status, 201);
    const creds = await request("POST", "/api/agent/register", { token: owner.body.token, body: { characterId: character.body.id } });
    assert.equal(creds.status, 201);
    const agent = start({ token: creds.body.token });
    const ready = await agent.log.waitFor("ready", undefined, { timeoutMs: WAIT });
    assert.deepEqual([ready.agentId, ready.characterId], [creds.body.agentId, character.body.id]);
    const sync = await agent.log.waitFor("player:sync", undefined, { timeoutMs: WAIT });
    assert.equal(sync.id, character.body.id);
    assert.equal(sync.isAgent, true);
    await agent.log.waitFor("sent:player:action", (a) => a.action === "gather", { timeoutMs: WAIT });
    agent.controller.abort();
    assert.equal(await agent.finished, "stopped");
  });

  it("stops with an error when the server refuses its token", async () => {
    const agent = start({ token: "not-a-token" });
    const outcome = await agent.finished;
    assert.ok(outcome instanceof Error);
    assert.match(outcome.message, /401/);
  });
});
