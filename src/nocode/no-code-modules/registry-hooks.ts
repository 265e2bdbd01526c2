/**
 * Where registry modules meet no-code modules: the no-code side of the
 * registry-module endpoints ({@link RegistryNoCodeHooks}). The no-code-modules table and
 * its logic belong here; the registry only knows the hooks' shape, and app.ts hands these
 * to its routes.
 */
import type { Db } from "../../db/client";
import { noCodeModules } from "../../db/schema/nocode";
import type { NocodeCaller } from "../access/auth";
import { newId } from "../ids";
import type { NoCodeModuleRef, RegistryNoCodeHooks } from "../registry/no-code-hooks";
import { latestOkVersion, type RegistryModuleRow } from "../registry/repo";
import {
  deleteNoCodeModuleStatements,
  findNoCodeModuleOfRegistryModule,
  findNoCodeModules,
  listVariableOptions,
  noCodeModulesOfRegistryModules,
} from "./repo";
import { noCodeModuleResource } from "./serialize";

/**
 * N9: `POST /organizations/:org/registry-modules` with the legacy attribute
 * `no-code: true` "also creates an enabled no-code module". Called right after the module
 * row (with `no_code = true`) is written. The pin follows N3 (`latestOkVersion`, null
 * while no version is `ok`); there are no variable options.
 */
async function createLegacyNoCodeModule(db: Db, module: RegistryModuleRow, _caller: NocodeCaller): Promise<void> {
  if (await findNoCodeModuleOfRegistryModule(db, module.id)) return;
  const now = Date.now();
  const latest = await latestOkVersion(db, module.id);
  await db
    .insert(noCodeModules)
    .values({
      id: newId("nocode"),
      organization: module.organization,
      registryModuleId: module.id,
      enabled: true,
      versionPin: latest?.version ?? null,
      createdAt: now,
      updatedAt: now,
    })
    // At most one no-code module per registry module (N3): a concurrent E1 keeps its own.
    .onConflictDoNothing()
    .run();
}

/**
 * Called before a registry module and its versions are deleted: its no-code module and
 * variable options go with it. Workspaces provisioned from it stay, keeping their
 * `source-module-id`; they no longer report an upgrade (N8) and E5 on them is 404.
 */
async function beforeRegistryModuleDelete(db: Db, module: RegistryModuleRow): Promise<void> {
  const noCode = await findNoCodeModuleOfRegistryModule(db, module.id);
  if (noCode) await db.batch([...deleteNoCodeModuleStatements(db, noCode.id)]);
}

/**
 * The no-code modules of each registry module, for the `no-code-modules` relationship and
 * `include=no-code-modules` on the list (HCP Terraform's no-code provisioning API, "Other no-code endpoints").
 */
async function noCodeModulesOf(db: Db, moduleIds: readonly string[]): Promise<Map<string, NoCodeModuleRef[]>> {
  const out = new Map<string, NoCodeModuleRef[]>(moduleIds.map((id) => [id, []]));
  for (const row of await noCodeModulesOfRegistryModules(db, moduleIds)) {
    out.get(row.registryModuleId)?.push({ id: row.id, type: "no-code-modules" });
  }
  return out;
}

/** Full `no-code-modules` resources for the list's `included` array. */
async function includedNoCodeModules(db: Db, refs: readonly NoCodeModuleRef[]): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const row of await findNoCodeModules(db, [...new Set(refs.map((r) => r.id))])) {
    out.push(noCodeModuleResource(row, await listVariableOptions(db, row.id)));
  }
  return out;
}

/** The no-code side of the registry-module endpoints, for app.ts to hand to registryModuleRoutes. */
export const registryNoCodeHooks: RegistryNoCodeHooks = {
  createLegacyNoCodeModule,
  beforeRegistryModuleDelete,
  noCodeModulesOf,
  includedNoCodeModules,
};
