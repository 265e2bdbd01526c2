/**
 * The plan page's JSON form (decision N8), in the shape of N7's json-output
 * (`resource_changes[].address`, `change.actions`; Terraform's `terraform show -json`
 * names), plus what the HTML page shows about the run. Built from the same
 * PlanPageModel as the HTML, so both show exactly the same plan and neither can carry a
 * sensitive value (ChangedVariable has no value for sensitive variables).
 */
import type { ChangedVariable, PlanPageModel, ShownResourceChange, ShownValue } from "./model";

/** One entry of `resource_changes` (Terraform's field names; `reasons` is ours). */
export interface JsonResourceChange {
  address: string;
  /** `module.a.module.b` for nodes inside module calls; absent at the root. */
  module_address?: string;
  /** `managed` for resources; absent for a remote module call planned as one node (N7). */
  mode?: "managed";
  type?: string;
  name?: string;
  change: { actions: string[]; reasons?: string[] };
}

/** The JSON form of a plan page. */
export interface PlanJson {
  format_version: "1.2";
  run_id: string;
  kind: string;
  status: string;
  organization: string;
  workspace: string;
  module: string;
  from_version: string | null;
  to_version: string;
  summary: { add: number; change: number; destroy: number };
  resource_changes: JsonResourceChange[];
  changed_variables: Array<{
    name: string;
    sensitive: boolean;
    before?: JsonShownValue;
    after?: JsonShownValue;
  }> | null;
}

/** A non-sensitive value in the JSON form. */
export type JsonShownValue = { set: false } | { set: true; value: unknown; is_default: boolean };

/**
 * Split an address into Terraform's parts: `module.labels.random_pet.label` →
 * module `module.labels`, type `random_pet`, name `label`; `module.remote` (a remote
 * module call, one node under N7) → module `module.remote` only.
 */
export function addressParts(address: string): Omit<JsonResourceChange, "change"> {
  const segments = address.split(".");
  // `module` cannot be a resource type (Terraform reserves it), so leading
  // `module.<name>` pairs are the module path and what is left is `type.name` or nothing.
  let i = 0;
  while (segments[i] === "module" && i + 1 < segments.length) i += 2;
  const out: Omit<JsonResourceChange, "change"> = { address };
  if (i > 0) out.module_address = segments.slice(0, i).join(".");
  const rest = segments.slice(i);
  if (rest.length === 2) Object.assign(out, { mode: "managed", type: rest[0], name: rest[1] });
  return out;
}

function jsonValue(value: ShownValue): JsonShownValue {
  return value.set ? { set: true, value: value.value ?? null, is_default: value.isDefault } : { set: false };
}

function jsonVariable(variable: ChangedVariable): NonNullable<PlanJson["changed_variables"]>[number] {
  if (variable.sensitive) return { name: variable.name, sensitive: true };
  const out: NonNullable<PlanJson["changed_variables"]>[number] = { name: variable.name, sensitive: false };
  if (variable.before) out.before = jsonValue(variable.before);
  if (variable.after) out.after = jsonValue(variable.after);
  return out;
}

function jsonChange(change: ShownResourceChange): JsonResourceChange {
  const out: JsonResourceChange = { ...addressParts(change.address), change: { actions: [...change.actions] } };
  if (change.reasons?.length) out.change.reasons = [...change.reasons];
  return out;
}

/**
 * The JSON form of a plan page.
 *
 * @example
 * return c.json(planJson(model));
 */
export function planJson(model: PlanPageModel): PlanJson {
  return {
    format_version: "1.2",
    run_id: model.runId,
    kind: model.kind,
    status: model.status,
    organization: model.organization,
    workspace: model.workspace,
    module: model.module,
    from_version: model.fromVersion,
    to_version: model.toVersion,
    summary: { add: model.additions, change: model.changes, destroy: model.destructions },
    resource_changes: model.resourceChanges.map(jsonChange),
    changed_variables: model.changedVariables === null ? null : model.changedVariables.map(jsonVariable),
  };
}
