/**
 * Oracles for the streaming summaries of src/lib/terraform/json-plan.ts: the same summary of
 * a JSON plan (`terraform show -json`, https://developer.hashicorp.com/terraform/internals/json-format)
 * and of a state (version 4), computed from the parsed document. The tests feed the streaming
 * scanners a text split at every position and compare their answer with these.
 */
import { EngineDocumentError, type JsonPlanSummary, type StateSummary } from "../../src/lib/terraform/json-plan";

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Summarise a parsed JSON plan; throws EngineDocumentError when it is not one. */
export function summarizeJsonPlan(plan: unknown): JsonPlanSummary {
  if (!isObject(plan)) throw new EngineDocumentError("a JSON plan is a JSON object");
  const changes = plan.resource_changes ?? [];
  if (!Array.isArray(changes)) throw new EngineDocumentError("resource_changes must be an array");
  const out: JsonPlanSummary = {
    hasChanges: false,
    additions: 0,
    changes: 0,
    destructions: 0,
    imports: 0,
    resourceChanges: [],
    addresses: [],
  };
  for (const entry of changes) {
    if (!isObject(entry) || typeof entry.address !== "string" || !isObject(entry.change))
      throw new EngineDocumentError("each resource change needs an address and a change");
    const actions = entry.change.actions;
    if (!Array.isArray(actions) || !actions.every((a) => typeof a === "string"))
      throw new EngineDocumentError(`resource change ${entry.address} has no actions`);
    const act = actions as string[];
    if (act.includes("create")) out.additions++;
    if (act.includes("delete")) out.destructions++;
    if (act.includes("update")) out.changes++;
    if (entry.change.importing !== undefined && entry.change.importing !== null) out.imports++;
    out.resourceChanges.push({ address: entry.address, actions: act });
    const managed = entry.mode === undefined || entry.mode === "managed";
    if (managed && !(act.length === 1 && act[0] === "delete")) out.addresses.push(entry.address);
  }
  const outputChanged =
    isObject(plan.output_changes) &&
    Object.values(plan.output_changes).some(
      (c) => isObject(c) && Array.isArray(c.actions) && c.actions.some((a) => a !== "no-op"),
    );
  out.hasChanges = out.additions + out.changes + out.destructions + out.imports > 0 || outputChanged;
  out.addresses.sort();
  return out;
}

/** Summarise a parsed state; throws EngineDocumentError when it is not one. */
export function summarizeState(state: unknown): StateSummary {
  if (!isObject(state)) throw new EngineDocumentError("a state is a JSON object");
  const { serial, lineage } = state;
  if (typeof serial !== "number" || !Number.isSafeInteger(serial) || serial < 0)
    throw new EngineDocumentError("a state needs a serial (a non-negative integer)");
  if (typeof lineage !== "string" || lineage === "") throw new EngineDocumentError("a state needs a lineage");
  const resources: string[] = [];
  for (const r of Array.isArray(state.resources) ? state.resources : []) {
    if (!isObject(r) || r.mode !== "managed" || typeof r.type !== "string" || typeof r.name !== "string") continue;
    resources.push(`${typeof r.module === "string" ? `${r.module}.` : ""}${r.type}.${r.name}`);
  }
  const outputs = Object.entries(isObject(state.outputs) ? state.outputs : {}).map(([name, o]) => ({
    name,
    sensitive: isObject(o) && o.sensitive === true,
  }));
  return { serial, lineage, resources: resources.sort(), outputs };
}
