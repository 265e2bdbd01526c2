/**
 * JSON:API shapes of `runs` and `plans`, and the plan's JSON output
 * in Terraform's machine-readable plan format (decisions N6, N7; HCP Terraform's run states).
 */
import * as v from "valibot";
import type { Plan } from "../planner";
import { identifierOf, orNull, resourceAnswer, single, timestamp, toOneAnswer } from "../request/answers";
import { isoTime } from "../respond";
import type { RunRow } from "./repo";

const API = "/api/v2";

/** What the caller may do with a run (N10). */
export interface RunPermissions {
  /** manage-workspaces, organization token excluded (run actions). */
  canAct: boolean;
}

/** The stored plan of a run, or null before it was planned. */
export function planOf(run: Pick<RunRow, "plan">): Plan | null {
  return run.plan ? (JSON.parse(run.plan) as Plan) : null;
}

function timestamps(run: Pick<RunRow, "statusTimestamps">): Record<string, string> {
  return JSON.parse(run.statusTimestamps) as Record<string, string>;
}

/** A `runs` resource. */
export function runResource(run: RunRow, permissions: RunPermissions) {
  const plan = planOf(run);
  const awaiting = run.status === "planned";
  const confirmable = awaiting && run.kind === "plan-and-apply";
  return {
    id: run.id,
    type: "runs",
    attributes: {
      status: run.status,
      "status-timestamps": timestamps(run),
      "created-at": isoTime(run.createdAt),
      message: run.message,
      source: "tfe-api",
      "trigger-reason": "manual",
      "auto-apply": run.autoApply,
      "is-destroy": false,
      "has-changes": plan?.hasChanges ?? false,
      "plan-only": false,
      refresh: true,
      "refresh-only": false,
      "save-plan": false,
      "allow-empty-apply": false,
      "position-in-queue": 0,
      // N6: the resolved release, under both names.
      "terraform-version": run.engineVersion,
      "engine-version": run.engineVersion,
      "error-message": run.error,
      // N18/N19 (a Keyway extension): why the run waits for an agent, or why it was discarded.
      "status-reason": run.statusReason,
      actions: {
        "is-confirmable": confirmable,
        "is-discardable": awaiting,
        "is-cancelable": false,
        "is-force-cancelable": false,
      },
      permissions: {
        "can-apply": permissions.canAct,
        "can-cancel": permissions.canAct,
        "can-discard": permissions.canAct,
        "can-force-execute": permissions.canAct,
        "can-force-cancel": permissions.canAct,
        "can-override-policy": false,
      },
    },
    relationships: {
      workspace: { data: { id: run.workspaceId, type: "workspaces" } },
      plan: { data: { id: run.planId, type: "plans" }, links: { related: `${API}/runs/${run.id}/plan` } },
      apply: { data: { id: applyIdOf(run), type: "applies" }, links: { related: `${API}/runs/${run.id}/apply` } },
      "configuration-version": {
        data: { id: run.configurationVersionId, type: "configuration-versions" },
        links: { related: `${API}/configuration-versions/${run.configurationVersionId}` },
      },
    },
    links: { self: `${API}/runs/${run.id}` },
  };
}

/** The plan's own status (HCP's plan states), derived from the run's. */
export function planStatus(run: Pick<RunRow, "status" | "plan">): string {
  switch (run.status) {
    case "pending":
      return "pending";
    case "plan_queued":
      return "queued";
    case "planning":
      return "running";
    case "errored":
      return run.plan ? "finished" : "errored";
    case "discarded":
    case "canceled":
      return run.plan ? "finished" : "unreachable";
    default:
      return "finished";
  }
}

/**
 * N19: how the plan was (or will be) executed: by an agent (`mode: "agent"`, with the agent,
 * its pool and its engine once an agent took the job), or by the built-in planner of a
 * `remote` workspace (`mode: "remote"`, Keyway's extension `planner: "structural"`).
 */
export function executionDetailsOf(run: Pick<RunRow, "executionMode" | "executionDetails">): Record<string, string> {
  if (run.executionMode !== "agent") return { mode: "remote", planner: "structural" };
  return run.executionDetails ? (JSON.parse(run.executionDetails) as Record<string, string>) : { mode: "agent" };
}

/** A `plans` resource; `logReadUrl`: the signed link to its log (N20, B23), null once expired. */
export function planResource(run: RunRow, logReadUrl: string | null) {
  const plan = planOf(run);
  const ts = timestamps(run);
  const planTimestamps: Record<string, string> = {};
  if (ts["plan-queued-at"]) planTimestamps["queued-at"] = ts["plan-queued-at"];
  if (ts["planning-at"]) planTimestamps["started-at"] = ts["planning-at"];
  const finished = ts["planned-at"] ?? ts["planned-and-finished-at"];
  if (finished) planTimestamps["finished-at"] = finished;
  return {
    id: run.planId,
    type: "plans",
    attributes: {
      status: planStatus(run),
      "status-timestamps": planTimestamps,
      "has-changes": plan?.hasChanges ?? false,
      "resource-additions": plan?.additions ?? 0,
      "resource-changes": plan?.changes ?? 0,
      "resource-destructions": plan?.destructions ?? 0,
      "resource-imports": plan?.imports ?? 0,
      "log-read-url": logReadUrl,
      "execution-details": executionDetailsOf(run),
    },
    relationships: { run: { data: { id: run.id, type: "runs" } } },
    links: { self: `${API}/plans/${run.planId}`, "json-output": `${API}/plans/${run.planId}/json-output` },
  };
}

/** A run's apply id (N20): `apply-` and the characters of its plan id, so it needs no column. */
export function applyIdOf(run: Pick<RunRow, "planId">): string {
  return `apply-${run.planId.slice("plan-".length)}`;
}

/** The apply's own status (HCP's apply states), derived from the run's. */
export function applyStatus(run: Pick<RunRow, "status" | "statusTimestamps">): string {
  switch (run.status) {
    case "apply_queued":
      return "queued";
    case "applying":
      return "running";
    case "applied":
      return "finished";
    case "errored":
    case "canceled":
      return timestamps(run)["applying-at"] ? run.status : "unreachable";
    case "discarded":
    case "planned_and_finished":
      return "unreachable";
    default:
      return "pending";
  }
}

/** An `applies` resource (N20); `logReadUrl`: the signed link to its log, null once expired. */
export function applyResource(run: RunRow, logReadUrl: string | null) {
  const plan = planOf(run);
  const ts = timestamps(run);
  const applyTimestamps: Record<string, string> = {};
  if (ts["apply-queued-at"]) applyTimestamps["queued-at"] = ts["apply-queued-at"];
  if (ts["applying-at"]) applyTimestamps["started-at"] = ts["applying-at"];
  if (ts["applied-at"]) applyTimestamps["finished-at"] = ts["applied-at"];
  const applied = run.status === "applied";
  return {
    id: applyIdOf(run),
    type: "applies",
    attributes: {
      status: applyStatus(run),
      "status-timestamps": applyTimestamps,
      "log-read-url": logReadUrl,
      "resource-additions": applied ? (plan?.additions ?? 0) : 0,
      "resource-changes": applied ? (plan?.changes ?? 0) : 0,
      "resource-destructions": applied ? (plan?.destructions ?? 0) : 0,
      "resource-imports": applied ? (plan?.imports ?? 0) : 0,
      "execution-details": executionDetailsOf(run),
    },
    relationships: { run: { data: { id: run.id, type: "runs" } } },
    links: { self: `${API}/applies/${applyIdOf(run)}` },
  };
}

/** `module.a.module.b.type.name` → its module address, type and name (a module node has no type). */
function splitAddress(address: string): { moduleAddress: string | null; type: string | null; name: string } {
  const parts = address.split(".");
  const modules: string[] = [];
  let i = 0;
  while (parts[i] === "module" && i + 1 < parts.length) {
    modules.push(`module.${parts[i + 1]}`);
    i += 2;
  }
  const rest = parts.slice(i);
  if (rest.length === 0) {
    // A module call that is one node (N7: a remote module).
    const name = modules.pop()!.slice("module.".length);
    return { moduleAddress: modules.length > 0 ? modules.join(".") : null, type: null, name };
  }
  return {
    moduleAddress: modules.length > 0 ? modules.join(".") : null,
    type: rest[0] ?? null,
    name: rest.slice(1).join("."),
  };
}

/**
 * The plan as Terraform's JSON plan output (`terraform show -json`), with what the
 * built-in planner knows: `resource_changes[].address` and `change.actions` (N7).
 * Values are never known here (no providers run), so they are null.
 */
export function planJsonOutput(run: RunRow, plan: Plan) {
  return {
    format_version: "1.2",
    terraform_version: run.engineVersion,
    resource_changes: plan.resourceChanges.map((c) => {
      const { moduleAddress, type, name } = splitAddress(c.address);
      const out: Record<string, unknown> = { address: c.address };
      if (moduleAddress) out.module_address = moduleAddress;
      out.mode = "managed";
      if (type) out.type = type;
      out.name = name;
      out.change = {
        actions: c.actions,
        before: null,
        after: null,
        after_unknown: {},
        before_sensitive: false,
        after_sensitive: false,
      };
      return out;
    }),
    applyable: plan.hasChanges,
    complete: true,
    errored: false,
  };
}

/** B14: the schema of {@link runResource} in answers. */
export const runAnswer = resourceAnswer(
  "runs",
  {
    status: v.string(),
    "status-timestamps": v.record(v.string(), timestamp),
    "created-at": timestamp,
    message: orNull(v.string()),
    source: v.literal("tfe-api"),
    "trigger-reason": v.literal("manual"),
    "auto-apply": v.boolean(),
    "is-destroy": v.boolean(),
    "has-changes": v.boolean(),
    "plan-only": v.boolean(),
    refresh: v.boolean(),
    "refresh-only": v.boolean(),
    "save-plan": v.boolean(),
    "allow-empty-apply": v.boolean(),
    "position-in-queue": v.number(),
    "terraform-version": v.string(),
    "engine-version": v.string(),
    "error-message": orNull(v.string()),
    "status-reason": orNull(v.string()),
    actions: v.strictObject({
      "is-confirmable": v.boolean(),
      "is-discardable": v.boolean(),
      "is-cancelable": v.boolean(),
      "is-force-cancelable": v.boolean(),
    }),
    permissions: v.strictObject({
      "can-apply": v.boolean(),
      "can-cancel": v.boolean(),
      "can-discard": v.boolean(),
      "can-force-execute": v.boolean(),
      "can-force-cancel": v.boolean(),
      "can-override-policy": v.boolean(),
    }),
  },
  {
    workspace: v.strictObject({ data: identifierOf("workspaces") }),
    plan: toOneAnswer("plans"),
    apply: toOneAnswer("applies"),
    "configuration-version": toOneAnswer("configuration-versions"),
  },
);

/** B14: a document of one run. */
export const runDocumentAnswer = single(runAnswer);

/** B14: a document of one plan ({@link planResource}). */
export const planDocumentAnswer = single(
  v.strictObject({
    id: v.string(),
    type: v.literal("plans"),
    attributes: v.strictObject({
      status: v.picklist(["pending", "queued", "running", "errored", "finished", "unreachable"]),
      "status-timestamps": v.strictObject({
        "queued-at": v.optional(timestamp),
        "started-at": v.optional(timestamp),
        "finished-at": v.optional(timestamp),
      }),
      "has-changes": v.boolean(),
      "resource-additions": v.number(),
      "resource-changes": v.number(),
      "resource-destructions": v.number(),
      "resource-imports": v.number(),
      "log-read-url": orNull(v.string()),
      "execution-details": v.union([
        v.strictObject({ mode: v.literal("remote"), planner: v.literal("structural") }),
        v.strictObject({
          mode: v.literal("agent"),
          "agent-id": v.optional(v.string()),
          "agent-name": v.optional(v.string()),
          "agent-pool-id": v.optional(v.string()),
          "agent-pool-name": v.optional(v.string()),
          "engine-name": v.optional(v.string()),
          "engine-version": v.optional(v.string()),
        }),
      ]),
    }),
    relationships: v.strictObject({ run: v.strictObject({ data: identifierOf("runs") }) }),
    links: v.strictObject({ self: v.string(), "json-output": v.string() }),
  }),
);

/** B14: a document of one apply ({@link applyResource}). */
export const applyDocumentAnswer = single(
  v.strictObject({
    id: v.string(),
    type: v.literal("applies"),
    attributes: v.strictObject({
      status: v.picklist(["pending", "queued", "running", "errored", "canceled", "finished", "unreachable"]),
      "status-timestamps": v.strictObject({
        "queued-at": v.optional(timestamp),
        "started-at": v.optional(timestamp),
        "finished-at": v.optional(timestamp),
      }),
      "log-read-url": orNull(v.string()),
      "resource-additions": v.number(),
      "resource-changes": v.number(),
      "resource-destructions": v.number(),
      "resource-imports": v.number(),
      "execution-details": v.record(v.string(), v.string()),
    }),
    relationships: v.strictObject({ run: v.strictObject({ data: identifierOf("runs") }) }),
    links: v.strictObject({ self: v.string() }),
  }),
);
