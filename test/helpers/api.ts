/**
 * The REST app with every route module over a fake world, listening on a free port, plus the
 * helpers the `api-*` tests share (tokens, requests, accounts with characters).
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { AuthService } from "../../src/auth/service.js";
import { signServerToken } from "../../src/auth/tokens.js";
import type { Config } from "../../src/config.js";
import { loadContent, type GameContent } from "../../src/content/load.js";
import { createApp } from "../../src/http/app.js";
import { CorsPolicy } from "../../src/http/cors.js";
import { Blocklist, createLimits } from "../../src/http/limits.js";
import { createApiModules } from "../../src/http/routes/index.js";
import { createLogger } from "../../src/logger.js";
import { CharacterService } from "../../src/services/characters.js";
import { SocialService } from "../../src/services/social.js";
import type { Storage } from "../../src/storage/orm.js";
import { FakeWorld } from "./fake-world.js";
import { testConfig, TEST_ENV } from "./server.js";

let contentPromise: Promise<GameContent> | undefined;
/** The shipped content, loaded once per process. */
export function shippedContent(): Promise<GameContent> {
  contentPromise ??= loadContent("world/manifests");
  return contentPromise;
}

export interface Reply {
  status: number;
  // Tests read arbitrary JSON.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  headers: Headers;
}

export interface ApiHarness {
  url: string;
  world: FakeWorld;
  storage: Storage;
  content: GameContent;
  config: Config;
  characters: CharacterService;
  social: SocialService;
  /** Mint a server token. */
  token(claims: { sub: string; characterId?: string; jti?: string; name?: string; roles?: string[] }): string;
  request(method: string, path: string, opts?: { token?: string; body?: unknown; raw?: string }): Promise<Reply>;
  /** A fresh account with a token (no character yet). */
  account(): { accountId: string; token: string };
  /** A fresh account with one character created through the API. */
  player(name?: string, templateId?: string): Promise<{ accountId: string; token: string; characterId: string; name: string }>;
  close(): Promise<void>;
}

let counter = 0;
/** A unique valid character name. */
export function uniqueName(prefix = "P"): string {
  counter++;
  return `${prefix}${counter}${randomUUID().slice(0, 4)}`.slice(0, 12);
}

/** Start the app (rate limits off) over `storage` with a fresh fake world. */
export async function startApiHarness(storage: Storage, env: NodeJS.ProcessEnv = {}): Promise<ApiHarness> {
  const config = testConfig({ DISABLE_RATE_LIMIT: "true", ...env });
  const content = await shippedContent();
  const world = new FakeWorld();
  const characters = new CharacterService(storage, content);
  const social = new SocialService(storage);
  const auth = new AuthService(config, storage.orm);
  const { app } = createApp({
    config,
    logger: createLogger("silent"),
    auth,
    limits: createLimits({ enabled: false, blockSeconds: 60, blocklist: new Blocklist() }),
    cors: new CorsPolicy(config),
    storagePing: async () => true,
    playersOnline: () => world.playersOnline(),
    modules: createApiModules({ storage, content, auth, world, characters, social, config }),
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const token: ApiHarness["token"] = (claims) => signServerToken(TEST_ENV.JWT_SECRET!, claims).token;
  const request = restClient(url);
  const account = () => {
    const accountId = `acct-${randomUUID()}`;
    return { accountId, token: token({ sub: accountId }) };
  };
  const player: ApiHarness["player"] = async (name = uniqueName(), templateId) => {
    const a = account();
    const r = await request("POST", "/api/character", { token: a.token, body: templateId ? { name, templateId } : { name } });
    if (r.status !== 201) throw new Error(`could not create ${name}: ${r.status} ${JSON.stringify(r.body)}`);
    return { ...a, characterId: r.body.id as string, name };
  };

  return {
    url,
    world,
    storage,
    content,
    config,
    characters,
    social,
    token,
    request,
    account,
    player,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** JSON requests against a base URL (the harness, or a real server's `url`). */
export function restClient(url: string): ApiHarness["request"] {
  return async (method, path, opts = {}) => {
    const headers: Record<string, string> = {};
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let body: string | undefined;
    if (opts.raw !== undefined) body = opts.raw;
    else if (opts.body !== undefined) body = JSON.stringify(opts.body);
    if (body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(url + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON
    }
    return { status: res.status, body: parsed, headers: res.headers };
  };
}

/** Assert-friendly: the error code of a reply. */
export const code = (r: Reply): string | undefined => r.body?.error?.code;
