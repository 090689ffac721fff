/**
 * Which world a matchmaking `join("world", { world })` goes to (docs/operations.md "Worlds"), decided from the
 * room listings (`matchMaker.query`), so it sees every process's worlds once the listings are
 * shared. Without `world`: world 1 when listed, else the lowest. The join options are rewritten
 * with the number, which the room type filters by (`filterBy(["world"])`).
 */
import { matchMaker } from "@colyseus/core";

/** Seconds a client is told to wait before retrying a full world. */
export const WORLD_FULL_RETRY_SECONDS = 30;

/** One world as its room listing shows it. */
export interface WorldListing {
  world: number;
  /** Players online (both transports), as the room last published it. */
  players: number;
  maxPlayers: number;
  full: boolean;
  /** Where the room's process accepts connections, when the listing says (`publicAddress`). */
  publicAddress?: string;
}

export type WorldRoute =
  | { ok: true; world: number; options: Record<string, unknown> }
  | { ok: false; status: 400 | 404 | 503; code: "INVALID_WORLD" | "WORLD_NOT_FOUND" | "WORLD_FULL"; message: string };

/**
 * Fresh seat reservations a world's "full" counts at most: a tenth of its capacity, at least one.
 * Seats reserved and never taken (one account in a loop, many accounts that never connect) can
 * close only that margin, never the world (docs/rooms.md#seats-and-full-worlds).
 */
export function countedSeats(seats: number, maxPlayers: number): number {
  return Math.min(Math.max(0, seats), Math.max(1, Math.floor(maxPlayers / 10)));
}

/** Is a world full: its players online plus the fresh seats counted (`countedSeats`) reach its capacity. */
export function worldFull(players: number, seats: number, maxPlayers: number): boolean {
  return players + countedSeats(seats, maxPlayers) >= maxPlayers;
}

/** Every world room listed, by world number, ascending. */
export async function listWorlds(): Promise<WorldListing[]> {
  const byWorld = new Map<number, WorldListing>();
  for (const room of await matchMaker.query({ name: "world" })) {
    const meta = (room.metadata ?? {}) as { world?: unknown; players?: unknown; seats?: unknown };
    if (typeof meta.world !== "number") continue;
    const players = typeof meta.players === "number" ? meta.players : 0;
    const maxPlayers = room.maxClients;
    byWorld.set(meta.world, {
      world: meta.world,
      players,
      maxPlayers,
      // Not `room.clients`: Colyseus counts every reserved seat there, taken or not, for its whole timeout.
      full: worldFull(players, typeof meta.seats === "number" ? meta.seats : 0, maxPlayers),
      ...(room.publicAddress ? { publicAddress: room.publicAddress } : {}),
    });
  }
  return [...byWorld.values()].sort((a, b) => a.world - b.world);
}

/** Check and route the `world` option of a world join. */
export async function routeWorldJoin(options: Record<string, unknown>): Promise<WorldRoute> {
  const asked = options.world;
  if (asked !== undefined && (typeof asked !== "number" || !Number.isInteger(asked) || asked < 1 || asked > 999_999)) {
    return { ok: false, status: 400, code: "INVALID_WORLD", message: "world must be a world number (a positive integer)" };
  }
  const listed = await listWorlds();
  const numbers = listed.map((w) => w.world).join(",") || "none";
  const target = asked === undefined ? (listed.find((w) => w.world === 1) ?? listed[0]) : listed.find((w) => w.world === asked);
  if (!target)
    return {
      ok: false,
      status: 404,
      code: "WORLD_NOT_FOUND",
      message: `no world ${String(asked ?? "")}; worlds: ${numbers}`.replace("no world ;", "no world;"),
    };
  if (target.full) return { ok: false, status: 503, code: "WORLD_FULL", message: `world ${target.world} is full; try another world (worlds: ${numbers})` };
  return { ok: true, world: target.world, options: { ...options, world: target.world } };
}

/**
 * The plain WebSocket URL of world `w`: at the public address of the process hosting it (its
 * listing's `publicAddress`, PUBLIC_WS_URL of that process), with the scheme of this process's
 * `ownWsUrl`; this process's own address when the listing has none (a single process).
 */
export function worldWsUrl(w: Pick<WorldListing, "world" | "publicAddress">, ownWsUrl: string): string {
  const base = w.publicAddress ? `${ownWsUrl.startsWith("wss:") ? "wss" : "ws"}://${w.publicAddress.replace(/\/+$/, "")}` : ownWsUrl.replace(/\/+$/, "");
  return `${base}?world=${w.world}`;
}

/** Where a `/ws` client asking for world `n` should go, when another process lists it; undefined when no process does. */
export async function locateWorld(n: number, ownWsUrl: string): Promise<string | undefined> {
  const listed = (await listWorlds()).find((w) => w.world === n);
  return listed?.publicAddress ? worldWsUrl(listed, ownWsUrl) : undefined;
}
