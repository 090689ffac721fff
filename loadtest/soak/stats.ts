/** What the soak's bots did and saw: counts by kind, HTTP statuses, failures (the first few logged), trades seen completed. */
import { log } from "../lib/cli.js";

export const stats = {
  http: {} as Record<string, number>,
  fivexx: [] as string[],
  joins: 0,
  joinFailures: [] as string[],
  moves: 0,
  chats: 0,
  attacks: 0,
  gathers: 0,
  deathRuns: 0,
  deaths: 0,
  reconnects: { sdkResume: 0, sdkFresh: 0, json: 0, afterServerClose: 0 },
  hostile: { ws: 0, sdk: 0, rest: 0 },
  trades: {} as Record<string, number>,
};
/** Trade ids some bot received `tradeCompleted` for. */
export const completedTrades = new Set<string>();

/**
 * Colyseus's MATCHMAKE_EXPIRED (524): its documented answer to a reconnection whose seat is gone
 * (expired, or the character joined again elsewhere). The SDK reports the status as the error's
 * code, so it stays as Colyseus defines it; it is a refusal of the client's request, not a failure.
 */
export const MATCHMAKE_EXPIRED = 524;
export const isFailure = (status: number) => status >= 500 && status !== MATCHMAKE_EXPIRED;

export function countStatus(status: number, what: string) {
  stats.http[status] = (stats.http[status] ?? 0) + 1;
  if (isFailure(status) && stats.fivexx.length < 50) {
    stats.fivexx.push(`${status} ${what}`);
    if (stats.fivexx.length <= 5) log(`5xx: ${status} ${what}`);
  }
}

/** A failed connection: count the HTTP status it names, if any (upgrade refusals and SDK matchmaking errors carry it). */
export function countFailure(e: unknown, what: string) {
  const msg = String((e as Error)?.message ?? e);
  const code = (e as { code?: unknown })?.code;
  const m = /(?:server response|status(?: code)?):? (\d{3})\b/i.exec(msg);
  const status = typeof code === "number" && code >= 400 && code < 600 ? code : m ? Number(m[1]) : undefined;
  if (status !== undefined) countStatus(status, `${what}: ${msg}`);
  if (stats.joinFailures.length < 30) stats.joinFailures.push(`${what}: ${msg}`);
}
