/**
 * `bench:world --sigterm-joined`: a graceful stop under load (docs/persistence.md "Shutdown"). At
 * the end of a game-server measurement, with every bot still joined, the server gets SIGTERM; this
 * times it to its exit, reads its shutdown lines, and checks storage: every login of the run must
 * have been closed by the shutdown save (`server_shutdown`), which writes each player's whole state
 * in the same transaction as the close of its login, and none left open.
 */
import { openStorage } from "../../src/storage/orm.js";

export interface ShutdownCheck {
  /** SIGTERM to process exit. */
  exitMs: number;
  exitCode: number | null;
  /** From the `shutdown: players saved` line: players and milliseconds of the save stage. */
  saved?: { players: number; ms: number };
  /** The `saving players did not finish in time` line was logged. */
  late: boolean;
  /** Logins of the run closed by the shutdown save, and logins left open (PostgreSQL only). */
  closedAtShutdown?: number;
  stillOpen?: number;
  /** The server's last shutdown, warning and error lines. */
  lastLines: string[];
}

interface Stoppable {
  proc: { kill(signal: NodeJS.Signals): boolean; exitCode: number | null };
  exited: Promise<unknown>;
  tail: string[];
}

/** SIGTERM `server` with its players joined and check what it stored (`databaseUrl`: PostgreSQL, else storage is not read). */
export async function sigtermJoined(server: Stoppable, databaseUrl: string | undefined, since: Date): Promise<ShutdownCheck> {
  const started = performance.now();
  server.proc.kill("SIGTERM");
  await Promise.race([server.exited, new Promise((r) => setTimeout(r, 15_000))]);
  const exitMs = Math.round(performance.now() - started);
  const line = server.tail.find((l) => l.includes('"msg":"shutdown: players saved"'));
  const parsed = line ? (JSON.parse(line) as { players: number; ms: number }) : undefined;
  const out: ShutdownCheck = {
    exitMs,
    exitCode: server.proc.exitCode,
    saved: parsed && { players: parsed.players, ms: parsed.ms },
    late: server.tail.some((l) => l.includes("did not finish in time")),
    lastLines: server.tail.filter((l) => /shutdown|stopping|"level":(40|50|60)/.test(l)).slice(-8),
  };
  if (databaseUrl) {
    const storage = await openStorage({ url: databaseUrl, migrate: false, poolMax: 1 });
    try {
      const conn = storage.orm.em.fork().getConnection();
      const [closed] = await conn.execute<{ n: string }[]>(`select count(*) as n from player_logins where started_at >= ? and end_reason = 'server_shutdown'`, [
        since,
      ]);
      const [open] = await conn.execute<{ n: string }[]>(`select count(*) as n from player_logins where started_at >= ? and ended_at is null`, [since]);
      out.closedAtShutdown = Number(closed?.n ?? 0);
      out.stillOpen = Number(open?.n ?? 0);
    } finally {
      await storage.close();
    }
  }
  return out;
}
