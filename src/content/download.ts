/**
 * Downloads revalidated with ETags (`conditionalGet`), the ETag store that remembers them, and a
 * small concurrency pool. Used by the manifest sync and the build-time asset download.
 */
import { readFile } from "node:fs/promises";

/** What `conditionalGet` got: the file did not change (304), its new body, or why it failed
 * (`status`: the HTTP status when there was an answer). */
export type ConditionalGetResult =
  | { kind: "not-modified"; status: 304 }
  | { kind: "ok"; status: 200; body: Uint8Array; etag: string | null }
  | { kind: "failed"; status?: number; reason: string };

/**
 * One GET revalidated with `If-None-Match: etag` (when given). A 200 body is read whole (within
 * `signal`) and passed to `check`, which throws to refuse it. Never throws: network errors, time
 * limits, statuses other than 200/304 and refused bodies come back as `failed` with a short reason
 * (`HTTP 404`, `timed out`, `invalid body`, or the error's message). Used by the manifest sync and
 * the build-time asset download.
 */
export async function conditionalGet(
  url: URL,
  opts: { etag?: string; accept?: string; fetch?: typeof fetch; signal: AbortSignal; check?: (body: Uint8Array) => void },
): Promise<ConditionalGetResult> {
  const headers: Record<string, string> = {};
  if (opts.accept) headers.accept = opts.accept;
  if (opts.etag) headers["if-none-match"] = opts.etag;
  let status: number | undefined;
  try {
    const res = await (opts.fetch ?? fetch)(url, { headers, signal: opts.signal });
    status = res.status;
    if (res.status === 304) {
      await res.body?.cancel();
      return { kind: "not-modified", status: 304 };
    }
    if (res.status !== 200) {
      await res.body?.cancel();
      return { kind: "failed", status: res.status, reason: `HTTP ${res.status}` };
    }
    // The whole body is read (within the time limits) before anything is written.
    const body = new Uint8Array(await res.arrayBuffer());
    try {
      opts.check?.(body);
    } catch {
      return { kind: "failed", status, reason: "invalid body" };
    }
    return { kind: "ok", status: 200, body, etag: res.headers.get("etag") };
  } catch (err) {
    const e = err as Error;
    return { kind: "failed", status, reason: e.name === "TimeoutError" ? "timed out" : e.message };
  }
}

/** An ETag store (a JSON object of file to ETag); empty when it is missing or unreadable. */
export async function readEtagStore(file: string): Promise<Record<string, string>> {
  try {
    const parsed: unknown = JSON.parse(await readFile(file, "utf8"));
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed))
      return Object.fromEntries(Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === "string"));
  } catch {
    // No or unreadable ETag store: every file is fetched in full.
  }
  return {};
}

/** Runs `task` over `items` with at most `limit` in flight. */
export async function pool<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
}
