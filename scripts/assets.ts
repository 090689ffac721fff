/**
 * Build step (docs/content.md "Build-time assets"), run by `npm run build` before the model bounds:
 * downloads the models, music and environment assets the manifests refer to from `PUBLIC_CDN_URL`
 * into the world directory, revalidating with ETags (src/content/assets.ts).
 *
 *   PUBLIC_CDN_URL=https://cdn.example.com WORLD=world tsx scripts/assets.ts
 *
 * - `SKIP_ASSETS=true`: nothing is downloaded; exits 0.
 * - No `PUBLIC_CDN_URL`: a warning and exit 0 in development; an error (exit 1) when
 *   `NODE_ENV=production` or `CI=true`, where a build must not ship without its assets.
 * - Any file that cannot be downloaded: one line per file on stderr, exit 1 (the files that did
 *   arrive are kept). Bad settings: one line per problem, exit 1.
 */
import { ConfigError, loadBuildEnv, type BuildEnv } from "../src/config.js";
import { AssetDownloadError, downloadAssets, listAssets } from "../src/content/assets.js";

async function main(): Promise<number> {
  let env: BuildEnv;
  try {
    env = loadBuildEnv();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    for (const p of err.problems) console.error(`assets: config error: ${p}`);
    return 1;
  }
  if (env.skipAssets) {
    console.log("assets: SKIP_ASSETS=true, asset download skipped");
    return 0;
  }
  if (!env.cdnUrl) {
    if (env.strict) {
      console.error("assets: PUBLIC_CDN_URL is not set; a production or CI build downloads its assets (set it, or SKIP_ASSETS=true to build without)");
      return 1;
    }
    console.warn("assets: PUBLIC_CDN_URL is not set; no assets downloaded (development)");
    return 0;
  }

  const list = await listAssets(env.manifestsDir);
  if (list.problems.length > 0) {
    for (const p of list.problems) console.error(`assets: ${p}`);
    return 1;
  }
  const t0 = Date.now();
  const report = await downloadAssets({ worldDir: env.worldDir, cdnUrl: env.cdnUrl, files: list.files });
  console.log(
    `assets: ${list.files.length} files from ${env.cdnUrl} into ${env.worldDir}: ${report.downloaded.length} downloaded, ` +
      `${report.notModified.length} not modified, ${report.failed.length} failed (${Date.now() - t0} ms)`,
  );
  if (report.failed.length > 0) {
    const err = new AssetDownloadError(report.failed.map((f) => `${f.file}: ${f.reason}`));
    console.error(`assets: ${err.message}`);
    return 1;
  }
  return 0;
}

process.exitCode = await main();
