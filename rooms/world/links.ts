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
