/**
 * Start-up stage 2: the manifests (docs/architecture.md#start-up). They are synced from the CDN
 * (`syncManifests`) and loaded. SKIP_MANIFESTS (refused in production by the sync) bypasses the
 * fetch, the required-file check and the strict validation: the world still needs content, so what
 * is usable is loaded and every problem is logged as a warning instead.
 */
import type { Config } from "../config.js";
import type { Logger } from "../logger.js";
import { formatIssue, loadContent, loadContentLenient, type GameContent } from "./load.js";
import { syncManifests } from "./sync.js";

/** Sync and load the game content, logging `stage 2/6 manifests ready` with what the sync did. */
export async function prepareContent(config: Config, logger: Logger): Promise<GameContent> {
  const report = await syncManifests({
    dir: config.manifestsDir,
    cdnUrl: config.cdnUrl,
    fallbackCdnUrl: config.productionCdnUrl,
    mode: config.env,
    ci: config.ci,
    skip: config.skipManifests,
    logger,
  });
  let content: GameContent;
  if (config.skipManifests) {
    const lenient = await loadContentLenient(config.manifestsDir);
    for (const problem of lenient.skipped) logger.warn({ problem: formatIssue(problem) }, "SKIP_MANIFESTS: manifest problem ignored, entry left out");
    content = lenient.content;
  } else {
    // A sync that applied downloaded files already built the content from them.
    content = report.content ?? (await loadContent(config.manifestsDir));
  }
  logger.info(
    {
      source: report.source,
      fetched: report.fetched.length,
      notModified: report.notModified.length,
      failed: report.failed.length,
      rejected: report.rejected.length,
      items: content.items.size,
      contentLoadedBy: report.content ? "sync" : "start-up",
    },
    "stage 2/6 manifests ready",
  );
  return content;
}
