/**
 * A world room's capacity (docs/rooms.md#seats-and-full-worlds). Colyseus counts every reserved seat
 * toward `maxClients` for its whole `seatReservationTimeout`, taken or not, so a client reserving
 * seats in a loop could make a world "full" with nobody in it. Here a world is full by its players
 * online (both transports) plus a bounded number of fresh seats (`worldFull`); an account holds one
 * pending seat (src/net/seat-ledger.ts), and a replaced seat is refused when its client comes.
 */
import { ServerError, type Room } from "@colyseus/core";
import type { Logger } from "../../src/logger.js";
import type { Admission } from "../../src/net/admission.js";
import type { World } from "../../src/world/world.js";

/** 409 close of a seat replaced by a newer seat of the same account (its client should use the newer one). */
export const SEAT_REPLACED = "SEAT_REPLACED";

/** What the listing last said (`publishPopulation`). */
export interface Population {
  players: number;
  seats: number;
}

/**
 * The refusal of a seat's client at the room's `onJoin`, before anything is loaded: a seat its
 * account replaced since (409 `SEAT_REPLACED`), or a world whose players fill it (503 `WORLD_FULL`).
 * @throws ServerError
 */
export function checkSeat(admission: Admission | undefined, sessionId: string, full: boolean, world: number): void {
  if (admission?.seats.superseded(sessionId)) throw new ServerError(409, `${SEAT_REPLACED}: a newer seat of this account replaced this one; use that one`);
  if (full) throw new ServerError(503, `WORLD_FULL: world ${world} is full; try another world`);
}

/**
 * Publish the world's population in its listing when it changed: `world` (joins filter by it),
 * `players` online and `seats` reserved and not taken in this process (GET /api/v1/worlds and the
 * WORLD_FULL routing read them, `worldFull`). Colyseus locks the listing when `hasReachedMaxClients`
 * holds at a seat reservation and unlocks it only when one of its own clients leaves: `/ws` players
 * count here too, so the lock is set again from the population (`setMatchmaking`, which re-evaluates it).
 */
export function publishPopulation(
  room: Pick<Room, "locked" | "maxClients" | "setMetadata" | "setMatchmaking">,
  deps: { world: Pick<World, "playersOnline">; worldNumber: number; admission?: Admission; logger: Logger },
  full: boolean,
  last: Population | undefined,
): Population {
  const onError = (e: unknown) => deps.logger.warn({ err: e }, "world room: listing update failed");
  if (room.locked !== full) room.setMatchmaking({ maxClients: room.maxClients }).catch(onError);
  const now = { players: deps.world.playersOnline(), seats: deps.admission?.seats.pendingIn(deps.worldNumber) ?? 0 };
  if (last && last.players === now.players && last.seats === now.seats) return last;
  room.setMetadata({ world: deps.worldNumber, ...now }).catch(onError);
  return now;
}
