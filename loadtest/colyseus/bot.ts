/**
 * One load-test player for `@colyseus/loadtest` (world.ts runs it, one call per client): joins the
 * existing world room with a bot token, then walks a tile or two at a time around where it stands
 * and now and then says something in public chat, as a light player would.
 *
 * It only ever joins a room that exists (`join` by name, or `joinById`): the world room is created
 * by the server at start-up, and clients never create rooms.
 */
import { Client, type Room } from "@colyseus/sdk";
import { CLIENT_EVENTS } from "../../src/events.js";

/** What `@colyseus/loadtest` hands each client (the fields this bot reads). */
export interface LoadtestOptions {
  endpoint: string;
  roomName?: string;
  roomId?: string;
  clientId: number;
}

export interface WorldBotSettings {
  /** The token of client `clientId`. */
  tokenFor(clientId: number): string;
  /** How often the bot takes a walk step. */
  moveEveryMs: number;
  /** Chance per step to also send a chat line. */
  chatChance: number;
  rng?: () => number;
  /** Where the bot reports what happened to it (the loadtest screen's log by default). */
  log?: (line: string) => void;
}

/** Payloads checked against the shared event table, as the server will. */
function payload<E extends keyof typeof CLIENT_EVENTS>(event: E, data: unknown) {
  return CLIENT_EVENTS[event].parse(data);
}

/** Joins and starts walking; resolves with the room once joined. The bot stops when it leaves. */
export async function worldBot(options: LoadtestOptions, settings: WorldBotSettings): Promise<Room> {
  const rng = settings.rng ?? Math.random;
  const log = settings.log ?? ((line: string) => console.log(line));
  const client = new Client(options.endpoint);
  client.auth.token = settings.tokenFor(options.clientId);
  const room = options.roomId ? await client.joinById(options.roomId, {}) : await client.join(options.roomName ?? "world", {});

  let id = "";
  room.onMessage("player:sync", (s: { id: string }) => {
    id ||= s.id;
  });
  room.onMessage("*", () => undefined);

  const timer = setInterval(() => {
    const me = room.state?.players?.get(id) as { x: number; z: number; moving: boolean } | undefined;
    if (!me || me.moving) return;
    const step = () => Math.floor(rng() * 5) - 2;
    const x = me.x + step();
    const z = me.z + step();
    if (x !== me.x || z !== me.z) room.send("player:move", payload("player:move", { x, z }));
    if (rng() < settings.chatChance) room.send("player:chat", payload("player:chat", { text: `hello from bot ${options.clientId}` }));
  }, settings.moveEveryMs);
  timer.unref?.();

  room.onLeave((code: number) => {
    clearInterval(timer);
    log(`bot ${options.clientId} left the room (code ${code})`);
  });
  room.onError((code: number, message?: string) => log(`bot ${options.clientId} error ${code}: ${message ?? ""}`));
  return room;
}
