/**
 * JSON:API shapes of `no-code-modules` and `variable-options` (HCP Terraform's no-code provisioning API (E1),
 * E3). Serializers own the shapes; handlers never return rows.
 */
import * as v from "valibot";
import { identifierOf, orNull, resourceAnswer } from "../request/answers";
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
 * `no-code-allowed-module` of type `no-code-allowed-modules` (HCP Terraform's no-code provisioning API (E3)).
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

/** B14: the schema of {@link noCodeModuleResource} in answers. */
const noCodeModuleAnswer = resourceAnswer(
  "no-code-modules",
  { enabled: v.boolean(), "version-pin": orNull(v.string()) },
  {
    organization: v.strictObject({
      data: identifierOf("organizations"),
      links: v.strictObject({ related: v.string() }),
    }),
    "registry-module": v.strictObject({
      data: identifierOf("registry-modules"),
      links: v.strictObject({ related: v.string() }),
    }),
    "variable-options": v.strictObject({ data: v.array(identifierOf("variable-options")) }),
  },
);

/** B14: the schema of {@link variableOptionsResource} in answers. */
const variableOptionsAnswer = resourceAnswer(
  "variable-options",
  { "variable-name": v.string(), "variable-type": v.string(), options: v.array(v.unknown()) },
  { "no-code-allowed-module": v.strictObject({ data: identifierOf("no-code-allowed-modules") }) },
  { links: false },
);

/** B14: a document of one no-code module; `included` only when E3 asks for the options. */
export const noCodeModuleDocumentAnswer = v.strictObject({
  data: noCodeModuleAnswer,
  included: v.optional(v.array(variableOptionsAnswer)),
});

/** B14: the module variables of a version (N9), as ./routes.ts renders them. */
export const moduleVariablesAnswer = v.strictObject({
  data: v.array(
    v.strictObject({
      id: v.string(),
      type: v.literal("registry-module-variables"),
      attributes: v.strictObject({
        name: v.string(),
        type: orNull(v.string()),
        description: orNull(v.string()),
        required: v.boolean(),
        sensitive: v.boolean(),
        // A literal default's JSON value, else its source text; null without a default.
        default: v.unknown(),
        options: v.array(v.unknown()),
        "has-global": v.boolean(),
      }),
    }),
  ),
});
