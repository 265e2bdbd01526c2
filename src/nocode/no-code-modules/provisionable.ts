/**
 * What a no-code module can provision (decisions N3, N12): it is enabled, its pin names an
 * `ok` version of its registry module, and that version meets the design requirements.
 * E4 (a new workspace), E5 (an upgrade) and upgrade rollouts (N15) all ask this.
 */
import type { Db } from "../../db/client";
import type { ModuleSummary } from "../../lib/terraform/types";
import { unprocessable } from "../errors";
import {
  moduleVersionQuery,
  type RegistryModuleRow,
  type RegistryModuleVersionRow,
  registryModuleByIdQuery,
  versionSummary,
} from "../registry/repo";
import { designError } from "./design";
import type { NoCodeModuleRow } from "./repo";

/** A no-code module's provisionable version: its registry module, the pinned version and that version's summary. */
export interface ProvisionableVersion {
  registryModule: RegistryModuleRow;
  version: RegistryModuleVersionRow;
  summary: ModuleSummary;
}

/**
 * The two reads {@link checkProvisionable} needs (the registry module and the pinned
 * version; the latter matches no row when the module has no pin), for a `db.batch`.
 */
export function provisionableVersionQueries(db: Db, module: Pick<NoCodeModuleRow, "registryModuleId" | "versionPin">) {
  return [
    registryModuleByIdQuery(db, module.registryModuleId),
    moduleVersionQuery(db, module.registryModuleId, module.versionPin ?? ""),
  ] as const;
}

/** What E4 (and E5) need of a no-code module: enabled, with an `ok` pin (N3) that meets N12; else 422. */
export async function provisionableVersion(db: Db, module: NoCodeModuleRow): Promise<ProvisionableVersion> {
  const [registryModules, versions] = await db.batch(provisionableVersionQueries(db, module));
  return checkProvisionable(module, registryModules[0], versions[0]);
}

/**
 * provisionableVersion's checks on rows already read: `registryModule` is the module's
 * registry module and `version` its pinned version (each undefined when absent; `version`
 * is not looked at when the module has no pin). `summary` is versionSummary(version) when
 * the caller has it already parsed (E4's cached pin).
 */
export function checkProvisionable(
  module: NoCodeModuleRow,
  registryModule: RegistryModuleRow | undefined,
  version: RegistryModuleVersionRow | undefined,
  summary: ModuleSummary | null = version ? versionSummary(version) : null,
): ProvisionableVersion {
  if (!module.enabled)
    throw unprocessable(
      "The no-code module is not enabled; enable it (PATCH enabled: true) before provisioning workspaces",
    );
  if (module.versionPin === null)
    throw unprocessable("The no-code module has no version pin: no version of its registry module is ok yet");
  if (!registryModule || !version) throw unprocessable(`The pinned version ${module.versionPin} no longer exists`);
  if (!summary) {
    const why =
      version.status === "reg_ingress_failed"
        ? `failed ingestion: ${version.error}`
        : `is ${version.status}, not yet ingested`;
    throw unprocessable(`The pinned version ${version.version} ${why}; only an ok version can be provisioned`);
  }
  // N12: a pin that was pending when the module was enabled may have become an `ok`
  // version that fails the design requirements; such a version is not provisioned either.
  const design = designError(version.version, summary);
  if (design) throw design;
  return { registryModule, version, summary };
}

/** `private/<namespace>/<name>/<provider>/<version>`, a workspace's `source-module-id` (HCP Terraform's no-code provisioning API (E4)). */
export function sourceModuleIdOf(
  module: Pick<RegistryModuleRow, "namespace" | "name" | "provider">,
  version: string,
): string {
  return `private/${module.namespace}/${module.name}/${module.provider}/${version}`;
}
