/**
 * AI agents (docs/rest.md#agents): registering a character as an agent and issuing its
 * credentials, listing and revoking them, and the goal/pause controls with quick-action data.
 *
 * Credentials: a server token bound to the character (`characterId` claim) whose `jti` is the
 * mapping's `tokenId`. The auth service accepts it only while the mapping row holds that `tokenId`
 * unrevoked, so re-registering or revoking stops the old token at the next request; open
 * connections are closed through the world.
 *
 * Goals: the world owns the live copy (movement cancel on pause, `player:sync`), storage the
 * durable one. A change is applied to the world first, then written to the row, so a batched save
 * racing with it can only write the new value.
 */
import { randomUUID } from "node:crypto";
import { AgentMappingEntity, type AgentMapping } from "../../entities/agent.js";
import { CharacterEntity, type StoredGoal } from "../../entities/character.js";
import type { GameContent } from "../content/load.js";
import { maxHealth } from "../domain/combat.js";
import { INVENTORY_SIZE, type SkillName } from "../domain/types.js";
import { agentMappingRows } from "../storage/agents.js";
import type { Storage } from "../storage/orm.js";
import type { Surroundings, WorldAccess } from "../world/access.js";
import type { CharacterService, PlayerView } from "./characters.js";
import { conflict, missing } from "./errors.js";
import { availableGoals, buildGoal, pauseAfterGoal, type AvailableGoal, type GoalRequest } from "./goals.js";

/** Agent tokens live 30 days. */
export const AGENT_TOKEN_TTL_SECONDS = 30 * 24 * 3600;
/** Radius of quick-action surroundings, in tiles (within what a player sees, docs/protocol.md#interest-management). */
export const QUICK_ACTION_RADIUS = 16;
/** Close code sent to an agent connection whose token was revoked or replaced. */
export const AGENT_REVOKED_CLOSE_CODE = 4003;

/** Signs a bound server token (AuthService.sign). */
export type TokenSigner = (
  claims: { sub: string; characterId: string; jti: string; name?: string },
  ttlSeconds: number,
) => { token: string; expiresAt: string };

export interface AgentServiceDeps {
  storage: Storage;
  content: GameContent;
  world: WorldAccess;
  characters: CharacterService;
  sign: TokenSigner;
  /** Where agents connect: the plain `/ws` socket and the Colyseus SDK endpoint. */
  endpoints: { wsUrl: string; sdkEndpoint: string };
  now?: () => Date;
}

export interface AgentCredentials {
  agentId: string;
  characterId: string;
  name: string;
  token: string;
  expiresAt: string;
  wsUrl: string;
  sdkEndpoint: string;
}

export interface AgentSummary {
  agentId: string;
  characterId: string;
  accountId: string;
  name: string;
  active: boolean;
  online: boolean;
  createdAt: string;
  revokedAt: string | null;
}

/** The answer of stop and resume (docs/rest.md#agents). */
export interface GoalControlResult {
  success: true;
  goal: StoredGoal | null;
  goalsPaused: boolean;
  availableGoals: Omit<AvailableGoal, "target">[];
}

export interface GoalState {
  goal: StoredGoal | null;
  goalsPaused: boolean;
  online: boolean;
}

export interface QuickActions {
  agentId: string;
  characterId: string;
  online: boolean;
  /** `live`: from the running world; `content`: static content around the stored position. */
  source: "live" | "content";
  position: { x: number; y: number; z: number };
  nearby: Surroundings;
  goal: StoredGoal | null;
  goalsPaused: boolean;
  availableGoals: Omit<AvailableGoal, "target">[];
  inventory: PlayerView["inventory"];
  freeSlots: number;
  coins: number;
}

export class AgentService {
  private readonly now: () => Date;

  constructor(private readonly deps: AgentServiceDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  // ---- credentials --------------------------------------------------------------------------

  /**
   * Register a character (owned by `accountId`, checked by the caller) as an agent: set its flag,
   * create or re-key its mapping (the agent id stays the same) and issue a token. A previous live
   * token stops working and its connection is closed.
   */
  async register(accountId: string, characterId: string): Promise<AgentCredentials> {
    const tokenId = randomUUID();
    const { mapping, replacedLive, name } = await this.em().transactional(async (em) => {
      const character = await em.findOne(CharacterEntity, { id: characterId });
      if (!character) throw missing("character");
      character.isAgent = true;
      let mapping = await em.findOne(AgentMappingEntity, { characterId });
      const replacedLive = !!mapping && !mapping.revokedAt;
      if (mapping) {
        mapping.tokenId = tokenId;
        mapping.revokedAt = null;
      } else {
        mapping = em.create(AgentMappingEntity, { id: randomUUID(), characterId, accountId, tokenId, createdAt: this.now() });
      }
      await em.flush();
      return { mapping, replacedLive, name: character.name };
    });
    if (replacedLive && (await this.deps.world.isInWorld(characterId))) {
      await this.deps.world.disconnect(characterId, AGENT_REVOKED_CLOSE_CODE, "agent token replaced");
    }
    await this.deps.world.setAgentFlag(characterId, true);
    const { token, expiresAt } = this.deps.sign({ sub: accountId, characterId, jti: tokenId, name }, AGENT_TOKEN_TTL_SECONDS);
    return { agentId: mapping.id, characterId, name, token, expiresAt, ...this.deps.endpoints };
  }

  /** The mapping of an agent id, or null. */
  async find(agentId: string): Promise<AgentMapping | null> {
    return this.em().findOne(AgentMappingEntity, { id: agentId });
  }

  /** The mapping of a character, or null. */
  async findByCharacter(characterId: string): Promise<AgentMapping | null> {
    return this.em().findOne(AgentMappingEntity, { characterId });
  }

  /** One agent as listed. @throws NOT_FOUND. */
  async summary(agentId: string): Promise<AgentSummary> {
    const [s] = await this.summaries({ id: agentId });
    if (!s) throw missing("agent");
    return s;
  }

  /** An account's agents, oldest first. */
  async list(accountId: string): Promise<AgentSummary[]> {
    return this.summaries({ accountId });
  }

  /**
   * Revoke an agent's token: it is refused from the next request on, and the live connection is
   * closed with code 4003. @throws NOT_FOUND, CONFLICT (already revoked).
   */
  async revoke(agentId: string): Promise<AgentSummary> {
    const em = this.em();
    const mapping = await em.findOne(AgentMappingEntity, { id: agentId });
    if (!mapping) throw missing("agent");
    if (mapping.revokedAt) throw conflict("this agent's token is already revoked");
    const updated = await em.nativeUpdate(AgentMappingEntity, { id: agentId, revokedAt: null }, { revokedAt: this.now() });
    if (updated === 0) throw conflict("this agent's token is already revoked");
    const characterId = mapping.characterId as unknown as string;
    await this.deps.world.disconnect(characterId, AGENT_REVOKED_CLOSE_CODE, "agent token revoked");
    return this.summary(agentId);
  }

  // ---- goals ----------------------------------------------------------------------------------

  /** Goal and pause flag, live when online. @throws NOT_FOUND. */
  async goalState(characterId: string): Promise<GoalState> {
    const view = await this.view(characterId);
    return { goal: view.goal ?? null, goalsPaused: view.goalsPaused ?? false, online: view.online };
  }

  /** Goals open to the character now. @throws NOT_FOUND. */
  async availableGoals(characterId: string): Promise<AvailableGoal[]> {
    return this.goalsFor(await this.view(characterId));
  }

  /**
   * Set a goal. The agent's own request is refused while paused (GOALS_PAUSED); the owner's is
   * accepted and clears the pause. @throws NOT_FOUND, INVALID, GOALS_PAUSED.
   */
  async setGoal(characterId: string, request: GoalRequest, setBy: "agent" | "owner"): Promise<GoalState> {
    const view = await this.view(characterId);
    const goalsPaused = pauseAfterGoal(setBy, view.goalsPaused ?? false);
    const goal = buildGoal(request, this.goalsFor(view), setBy, this.now(), randomUUID());
    return this.apply(characterId, goal, goalsPaused);
  }

  /** Stop: clear the goal and pause (the world cancels the movement path). @throws NOT_FOUND. */
  async stop(characterId: string): Promise<GoalControlResult> {
    const view = await this.view(characterId);
    const state = await this.apply(characterId, null, true);
    return this.controlResult(state, view);
  }

  /** Resume autonomous behaviour: unpause, keeping the goal. @throws NOT_FOUND. */
  async resume(characterId: string): Promise<GoalControlResult> {
    const view = await this.view(characterId);
    const state = await this.apply(characterId, view.goal ?? null, false);
    return this.controlResult(state, view);
  }

  /**
   * Deliver a private chat message to an online agent.
   * @throws CONFLICT when the agent is offline (nothing is queued).
   */
  async deliverMessage(characterId: string, from: { id?: string; name: string }, text: string): Promise<void> {
    if (!(await this.deps.world.isOnline(characterId)) || !(await this.deps.world.deliverPrivateMessage(characterId, from, text))) {
      throw conflict("the agent is not online; messages are delivered only to a connected agent");
    }
  }

  /** Quick-action menu data: surroundings, goals and inventory. @throws NOT_FOUND. */
  async quickActions(agentId: string, characterId: string): Promise<QuickActions> {
    const view = await this.view(characterId);
    const live = view.online ? await this.deps.world.surroundings(characterId, QUICK_ACTION_RADIUS) : undefined;
    return {
      agentId,
      characterId,
      online: view.online,
      source: live ? "live" : "content",
      position: view.position,
      nearby: live ?? this.staticSurroundings(view.position.x, view.position.z, QUICK_ACTION_RADIUS),
      goal: view.goal ?? null,
      goalsPaused: view.goalsPaused ?? false,
      availableGoals: this.goalsFor(view).map(withoutTarget),
      inventory: view.inventory,
      freeSlots: INVENTORY_SIZE - new Set(view.inventory.map((s) => s.slot)).size,
      coins: view.coins,
    };
  }

  // ---- internals ------------------------------------------------------------------------------

  private em() {
    return this.deps.storage.orm.em.fork();
  }

  private async view(characterId: string): Promise<PlayerView> {
    const view = await this.deps.characters.currentView(characterId, this.deps.world);
    if (!view) throw missing("character");
    return view;
  }

  private goalsFor(view: PlayerView): AvailableGoal[] {
    const levels = Object.fromEntries(Object.entries(view.skills).map(([s, v]) => [s, v.level])) as Record<SkillName, number>;
    return availableGoals(levels, view.combatLevel, this.deps.content);
  }

  /** World first (memory, movement, player:sync), then the row. */
  private async apply(characterId: string, goal: StoredGoal | null, goalsPaused: boolean): Promise<GoalState> {
    const online = await this.deps.world.applyGoal(characterId, goal, goalsPaused);
    await this.deps.characters.saveGoal(characterId, goal, goalsPaused);
    return { goal, goalsPaused, online };
  }

  private controlResult(state: GoalState, view: PlayerView): GoalControlResult {
    return { success: true, goal: state.goal, goalsPaused: state.goalsPaused, availableGoals: this.goalsFor(view).map(withoutTarget) };
  }

  private async summaries(where: { id?: string; accountId?: string }): Promise<AgentSummary[]> {
    const rows = await agentMappingRows(this.em(), where.id !== undefined ? { id: where.id } : { accountId: where.accountId! });
    return Promise.all(
      rows.map(async (r) => ({
        agentId: r.id as string,
        characterId: r.character_id as string,
        accountId: r.account_id as string,
        name: r.name as string,
        active: r.revoked_at == null,
        online: await this.deps.world.isOnline(r.character_id as string),
        createdAt: new Date(r.created_at as string).toISOString(),
        revokedAt: r.revoked_at == null ? null : new Date(r.revoked_at as string).toISOString(),
      })),
    );
  }

  /** What the content places within `radius` tiles (Chebyshev) when the world cannot say. */
  private staticSurroundings(x: number, z: number, radius: number): Surroundings {
    const { content } = this.deps;
    const dist = (px: number, pz: number) => Math.max(Math.abs(px - x), Math.abs(pz - z));
    const near = <T extends { distance: number }>(list: T[]) => list.filter((e) => e.distance <= radius).sort((a, b) => a.distance - b.distance);
    return {
      stations: near(content.stations.map((s) => ({ id: s.id, type: s.type, name: s.name, x: s.x, z: s.z, distance: dist(s.x, s.z) }))),
      resources: near(
        content.resourceNodes.map((r) => ({
          id: r.id,
          type: r.type,
          skill: content.gatheringNodes.get(r.type)?.skill ?? "unknown",
          x: r.x,
          z: r.z,
          depleted: false,
          distance: dist(r.x, r.z),
        })),
      ),
      npcs: near(
        [...content.npcs.values()].flatMap((n) =>
          n.spawns.map((s, i) => ({
            id: `${n.id}#${i}`,
            npcId: n.id,
            name: n.name,
            x: s.x,
            z: s.z,
            combatLevel: n.combatLevel,
            health: maxHealth(n.stats.constitution),
            distance: dist(s.x, s.z),
          })),
        ),
      ),
      groundItems: [],
    };
  }
}

const withoutTarget = ({ id, type, description }: AvailableGoal) => ({ id, type, description });
