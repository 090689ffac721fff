/** Matchmaking authentication of a world join (the world room's static `onAuth`). */
import { ServerError, type AuthContext } from "@colyseus/core";
import type { Principal } from "../../src/auth/service.js";
import type { Admission } from "../../src/net/admission.js";
import { CLIENT_ADDRESS_HEADER } from "../../src/net/colyseus.js";
import type { SocketGate } from "../../src/net/socket-gate.js";
import { WorldError } from "../../src/world/errors.js";

/** What `onAuth` hands `onJoin`: the principal and the address it was checked against. */
export type WorldAuth = Principal & { address?: string };

/**
 * Matchmaking authentication: the SDK's `client.auth.token`. In anonymous mode a client without
 * a token gets a temporary identity. Blocked accounts and addresses are refused (429); an invalid
 * token and an anonymous identity count as authentication attempts of the address.
 */
export async function authorizeJoin({ gate, admission }: { gate: SocketGate; admission?: Admission }, token: string, context: AuthContext): Promise<WorldAuth> {
  // The matchmaking middleware puts the address here (never Colyseus's header-trusting context.ip).
  const address = context.headers.get(CLIENT_ADDRESS_HEADER) ?? undefined;
  const left = gate.blockedFor(undefined, address);
  if (left > 0) throw new ServerError(429, `temporarily blocked; try again in ${left} s`);
  const authenticate = () => gate.authenticate(token, address);
  // Inside the matchmaking request's admission slot; a storage failure is a 503 SERVER_BUSY refusal.
  const principal = await (admission ? admission.guardJoin(authenticate) : authenticate());
  if (!principal) throw new ServerError(401, "missing or invalid token");
  if (gate.blockedFor(principal.accountId) > 0) throw new ServerError(429, "temporarily blocked for flooding");
  return { ...principal, address };
}


/** A world refusal (`WorldError`) as the Colyseus error the matchmaker and the SDK expect. */
export function asServerError(e: unknown): never {
  throw e instanceof WorldError ? new ServerError(e.status, e.message) : e;
}
