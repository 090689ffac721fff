/** The REST calls the client makes (docs/rest.md "HTTP API", docs/rest.md "REST API: player, world, characters, social graph, agents, voice"): auth, characters, social graph. */

export interface CharacterSummary {
  id: string;
  name: string;
  combatLevel: number;
  online: boolean;
}
export interface Template {
  id: string;
  name: string;
  description?: string;
}
export interface Friend {
  id: string;
  name: string;
  online: boolean;
}
export interface FriendRequest {
  id: number;
  from: { id: string; name: string };
  to: { id: string; name: string };
}

/** An HTTP error with the server's error code (`{ error: { code, message } }`, docs/http.md). */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export class Api {
  token = "";
  constructor(readonly base: string) {}

  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = {};
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    const r = await fetch(this.base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    if (r.status === 204) return undefined as T;
    const data = (await r.json().catch(() => ({}))) as { error?: { code?: string; message?: string } };
    if (!r.ok) throw new ApiFailure(r.status, data.error?.code ?? String(r.status), data.error?.message ?? `HTTP ${r.status}`);
    return data as T;
  }

  /** Anonymous mode: a temporary account (`POST /api/auth/anonymous`). */
  async anonymous(name?: string): Promise<void> {
    const r = await this.call<{ token: string }>("POST", "/api/auth/anonymous", name ? { name } : {});
    this.token = r.token;
  }

  /** Checks a pasted server token (`GET /api/auth/session`) and keeps it. */
  async useToken(token: string): Promise<void> {
    this.token = token;
    await this.call("GET", "/api/auth/session");
  }

  characters = () => this.call<CharacterSummary[]>("GET", "/api/character");
  templates = () => this.call<Template[]>("GET", "/api/template");
  createCharacter = (name: string, templateId?: string) =>
    this.call<{ id: string }>("POST", "/api/character", { name: name || undefined, templateId: templateId || undefined });
  friends = (characterId: string) => this.call<Friend[]>("GET", `/api/player/${encodeURIComponent(characterId)}/friends`);
  friendRequests = (characterId: string) =>
    this.call<{ incoming: FriendRequest[]; outgoing: FriendRequest[] }>("GET", `/api/player/${encodeURIComponent(characterId)}/friend-requests`);
  addFriend = (characterId: string, name: string) => this.call("POST", `/api/player/${encodeURIComponent(characterId)}/friend-requests`, { name });
  acceptFriend = (characterId: string, requestId: number) =>
    this.call("POST", `/api/player/${encodeURIComponent(characterId)}/friend-requests/${String(requestId)}/accept`);
  removeFriend = (characterId: string, friendId: string) =>
    this.call("DELETE", `/api/player/${encodeURIComponent(characterId)}/friends/${encodeURIComponent(friendId)}`);
  ignores = () => this.call<{ id: string; name: string }[]>("GET", "/api/player/ignores");
  ignore = (name: string) => this.call("POST", "/api/player/ignores", { name });
  unignore = (characterId: string) => this.call("DELETE", `/api/player/ignores/${encodeURIComponent(characterId)}`);
}
