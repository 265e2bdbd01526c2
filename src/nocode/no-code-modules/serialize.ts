/**
 * JSON:API shapes of `no-code-modules` and `variable-options` (seed §2; reference §3 E1,
 * E3). Serializers own the shapes; handlers never return rows.
 */
import type { NoCodeModuleRow, VariableOptionSet } from "./repo";

const API = "/api/v2";

/** Path of a no-code module. */
export const noCodeModulePath = (id: string) => `${API}/no-code-modules/${id}`;

/** A `no-code-modules` resource; `variable-options` lists set ids in creation order. */
export function noCodeModuleResource(module: NoCodeModuleRow, options: readonly Pick<VariableOptionSet, "id">[]) {
  return {
    id: module.id,
    type: "no-code-modules",
    attributes: { enabled: module.enabled, "version-pin": module.versionPin },
    relationships: {
      organization: {
        data: { id: module.organization, type: "organizations" },
        links: { related: `${API}/organizations/${encodeURIComponent(module.organization)}` },
      },
      "registry-module": {
        data: { id: module.registryModuleId, type: "registry-modules" },
        links: { related: `${API}/registry-modules/${module.registryModuleId}` },
      },
      "variable-options": { data: options.map((o) => ({ id: o.id, type: "variable-options" })) },
    },
    links: { self: noCodeModulePath(module.id) },
  };
}

/**
 * A `variable-options` resource as `included` shows it, with the legacy relationship
 * `no-code-allowed-module` of type `no-code-allowed-modules` (reference §3 E3).
 */
export function variableOptionsResource(set: VariableOptionSet) {
  return {
    id: set.id,
    type: "variable-options",
    attributes: { "variable-name": set.variableName, "variable-type": set.variableType, options: set.options },
    relationships: {
      "no-code-allowed-module": { data: { id: set.noCodeModuleId, type: "no-code-allowed-modules" } },
    },
  };
}
