/**
 * The bare Colyseus 0.18 baseline of the world benchmark (`npm run bench:world`): one room named
 * `world`, created by the server at start-up (clients only `join`), everyone in one shared
 * `@colyseus/schema` state (a map of players with `x`, `z` and `moving`), no views, no auth, no
 * storage. It handles the game's `player:move` ({ x, z, run }) on the same tick as the game: a move
 * sets the player's target, each tick steps every moving player 1 tile (2 when running, diagonals
 * allowed, no obstacles) towards it, and the patch leaves at the end of the tick.
 *
 * Join options `{ x, z }` place the player (the bench's spread scenario); otherwise it starts at
 * (0, 0), the game's spawn. On join the client gets `player:sync` `{ id }` (its key in the map), as
 * the game sends its character id. Other messages are ignored.
 *
 *   PORT=2600 TICK_MS=600 [LISTEN_BACKLOG=4096] [SEAT_RESERVATION_SECONDS=30] node --import tsx loadtest/baseline/server.ts
 *
 * `GET /health` and `GET /status` answer JSON, so the bench polls it as it polls the game. When the
 * bench's probe (`loadtest/probe.ts`) is loaded, each tick's duration goes to it.
 */
import { pathToFileURL } from "node:url";
import { Room, Server, ServerError, matchMaker, type Client } from "@colyseus/core";
import { schema, t, type SchemaType } from "@colyseus/schema";
import { WebSocketTransport } from "@colyseus/ws-transport";

const PORT = Number(process.env.PORT ?? 2600);
const TICK_MS = Number(process.env.TICK_MS || 600);
const HOST = process.env.HOST ?? "127.0.0.1";
/** The listening socket's backlog, as the game's LISTEN_BACKLOG (default 4096): both targets queue a burst the same way. */
const BACKLOG = Number(process.env.LISTEN_BACKLOG || 4096);
/** Seconds a reserved seat waits for the room socket, as the game's SEAT_RESERVATION_SECONDS (default 30). */
const SEAT_SECONDS = Number(process.env.SEAT_RESERVATION_SECONDS || 30);

export const BasePlayer = schema({ x: t.int32(), z: t.int32(), moving: t.boolean() }, "BasePlayer");
export type BasePlayer = SchemaType<typeof BasePlayer>;
export const BaseState = schema({ players: t.map(BasePlayer) }, "BaseState");
export type BaseState = SchemaType<typeof BaseState>;

/** Set by the probe when it is loaded: records one tick (wall and CPU microseconds). */
type TickRecorder = (wallUs: number, cpuUs: number) => void;
const recordTick = (): TickRecorder | undefined => (globalThis as { __benchRecordTick?: TickRecorder }).__benchRecordTick;

const LIMIT = 1_000_000;
const coord = (v: unknown): number | undefined => (typeof v === "number" && Number.isInteger(v) && Math.abs(v) <= LIMIT ? v : undefined);
const step = (from: number, to: number, n: number) => (to > from ? Math.min(to, from + n) : Math.max(to, from - n));

export class BaselineRoom extends Room {
  override maxClients = 100_000;
  override autoDispose = false;
  override seatReservationTimeout = SEAT_SECONDS;
  override state = new BaseState();
  private readonly targets = new Map<string, { x: number; z: number; run: boolean }>();

  /** The one room is created by the server at start-up; a client's `create` is refused. */
  static created = false;

  override onCreate() {
    if (BaselineRoom.created) throw new ServerError(403, "rooms are created by the server");
    BaselineRoom.created = true;
    this.setSimulationInterval(() => this.tick(), TICK_MS);
    this.setPatchRate(null);
    this.onMessage("player:move", (client: Client, m: { x?: unknown; z?: unknown; run?: unknown }) => {
      const x = coord(m?.x);
      const z = coord(m?.z);
      if (x === undefined || z === undefined || !this.state.players.has(client.sessionId)) return;
      this.targets.set(client.sessionId, { x, z, run: m.run === true });
    });
    this.onMessage("*", () => undefined);
  }

  override onJoin(client: Client, options: { x?: unknown; z?: unknown }) {
    const p = new BasePlayer();
    p.x = coord(options?.x) ?? 0;
    p.z = coord(options?.z) ?? 0;
    p.moving = false;
    this.state.players.set(client.sessionId, p);
    client.send("player:sync", { id: client.sessionId });
  }

  override onLeave(client: Client) {
    this.state.players.delete(client.sessionId);
    this.targets.delete(client.sessionId);
  }

  private tick() {
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    for (const [id, target] of this.targets) {
      const p = this.state.players.get(id);
      if (!p) {
        this.targets.delete(id);
        continue;
      }
      const n = target.run ? 2 : 1;
      p.x = step(p.x, target.x, n);
      p.z = step(p.z, target.z, n);
      const arrived = p.x === target.x && p.z === target.z;
      p.moving = !arrived;
      if (arrived) this.targets.delete(id);
    }
    this.broadcastPatch();
    const c = process.cpuUsage(c0);
    recordTick()?.(Math.round((performance.now() - t0) * 1000), c.user + c.system);
  }
}

export async function startBaseline(port = PORT, host = HOST): Promise<Server> {
  const startedAt = Date.now();
  const server = new Server({
    transport: new WebSocketTransport({ maxPayload: 16 * 1024 }),
    greet: false,
    // Colyseus's own handler also ends the process on SIGUSR2, which the bench's probe uses.
    gracefullyShutdown: false,
    express: (app) => {
      app.get("/health", (_req, res) => void res.json({ status: "ok" }));
      app.get(
        "/status",
        (_req, res) => void res.json({ status: "ok", uptime: Math.round((Date.now() - startedAt) / 1000), playersOnline: matchMaker.stats.local.ccu }),
      );
    },
  });
  for (const sig of ["SIGINT", "SIGTERM"] as const) process.once(sig, () => void server.gracefullyShutdown(true));
  server.define("world", BaselineRoom);
  await server.listen(port, host, BACKLOG);
  await matchMaker.createRoom("world", {});
  return server;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await startBaseline();
  console.log(`baseline listening on http://${HOST}:${PORT} (tick ${TICK_MS} ms)`);
}
