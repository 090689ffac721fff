/**
 * A player's stay in the world as its connection sees it: the join that puts a character in (or
 * hands the lingering player to the new connection), the drop that starts its reconnection window,
 * the reconnection, and the leave one by one (held while the player is in combat). The world's
 * `join`, `drop`, `reconnect`, `connectedPlayer` and `leave` are these; leaves of many players at
 * once (a lost lease, the shutdown) are `Departures`'.
 */
import type { GameContent } from "../content/load.js";
import type { WorldClock } from "./clock.js";
import type { Departures } from "./departures.js";
import type { SpatialGrid } from "./grid.js";
import type { OutOfWorldGate } from "./out-of-world.js";
import { Player, type Connection } from "./player.js";
import type { CharacterRecord } from "./ports/character-store.js";
import { inCombat } from "./systems/combat.js";
import type { Movement } from "./systems/movement.js";
import type { Prayers } from "./systems/prayers.js";
import type { Saving } from "./systems/saving.js";
import type { WorldEvents } from "./world-events.js";

export interface ConnectionsDeps {
  players: Map<string, Player>;
  playerGrid: SpatialGrid<Player>;
  content: GameContent;
  clock: WorldClock;
  events: WorldEvents;
  /** Refuses a join while an out-of-world change of the character is under way. */
  gate: OutOfWorldGate;
  movement: Movement;
  prayers: Prayers;
  saving: Saving;
  departures: Departures;
}

export class Connections {
  constructor(private readonly d: ConnectionsDeps) {}

  /**
   * Put a character in the world, or hand an existing one (lingering after a drop, or connected
   * elsewhere) to the new connection. The old connection is closed with `replacedCode`.
   */
  join(record: CharacterRecord, connection: Connection, replacedCode: number): { player: Player; resumed: boolean } {
    const { players, content } = this.d;
    const existing = players.get(record.character.id);
    if (existing) {
      const old = existing.connection;
      existing.connection = connection;
      existing.dropped = undefined;
      existing.leaving = undefined;
      if (old && old.id !== connection.id) old.close(replacedCode, "replaced by a new connection");
      existing.sync();
      return { player: existing, resumed: true };
    }
    this.d.gate.assertMayJoin(record.character.id, record);
    const player = new Player(record);
    player.connection = connection;
    // Its items are being settled (a trade): it was built from rows that may predate the
    // settlement, and stays locked until the settlement has put the committed items in it.
    if (this.d.saving.itemsHeld(player.id)) player.safety.lock();
    if (!content.inBounds(player.x, player.z) || content.isBlocked(player.x, player.z)) {
      player.x = content.spawn.x;
      player.z = content.spawn.z;
    }
    if (player.health <= 0) player.health = player.maxHealth;
    this.d.prayers.restore(player);
    players.set(player.id, player);
    this.d.playerGrid.set(player, player.x, player.z);
    player.sync();
    return { player, resumed: false };
  }

  /**
   * The connection dropped; the player stays for the world's `reconnectSeconds` unless it
   * reconnects. The tick ends that window, unless `seat`: the connection holds a reconnection seat
   * whose own timer ends it (an SDK client's `allowReconnection`; its expiry calls `leave`), so one
   * timer owns the window and a reconnection within the seat always finds its player.
   */
  drop(playerId: string, connectionId: string, seat = false): void {
    const p = this.d.players.get(playerId);
    if (!p || p.connection?.id !== connectionId) return;
    p.connection = undefined;
    p.dropped = { at: this.d.clock.now(), connectionId, seat };
    this.d.movement.stop(p);
    if (p.tradeId) this.d.events.emit("tradeInterrupted", p.id, "disconnected");
  }

  /**
   * The connection that dropped comes back (SDK reconnection, same connection object). Refused
   * (undefined) unless the player is still here with no live connection and this is the very
   * connection that dropped: a fresh join in between, or a later drop of that fresh connection,
   * makes the old one stale.
   */
  reconnect(playerId: string, connection: Connection): Player | undefined {
    const p = this.d.players.get(playerId);
    if (!p || p.connection || p.dropped?.connectionId !== connection.id) return undefined;
    p.connection = connection;
    p.dropped = undefined;
    p.sync();
    return p;
  }

  /**
   * The player if `connectionId` is still its live connection; undefined when the player is gone
   * or the connection was replaced or dropped.
   */
  connectedPlayer(playerId: string, connectionId: string): Player | undefined {
    const p = this.d.players.get(playerId);
    return p?.connection?.id === connectionId ? p : undefined;
  }

  /**
   * Remove a player: interrupt its trade, save it, close its session. Resolves when saved.
   * With `connectionId`, only that connection's player goes: the live one, or the one that dropped
   * and is waiting for it; a connection that was replaced or went stale removes nothing.
   * A player in combat (`inCombat`) is not removed unless `force` (shutdown, a kick, a reload): it
   * loses its connection and stays until the tick finds it out of combat, then leaves with `reason`.
   */
  async leave(playerId: string, reason: string, connectionId?: string, force = false): Promise<void> {
    const p = this.d.players.get(playerId);
    if (!p) return;
    if (connectionId && (p.connection ? p.connection.id : p.dropped?.connectionId) !== connectionId) return;
    if (!force && inCombat(p, this.d.clock.now())) {
      // No logging out of a fight: the player stays, without a connection, until the tick finds it
      // out of combat (docs/protocol.md "Leaving in combat").
      const gone = p.connection?.id ?? p.dropped?.connectionId ?? "";
      if (p.connection) this.drop(p.id, p.connection.id);
      p.dropped = { at: p.dropped?.at ?? this.d.clock.now(), connectionId: gone, seat: false };
      p.leaving = reason;
      return;
    }
    this.d.departures.remove(p);
    await this.d.saving.saveOnLeave(p, reason);
    this.d.events.emit("playerLeft", playerId);
  }
}
