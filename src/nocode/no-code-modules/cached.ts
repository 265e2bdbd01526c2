/**
 * A no-code module with its variable options, and the registry module and `ok` version
 * its pin names, served from the per-isolate cache (../cache.ts) for E3 and E4: E4 reads
 * none of them from D1 while E3 or an earlier E4 in this isolate has them (docs/performance.md).
 */
import type { Db } from "../../db/client";
import type { ModuleSummary } from "../../lib/terraform/types";
import { cachedNocode } from "../cache";
import { type RegistryModuleRow, type RegistryModuleVersionRow, versionSummary } from "../registry/repo";
import { provisionableVersionQueries } from "./provisionable";
import { findNoCodeModuleWithOptions, type NoCodeModuleRow, type NoCodeModuleWithOptions } from "./repo";

/** The module and its option sets, or undefined when unknown (cached as such for the TTL too). */
export function cachedNoCodeModuleWithOptions(db: Db, id: string): Promise<NoCodeModuleWithOptions | undefined> {
  return cachedNocode(`module:${id}`, () => findNoCodeModuleWithOptions(db, id));
}

/** The rows a no-code module's pin names (each undefined when absent), with the version's parsed summary. */
export interface PinnedVersion {
  registryModule: RegistryModuleRow | undefined;
  version: RegistryModuleVersionRow | undefined;
  /** versionSummary(version): null unless the version is `ok`. */
  summary: ModuleSummary | null;
}

/**
 * The registry module and pinned version of `module`, for checkProvisionable. Kept only
 * when both exist and the version is `ok`: an `ok` version never changes again (ingestion
 * and uploads move only `pending` and `reg_ingressing` versions) and leaves only with its
 * registry module, whose DELETE clears the cache. Any other answer is read again on the
 * next request, so a version that becomes `ok` is provisionable at once.
 */
export function cachedPinnedVersion(
  db: Db,
  module: Pick<NoCodeModuleRow, "registryModuleId" | "versionPin">,
): Promise<PinnedVersion> {
  return cachedNocode(
    `pin:${module.registryModuleId}:${module.versionPin ?? ""}`,
    async () => {
      const [registryModules, versions] = await db.batch(provisionableVersionQueries(db, module));
      const version = versions[0];
      return { registryModule: registryModules[0], version, summary: version ? versionSummary(version) : null };
    },
    { keep: (pinned) => pinned.registryModule !== undefined && pinned.summary !== null },
  );
}
