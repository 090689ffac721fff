/** A world room's connections (rooms/WorldRoom.ts): one link per connected client, SDK or plain WebSocket. */
import { randomUUID } from "node:crypto";
import type { Client } from "@colyseus/core";
import type { Metrics } from "../../src/metrics.js";
import { FloodMeter } from "../../src/net/flood.js";
import type { Connection } from "../../src/world/player.js";
import type { SdkVisibility, WorldUpdates } from "./views.js";

/** A connected client, SDK or plain WebSocket: the player's `Connection` plus what the room keeps for it. */
export interface ClientLink extends Connection, SdkVisibility {
  playerId: string;
  accountId: string;
  flood: FloodMeter;
  /** SDK clients: the close code, once the server has closed this connection (no reconnection seat then). */
  closedCode?: number;
  /** SDK clients: the Colyseus client whose view is kept in step with the world. */
  client?: Client;
  /** `/ws` clients: what this client has been told, for world:update deltas. */
  updates?: WorldUpdates;
}

/** What an SDK client carries for the room (`client.userData`; Colyseus hands it to the client that reconnects in its place). */
interface SdkUserData {
  linkId: string;
  link?: ClientLink;
}

/**
 * The link of an SDK client that has joined (and not left), from the client itself: a message's
 * handler finds it there, with no lookup by session id in the room's map.
 */
export const linkOfClient = (client: Client): ClientLink | undefined => (client.userData as SdkUserData | undefined)?.link;

/** The SDK client has joined with `link`: `links` finds it by session id, and the client carries it (`linkOfClient`). */
export function attachLink(links: Map<string, ClientLink>, client: Client, link: ClientLink): void {
  client.userData = { linkId: link.id, link } satisfies SdkUserData;
  links.set(client.sessionId, link);
}

/** The SDK client is gone for good: neither `links` nor the client holds its link any more. */
export function detachLink(links: Map<string, ClientLink>, client: Client): void {
  links.delete(client.sessionId);
  const data = client.userData as SdkUserData | undefined;
  if (data) data.link = undefined;
}

/** A link for a new connection; `write` delivers one event to the client, `close` closes it; every event sent is counted. */
export function newLink(
  metrics: Metrics | undefined,
  kind: ClientLink["kind"],
  accountId: string,
  remoteAddress: string | undefined,
  write: (event: string, data: unknown) => void,
  close: ClientLink["close"],
): ClientLink {
  return {
    id: randomUUID(),
    kind,
    playerId: "",
    accountId,
    remoteAddress,
    flood: new FloodMeter(),
    send: (event, data) => {
      metrics?.messageOut(event);
      write(event, data);
    },
    close,
  };
}
