/**
 * The building blocks of the configuration (src/config.ts, the only reader of `process.env`):
 * setting parsers, the per-setting parse that reports every bad value at once, and small helpers.
 */
import { z } from "zod";

export const bool = z.enum(["true", "false", "1", "0", "yes", "no", ""]).transform((v) => v === "true" || v === "1" || v === "yes");
export const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === "" ? undefined : v.trim()));
export const optionalUrl = optionalString.pipe(z.string().url().optional());
export const int = (def: number, min: number, max: number) =>
  z
    .string()
    .optional()
    .transform((v) => (v === undefined || v === "" ? String(def) : v))
    .pipe(
      z
        .string()
        .regex(/^-?\d+$/, "must be an integer")
        .transform(Number),
    )
    .pipe(z.number().int().min(min).max(max));

/** `WORLDS`: the worlds this process hosts, comma-separated positive integers, each once (docs/operations.md "Worlds"); ascending. */
export const worldList = optionalString
  .transform((v) => v ?? "1")
  .pipe(z.string().regex(/^[1-9]\d{0,5}( *, *[1-9]\d{0,5})*$/, "must be a comma-separated list of world numbers from 1, e.g. 1,2"))
  .transform((v) => v.split(",").map((n) => Number(n.trim())))
  .refine((ns) => new Set(ns).size === ns.length, "lists a world more than once")
  .transform((ns) => [...ns].sort((a, b) => a - b));

/** `WORLD`: the world directory (manifests, models, the embedded database). */
export const world = z.string().min(1).default("world");

/** Thrown when the environment is invalid; `problems` holds one line per bad setting. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

/** Parses each setting of `schema` on its own, so one bad value does not hide the others. */
export function parseEach<S extends z.ZodObject>(schema: S, env: NodeJS.ProcessEnv) {
  const problems: string[] = [];
  const values: Record<string, unknown> = {};
  const invalid = new Set<string>();
  for (const [name, field] of Object.entries(schema.shape)) {
    const r = (field as z.ZodType).safeParse(env[name]);
    if (r.success) values[name] = r.data;
    else {
      invalid.add(name);
      for (const i of r.error.issues) problems.push(`${[name, ...i.path].join(".")}: ${i.message}`);
    }
  }
  return { values: values as Partial<z.output<S>>, problems, invalid };
}

export function deepFreeze<T extends object>(o: T): T {
  for (const v of Object.values(o)) if (v && typeof v === "object") deepFreeze(v);
  return Object.freeze(o);
}

/** `<WORLD>/manifests`. */
export function manifestsDirOf(worldDir: string): string {
  return `${worldDir.replace(/\/+$/, "")}/manifests`;
}

/** Colyseus's `publicAddress`: PUBLIC_WS_URL without scheme (`ws://10.0.0.5:5555/ws` → `10.0.0.5:5555/ws`); docs/rooms.md "Processes and worlds". */
export function publicAddressOf(publicWsUrl: string): string {
  return publicWsUrl.replace(/^wss?:\/\//, "").replace(/\/+$/, "");
}
