/**
 * Players leaving the world other than one by one (`Connections.leave`): a player dropped because
 * its lease is lost (docs/cluster.md "What a cluster guarantees"), and everyone at shutdown
 * (docs/persistence.md "Shutdown"). `remove` is the one way a leaving player is taken out.
 */
import type { Logger } from "../logger.js";
import { CLOSE_CODES } from "../events.js";
import type { SpatialGrid } from "./grid.js";
import type { PlayerQueues } from "./player-queues.js";
import type { Player } from "./player.js";
import type { Movement } from "./systems/movement.js";
import type { Saving } from "./systems/saving.js";
import type { WorldState } from "./systems/world-state.js";
import type { WorldEvents } from "./world-events.js";

export interface DeparturesDeps {
  players: Map<string, Player>;
  playerGrid: SpatialGrid<Player>;
  events: WorldEvents;
  movement: Movement;
  saving: Saving;
  queues: PlayerQueues;
  state: WorldState;
  logger: Logger;
  worldNumber: number;
}

export class Departures {
  constructor(private readonly d: DeparturesDeps) {}

  /** Take a leaving player out of the world (its trade interrupted). */
  remove(p: Player): void {
    if (p.tradeId) this.d.events.emit("tradeInterrupted", p.id, "disconnected");
    this.d.players.delete(p.id);
    this.d.playerGrid.delete(p.id);
    this.d.events.emit("playerRemoved", p.id);
  }

  /**
   * The player's lease is lost (taken over by another process after it expired, or refused by the
   * fence on a write): final for this player in memory. It is removed without writing anything (no
   * leave save: what it did since its last save is lost, never written over what the new holder
   * loaded), its trade is interrupted, its connection closed with REPLACED, and one line is logged.
   * Only the player loaded under `epoch`, when given (a newer player of the character is not
   * touched). @returns whether a player was dropped.
   */
  dropLost(characterId: string, why: string, epoch?: string): boolean {
    const p = this.d.players.get(characterId);
    if (!p || p.leaseLost || (epoch !== undefined && p.fence?.epoch !== epoch)) return false;
    p.leaseLost = true;
    // Never written again, whatever is still queued for it (the fence would refuse it anyway).
    p.safety.markStale();
    this.remove(p);
    this.d.movement.stop(p);
    p.connection?.close(CLOSE_CODES.REPLACED, "playing in another world");
    p.connection = undefined;
    this.logLost(characterId, why);
    return true;
  }

  /** The one log line of a player dropped for a lost lease. */
  logLost(characterId: string, why: string): void {
    this.d.logger.error({ characterId, world: this.d.worldNumber, why }, "character lease lost; player dropped without saving");
  }

  /**
   * Shutdown: every player leaves at once — its trade interrupted, saved once with its items, its
   * session closed — `batch` players a transaction, `parallel` transactions at once
   * (`Saving.saveLeavingTogether`), then every storage queue is drained and the world state
   * written. Leave saves are no longer retried (shutdown has its own budget), and a player whose
   * lease is lost is not written.
   */
  async leaveAll(reason: string, batch: number, parallel: number): Promise<void> {
    const { players, events } = this.d;
    this.d.saving.stopRetrying();
    const leaving = [...players.values()];
    // Everyone out before anyone's removal is told, so a room updates no leaving viewer's view.
    for (const p of leaving) if (p.tradeId) events.emit("tradeInterrupted", p.id, "disconnected");
    for (const p of leaving) this.d.playerGrid.delete(p.id);
    players.clear();
    for (const p of leaving) events.emit("playerRemoved", p.id);
    await this.d.saving.saveLeavingTogether(leaving, reason, batch, parallel);
    for (const p of leaving) events.emit("playerLeft", p.id);
    await this.d.queues.drain();
    await this.d.state.flush().catch((e: unknown) => this.d.logger.error({ err: e }, "shutdown: world state not saved"));
  }
}
