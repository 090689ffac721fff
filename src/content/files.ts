/** File helpers of the content pipeline: atomic writes, and the clean-up after a crashed writer. */
import { randomBytes } from "node:crypto";
import { mkdir, open, readdir, rename, stat, unlink } from "node:fs/promises";
import path from "node:path";

const TEMP_RE = /^\..+\.\d+\.[0-9a-f]{12}\.tmp$/;

/**
 * Writes `data` to `target` so that readers see either the old or the new file, never a part:
 * the bytes go to a temporary file in the same directory, are flushed, and are renamed over it.
 */
export async function writeFileAtomic(target: string, data: string | Uint8Array): Promise<void> {
  const dir = path.dirname(target);
  await mkdir(dir, { recursive: true });
  const tmp = path.join(dir, `.${path.basename(target)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    const handle = await open(tmp, "wx");
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, target);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
}

/** Removes temporary files a crashed writer left under `dir`. */
export async function removeStaleTemps(dir: string): Promise<void> {
  const entries = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
  await Promise.all(entries.filter((e) => TEMP_RE.test(path.basename(e))).map((e) => unlink(path.join(dir, e)).catch(() => undefined)));
}

/** Whether `p` is a regular file. */
export async function fileExists(p: string): Promise<boolean> {
  return stat(p).then(
    (s) => s.isFile(),
    () => false,
  );
}
