/**
 * Where registry modules meet no-code modules (issue #7). The no-code-modules table and
 * its logic belong to the no-code modules feature; these hooks are the only places the
 * registry calls into it. Until that feature lands they do nothing beyond what is noted.
 *
 * TODO(issue-7): implement these three hooks with the no-code-modules table.
 */
import type { NocodeCaller } from "../auth";
import type { Db } from "../../db/client";
import type { RegistryModuleRow } from "./repo";

/** A `no-code-modules` resource identifier for the registry module's relationship. */
export interface NoCodeModuleRef {
  id: string;
  type: "no-code-modules";
}

/**
 * N9: `POST /organizations/:org/registry-modules` with the legacy attribute
 * `no-code: true` "also creates an enabled no-code module". Called right after the module
 * row (with `no_code = true`) is written, with the creating caller.
 *
 * TODO(issue-7): create an enabled no-code module for `module` (version pin per N3:
 * `latestOkVersion`, null while no version is `ok`; no variable options).
 */
export async function createLegacyNoCodeModule(_db: Db, _module: RegistryModuleRow, _caller: NocodeCaller): Promise<void> {
  // Intentionally empty until the no-code-modules table exists (issue #7).
}

/**
 * Called before a registry module and its versions are deleted.
 *
 * TODO(issue-7): delete (or refuse, with 422) the module's no-code module and decide
 * what happens to workspaces provisioned from it.
 */
export async function beforeRegistryModuleDelete(_db: Db, _module: RegistryModuleRow): Promise<void> {
  // Intentionally empty until the no-code-modules table exists (issue #7).
}

/**
 * The no-code modules of each registry module, for the `no-code-modules` relationship and
 * `include=no-code-modules` on the list (reference §3, "Other no-code endpoints").
 *
 * TODO(issue-7): read them from the no-code-modules table; also return their full
 * resources for `included`.
 */
export async function noCodeModulesOf(_db: Db, moduleIds: readonly string[]): Promise<Map<string, NoCodeModuleRef[]>> {
  return new Map(moduleIds.map((id) => [id, []]));
}

/**
 * Full `no-code-modules` resources for the list's `included` array.
 *
 * TODO(issue-7): serialize with the no-code module serializer.
 */
export async function includedNoCodeModules(_db: Db, _refs: readonly NoCodeModuleRef[]): Promise<unknown[]> {
  return [];
}
