/**
 * The built-in planner of decision N7. The service is a control plane that never runs
 * providers: a plan compares two configurations of a module — the baseline (what the last
 * applied run configured, or nothing) and the proposal — node by node.
 *
 * - Nodes are root `resource` blocks (`type.name`); a local module call found in the
 *   archive is expanded as `module.<name>.<address>`, recursively; any other module call
 *   is one node `module.<name>`. Data sources are not planned; count/for_each are not
 *   expanded.
 * - create: only in the proposal; delete: only in the baseline; update: in both, and its
 *   source differs ignoring comments and whitespace, or it references (directly or
 *   through locals) a variable whose effective value differs. A module call whose
 *   arguments reference such a variable (or whose arguments changed) updates every node
 *   inside it. Nothing propagates between resources.
 *
 * Pure: no I/O. Sensitive values arrive only as keyed hashes and never appear in reasons.
 */
import { variablesReached } from "../../lib/terraform/summarize-module";
import type { ModuleSummary } from "../../lib/terraform/types";

/** An effective variable value: the workspace's value, else the version's default. */
export interface EffectiveValue {
  /** The value, for non-sensitive variables. */
  value?: unknown;
  /** Keyed hash of a sensitive value; compared instead of the value. */
  sensitiveHash?: string;
  /** True when the value is the version's default. */
  isDefault: boolean;
}

/** One side of a plan. */
export interface PlannedConfiguration {
  summary: ModuleSummary;
  values: Record<string, EffectiveValue>;
}

export type PlanAction = "create" | "update" | "delete" | "no-op";

export interface ResourceChange {
  address: string;
  actions: PlanAction[];
  /** Why an update happens, readable by a person (never a sensitive value). */
  reasons?: string[];
}

export interface Plan {
  hasChanges: boolean;
  additions: number;
  changes: number;
  destructions: number;
  /** Resources an agent's plan imports (N19); the built-in planner imports none. */
  imports?: number;
  /** Every node of either side, sorted by address. */
  resourceChanges: ResourceChange[];
  /** Resource addresses of the proposed configuration (what an apply records). */
  addresses: string[];
}

/** A planned node and what can make it change. */
interface PlanNode {
  address: string;
  /** Normalised source of the block (comments and whitespace ignored). */
  source: string;
  /** Root variables the node reaches: directly, through locals, or via its module call. */
  rootVariables: string[];
  /** Addresses of the local module calls enclosing the node, outermost first. */
  enclosingCalls: string[];
}

interface ModuleCallNode {
  address: string;
  source: string;
  rootVariables: string[];
}

interface Collected {
  nodes: Map<string, PlanNode>;
  calls: Map<string, ModuleCallNode>;
}

/**
 * Walk a configuration. `inheritedVariables` are the root variables that reach every node
 * of this module through the arguments of the enclosing local module calls.
 */
function collect(summary: ModuleSummary): Collected {
  const out: Collected = { nodes: new Map(), calls: new Map() };
  const walk = (module: ModuleSummary, prefix: string, inherited: string[], enclosing: string[], isRoot: boolean) => {
    // Inside a submodule, its own variables are fed by the call's arguments: what reaches
    // a node there from the root is exactly what reaches the call (`inherited`).
    const reach = (refs: { variables: string[]; locals: string[] }) =>
      isRoot ? variablesReached(module, refs) : inherited;
    for (const resource of module.resources) {
      if (resource.mode !== "managed") continue;
      const address = `${prefix}${resource.address}`;
      out.nodes.set(address, {
        address,
        source: resource.normalizedSource,
        rootVariables: [...new Set([...reach(resource.references), ...inherited])].sort(),
        enclosingCalls: enclosing,
      });
    }
    for (const call of module.moduleCalls) {
      const address = `${prefix}${call.address}`;
      const rootVariables = [...new Set([...reach(call.references), ...inherited])].sort();
      if (call.local && call.module) {
        out.calls.set(address, { address, source: call.normalizedSource, rootVariables });
        walk(call.module, `${address}.`, rootVariables, [...enclosing, address], false);
      } else {
        out.nodes.set(address, { address, source: call.normalizedSource, rootVariables, enclosingCalls: enclosing });
      }
    }
  };
  walk(summary, "", [], [], true);
  return out;
}

/** Canonical JSON (sorted keys) for deep comparison of values. */
function canonical(value: unknown): string {
  if (value === undefined) return "undefined";
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
}

function sameValue(a: EffectiveValue | undefined, b: EffectiveValue | undefined): boolean {
  if (!a || !b) return a === b;
  if (a.sensitiveHash !== undefined || b.sensitiveHash !== undefined) return a.sensitiveHash === b.sensitiveHash;
  return canonical(a.value) === canonical(b.value);
}

/** Root variables whose effective value differs between the two sides, sorted. */
export function changedVariables(baseline: PlannedConfiguration, proposed: PlannedConfiguration): string[] {
  const names = new Set([...Object.keys(baseline.values), ...Object.keys(proposed.values)]);
  return [...names].filter((name) => !sameValue(baseline.values[name], proposed.values[name])).sort();
}

const byAddress = (a: { address: string }, b: { address: string }) =>
  a.address < b.address ? -1 : a.address > b.address ? 1 : 0;

/** Plan the move from `baseline` (null: nothing applied yet) to `proposed` (N7). */
export function planRun(input: { baseline: PlannedConfiguration | null; proposed: PlannedConfiguration }): Plan {
  const proposed = collect(input.proposed.summary);
  const baseline = input.baseline
    ? collect(input.baseline.summary)
    : { nodes: new Map<string, PlanNode>(), calls: new Map() };
  const changed = new Set(input.baseline ? changedVariables(input.baseline, input.proposed) : []);

  const resourceChanges: ResourceChange[] = [];
  for (const node of proposed.nodes.values()) {
    const before = baseline.nodes.get(node.address);
    if (!before) {
      resourceChanges.push({ address: node.address, actions: ["create"] });
      continue;
    }
    const reasons: string[] = [];
    if (before.source !== node.source) reasons.push("configuration changed");
    for (const callAddress of node.enclosingCalls) {
      const beforeCall = baseline.calls.get(callAddress);
      const call = proposed.calls.get(callAddress);
      if (beforeCall && call && beforeCall.source !== call.source) reasons.push(`arguments of ${callAddress} changed`);
    }
    for (const name of node.rootVariables) if (changed.has(name)) reasons.push(`variable "${name}" changed`);
    resourceChanges.push(
      reasons.length > 0
        ? { address: node.address, actions: ["update"], reasons }
        : { address: node.address, actions: ["no-op"] },
    );
  }
  for (const node of baseline.nodes.values()) {
    if (!proposed.nodes.has(node.address)) resourceChanges.push({ address: node.address, actions: ["delete"] });
  }
  resourceChanges.sort(byAddress);

  const count = (action: PlanAction) => resourceChanges.filter((c) => c.actions.includes(action)).length;
  const additions = count("create");
  const changes = count("update");
  const destructions = count("delete");
  return {
    hasChanges: additions + changes + destructions > 0,
    additions,
    changes,
    destructions,
    resourceChanges,
    addresses: [...proposed.nodes.keys()].sort(),
  };
}
