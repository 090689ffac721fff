/** Matchmaking authentication of a world join (the world room's static `onAuth`). */
import { generateId, ServerError, type AuthContext } from "@colyseus/core";
import type { Principal } from "../../src/auth/service.js";
import { CLIENT_ADDRESS_HEADER } from "../../src/net/colyseus.js";
import type { SocketGate } from "../../src/net/socket-gate.js";
import { WorldError } from "../../src/world/errors.js";
import { MATCHMAKE_RATE_LIMITED, type Admission } from "../../src/net/admission.js";

/**
 * What `onAuth` hands `onJoin`: the principal and the address it was checked against; and the
 * session id of the seat (Colyseus reserves the seat under it), counted by admission control until
 * its client enters.
 */
export type WorldAuth = Principal & { address?: string; sessionId?: string };

/** What the world room type's `onAuth` works with. */
export interface JoinAuthDeps {
  gate: SocketGate;
  admission?: Admission;
  /** Whether this process hosts the world a join goes to (its seat is then counted here). */
  hosts?: (world: number) => boolean;
  /** Counts the account's matchmaking request (`Limits.countMatchmake`): seconds to wait when over its limit, else 0. */
  countMatchmake?: (accountId: string) => Promise<number>;
}

/**
 * Who holds one pending seat and one matchmaking budget: the account, or for a token bound to one
 * character (an agent's, minted by the operator) that character, so an account's agents joining
 * at once do not replace each other's seats (docs/rooms.md#seats-and-full-worlds).
 */
export const seatHolder = (p: Principal): string => (p.characterId ? `${p.accountId}/${p.characterId}` : p.accountId);

/**
 * Matchmaking authentication: the SDK's `client.auth.token`. In anonymous mode a client without
 * a token gets a temporary identity. Blocked accounts and addresses are refused (429); an invalid
 * token and an anonymous identity count as authentication attempts of the address.
 */
export async function authorizeJoin(
  { gate, admission, hosts, countMatchmake }: JoinAuthDeps,
  token: string,
  context: AuthContext,
  options?: { world?: unknown },
): Promise<WorldAuth> {
  // The matchmaking middleware puts the address here (never Colyseus's header-trusting context.ip).
  const address = context.headers.get(CLIENT_ADDRESS_HEADER) ?? undefined;
  const left = gate.blockedFor(undefined, address);
  if (left > 0) throw new ServerError(429, `temporarily blocked; try again in ${left} s`);
  const authenticate = () => gate.authenticate(token, address);
  // Inside the matchmaking request's admission slot; a storage failure is a 503 SERVER_BUSY refusal.
  const principal = await (admission ? admission.guardJoin(authenticate) : authenticate());
  if (!principal) throw new ServerError(401, "missing or invalid token");
  if (gate.blockedFor(principal.accountId) > 0) throw new ServerError(429, "temporarily blocked for flooding");
  // The account's matchmaking limit (docs/http.md#matchmaking-requests); the guard answers it with Retry-After.
  const wait = (await countMatchmake?.(seatHolder(principal))) ?? 0;
  if (wait > 0) throw new ServerError(429, `${MATCHMAKE_RATE_LIMITED}: too many matchmaking requests for this account; retry in ${wait} s`);
  // The seat's session id, chosen here so that a seat of a world hosted in this process counts
  // among the seats waiting for their client (src/net/seat-ledger.ts) until it enters.
  const sessionId = generateId();
  if (admission && typeof options?.world === "number" && hosts?.(options.world)) admission.seats.reserve(sessionId, seatHolder(principal), options.world);
  return { ...principal, address, sessionId };
}

/** A world refusal (`WorldError`) as the Colyseus error the matchmaker and the SDK expect. */
export function asServerError(e: unknown): never {
  throw e instanceof WorldError ? new ServerError(e.status, e.message) : e;
}
