/** The settings of the build steps and developer tools (`scripts/`), read through `loadBuildEnv` (src/config.ts). */
import { z } from "zod";
import { bool, ConfigError, int, manifestsDirOf, optionalString, optionalUrl, parseEach, world } from "./parse.js";

/** Settings of the build steps and developer tools (`scripts/`), parsed by `loadBuildEnv`. */
const buildEnvSchema = z.object({
  WORLD: world,
  SKIP_ASSETS: bool.default(false),
  PORT_CDN: int(8080, 0, 65535),
  HOST_CDN: optionalString,
  PUBLIC_CDN_URL: optionalUrl,
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  CI: bool.default(false),
});

/** The settings of the build steps and developer tools. */
export interface BuildEnv {
  readonly worldDir: string;
  readonly manifestsDir: string;
  /** `SKIP_ASSETS`: the asset download and the model-bounds step do nothing. */
  readonly skipAssets: boolean;
  /** `PORT_CDN`: port of the local CDN (`npm run cdn`). */
  readonly cdnPort: number;
  /** `HOST_CDN`: address the local CDN listens on; every interface when unset. */
  readonly cdnHost: string | undefined;
  /** `PUBLIC_CDN_URL`: where the build downloads assets from. */
  readonly cdnUrl: string | undefined;
  /** `NODE_ENV=production` or `CI=true`: the build must download assets (no CDN URL is an error). */
  readonly strict: boolean;
}

/**
 * Parse the settings of the build steps and developer tools (`WORLD`, `SKIP_ASSETS`, `PORT_CDN`,
 * `PUBLIC_CDN_URL`, `NODE_ENV`, `CI`)
 * with the same rules as the server's configuration, into a frozen object. Scripts call this
 * instead of reading `process.env` themselves.
 * @throws ConfigError listing every bad setting.
 */
export function parseBuildEnv(env: NodeJS.ProcessEnv): BuildEnv {
  const { values, problems } = parseEach(buildEnvSchema, env);
  if (problems.length > 0) throw new ConfigError(problems);
  const v = values as z.output<typeof buildEnvSchema>;
  return Object.freeze({
    worldDir: v.WORLD,
    manifestsDir: manifestsDirOf(v.WORLD),
    skipAssets: v.SKIP_ASSETS,
    cdnPort: v.PORT_CDN,
    cdnHost: v.HOST_CDN,
    cdnUrl: v.PUBLIC_CDN_URL,
    strict: v.NODE_ENV === "production" || v.CI,
  });
}
