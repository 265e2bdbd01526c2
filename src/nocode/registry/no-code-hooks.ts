/**
 * What the registry-module endpoints ask of no-code modules (decision N9). No-code
 * modules are built on registry rows (src/nocode/no-code-modules imports the registry), so
 * the registry cannot import them back: the no-code modules feature answers these hooks
 * (no-code-modules/registry-hooks.ts) and app.ts hands them to {@link registryModuleRoutes}.
 */
import type { Db } from "../../db/client";
import type { NocodeCaller } from "../access/auth";
import type { RegistryModuleRow } from "./repo";

/** A `no-code-modules` resource identifier for the registry module's relationship. */
export interface NoCodeModuleRef {
  id: string;
  type: "no-code-modules";
}

/** The no-code side of the registry-module endpoints. */
export interface RegistryNoCodeHooks {
  /**
   * N9: the legacy attribute `no-code: true` on a module create "also creates an enabled
   * no-code module". Called right after the module row (with `no_code = true`) is written.
   */
  createLegacyNoCodeModule(db: Db, module: RegistryModuleRow, caller: NocodeCaller): Promise<void>;
  /** Called before a registry module and its versions are deleted: its no-code module goes with it. */
  beforeRegistryModuleDelete(db: Db, module: RegistryModuleRow): Promise<void>;
  /** The no-code modules of each registry module, for the `no-code-modules` relationship. */
  noCodeModulesOf(db: Db, moduleIds: readonly string[]): Promise<Map<string, NoCodeModuleRef[]>>;
  /** Full `no-code-modules` resources for `include=no-code-modules` on the list. */
  includedNoCodeModules(db: Db, refs: readonly NoCodeModuleRef[]): Promise<unknown[]>;
}
