/**
 * What a plan page shows (decision N8: `plan-url` opens "an HTML page … It never shows
 * sensitive values"), and how the variables that changed are described. Pure: the route
 * (src/nocode/plan-page/routes.ts) loads the rows, this module and the renderers only
 * shape them, so Node tests cover everything a person sees.
 */

import type { PlanChanges } from "../../lib/terraform/plan-changes";
import type { ModuleSummary } from "../../lib/terraform/types";
import { changedVariables, type EffectiveValue, type PlanAction, type PlannedConfiguration } from "../planner";

/** One side of a changed variable, as shown (never a sensitive value). */
export interface ShownValue {
  /** False when the variable has no value on that side (absent from that version, or required and unset). */
  set: boolean;
  /** The value (JSON-like); an expression default is `{ expression: "<source>" }`. */
  value?: unknown;
  /** True when the value is the version's default. */
  isDefault: boolean;
}

/**
 * A variable whose effective value differs between the baseline and the plan (N7). The
 * union makes it impossible to attach values to a sensitive one.
 */
export type ChangedVariable =
  | { name: string; sensitive: true }
  /** `before`/`after` are absent when the run did not record values (names only). */
  | { name: string; sensitive: false; before?: ShownValue; after?: ShownValue };

/** One resource change of the plan (the planner's ResourceChange). */
export interface ShownResourceChange {
  address: string;
  actions: PlanAction[];
  reasons?: string[];
}

/** What the pages can show of an agent run's JSON plan (N19; loaded by ./engine-plan.ts). */
export type EnginePlanView =
  | { kind: "changes"; changes: PlanChanges }
  /** Larger than the pages parse: addresses and actions only. */
  | { kind: "too-large"; size: number }
  /** No JSON plan stored (the plan has not finished, or ended without one), or one the pages cannot describe. */
  | { kind: "unavailable" };

/** Everything a plan page and its JSON form show. */
export interface PlanPageModel {
  runId: string;
  /** `upgrade` (E5) or `plan-and-apply`. */
  kind: string;
  /** The run's current status (HCP Terraform's run states, N7). */
  status: string;
  organization: string;
  workspace: string;
  /** `private/<namespace>/<name>/<provider>` of the registry module. */
  module: string;
  /** The version the workspace ran when the plan was made; null when nothing was applied yet. */
  fromVersion: string | null;
  /** The version planned. */
  toVersion: string;
  /** When the run was created (ms). */
  createdAt: number;
  additions: number;
  changes: number;
  destructions: number;
  resourceChanges: ShownResourceChange[];
  /** The variables that changed; null when the run did not record them. */
  changedVariables: ChangedVariable[] | null;
  /** Link to the JSON form of the same page (relative, carrying the same credential). */
  jsonHref?: string;
  /**
   * N19: who made the plan. `remote`: N7's built-in (structural) planner; `agent`: an agent
   * of the workspace's pool with its engine (names absent until an agent took the job).
   * Absent: remote.
   */
  execution?:
    | { mode: "remote" }
    | { mode: "agent"; agentName?: string; poolName?: string; engineName?: string; engineVersion?: string };
  /** N19: the engine's changes of an agent run, when they were loaded (the plan page loads them). */
  engine?: EnginePlanView;
}

/** One side of a plan, as {@link describeChangedVariables} needs it. */
export interface VariableSide {
  values: Record<string, EffectiveValue>;
  /** The version's summary, for variables it declares `sensitive`; optional. */
  summary?: Pick<ModuleSummary, "variables"> | null;
}

function declaredSensitive(side: VariableSide | null, name: string): boolean {
  return side?.summary?.variables.some((v) => v.name === name && v.sensitive) ?? false;
}

function shown(value: EffectiveValue | undefined): ShownValue {
  return value ? { set: true, value: value.value, isDefault: value.isDefault } : { set: false, isDefault: false };
}

/**
 * The variables whose effective value differs (N7: compared by keyed hash when
 * sensitive). A variable is shown as sensitive when either side holds it only as a hash
 * (a sensitive workspace var) or either version declares it `sensitive`; its values are
 * then dropped here, before anything renders.
 *
 * @example
 * describeChangedVariables({ values: baseline.values, summary: v1 }, { values: proposed.values, summary: v2 });
 */
export function describeChangedVariables(baseline: VariableSide | null, proposed: VariableSide): ChangedVariable[] {
  const before: VariableSide = baseline ?? { values: {} };
  // changedVariables compares the values only; it never reads the summaries.
  const names = changedVariables(
    { values: before.values } as PlannedConfiguration,
    { values: proposed.values } as PlannedConfiguration,
  );
  return names.map((name): ChangedVariable => {
    const a = before.values[name];
    const b = proposed.values[name];
    const sensitive =
      a?.sensitiveHash !== undefined ||
      b?.sensitiveHash !== undefined ||
      declaredSensitive(baseline, name) ||
      declaredSensitive(proposed, name);
    return sensitive ? { name, sensitive: true } : { name, sensitive: false, before: shown(a), after: shown(b) };
  });
}

/**
 * Variable names mentioned by the planner's reasons (`variable "x" changed`): the
 * fallback for runs that did not record their changed variables. Values are unknown, so
 * every entry is shown by name only.
 */
export function changedVariablesFromReasons(changes: readonly ShownResourceChange[]): ChangedVariable[] {
  const names = new Set<string>();
  for (const change of changes) {
    for (const reason of change.reasons ?? []) {
      const m = /^variable "([^"]+)" changed$/.exec(reason);
      if (m) names.add(m[1]!);
    }
  }
  return [...names].sort().map((name) => ({ name, sensitive: false }));
}
