/**
 * The run lifecycle of decision N7, driven by the provisioning queue (N11):
 *
 *     pending → plan_queued → planning → planned → confirmed → apply_queued → applying → applied
 *                                      ↘ planned_and_finished (nothing to change; never for upgrade runs)
 *     any non-terminal state → errored (a permanent failure, or the dead-letter queue)
 *
 * - `plan-run`: plans the run's configuration snapshot against the workspace's baseline.
 *   With auto-apply (and not an upgrade run) the run continues to `apply_queued` by itself
 *   and an `apply-run` message is sent; otherwise it waits at `planned`.
 * - `apply-run`: records a state version (resource addresses, outputs with null values)
 *   and updates the workspace (`resource-count`, `current-state-version`,
 *   `latest-change-at`) in one D1 batch that only takes effect if this delivery moved
 *   the run from `applying` to `applied`, so a redelivered message never applies twice.
 *
 * Every status change is a conditional UPDATE (src/nocode/runs/repo.ts). A redelivery
 * that finds the run in `planning` or `applying` (the previous attempt failed midway)
 * repeats the step; its final conditional write has exactly one winner. Thrown errors
 * are transient (the consumer retries with backoff); a {@link RunFailure} is permanent
 * (the run becomes `errored` and the message is acknowledged).
 */
import { createDb, type Db } from "../../db/client";
import { newId } from "../ids";
import { type Plan, planRun } from "../planner";
import { applyRunMessage, type ProvisionMessage } from "../queue/messages";
import { moduleVersionByIdQuery } from "../registry/repo";
import { type PlanInputRows, parseRunConfiguration, planConfiguration, planConfigurationFrom, RunFailure, summaryOfVersion } from "./configuration";
import {
  applyRunStatements,
  findRun,
  type RunRow,
  type RunStatus,
  runModuleVersionIdSql,
  runWorkspaceIdSql,
  transitionRun,
  transitionRunQuery,
  workspaceBaselineQuery,
} from "./repo";

/** Bindings the run steps use. */
export type RunStepEnv = Pick<Env, "DB" | "PROVISION_QUEUE">;

/** Injectable dependencies of the run steps (N11: tests inject failures through them). */
export interface RunStepDeps {
  /** Clock. */
  now: () => number;
  /** The planner of N7. */
  planner: typeof planRun;
  /** Send a message on the provisioning queue (ids only, N11). */
  send: (message: ProvisionMessage) => Promise<void>;
  /** Called right before the apply's D1 batch; a test can throw here to simulate a fault. */
  beforeApplyCommit?: (runId: string) => Promise<void>;
}

/** Production dependencies, over `env.PROVISION_QUEUE`. */
export function defaultRunStepDeps(env: Pick<Env, "PROVISION_QUEUE">, overrides: Partial<RunStepDeps> = {}): RunStepDeps {
  return {
    now: Date.now,
    planner: planRun,
    send: async (message) => {
      await env.PROVISION_QUEUE.send(message, { contentType: "json" });
    },
    ...overrides,
  };
}

/** What a step did; every outcome is final for the message (ack). Faults throw instead. */
export type RunStepOutcome =
  | { outcome: "planned" | "planned_and_finished" | "apply_queued" | "applied" }
  | { outcome: "errored"; error: string }
  | { outcome: "skipped"; reason: string };

/** Record a permanent failure: `errored` with `error`, if the run is still in one of `from`. */
export async function errorRun(db: Db, runId: string, error: string, from: readonly RunStatus[], at = Date.now()): Promise<boolean> {
  return transitionRun(db, runId, from, ["errored"], at, { error });
}

/**
 * Claim a step: move the run from `from` to `working` (stamping `through`), or accept a
 * run already in `working` (a redelivery after a failed attempt). Returns false when the
 * run is elsewhere (the step was done, or the run was discarded or errored).
 */
async function claim(db: Db, runId: string, status: RunStatus, from: RunStatus[], through: [RunStatus, ...RunStatus[]], working: RunStatus, at: number) {
  if (status === working) return true;
  if (!from.includes(status)) return false;
  if (await transitionRun(db, runId, [status], through, at)) return true;
  return (await findRun(db, runId))?.status === working;
}

/** A run taken for planning, with the plan's input rows when the claim read them too. */
interface ClaimedRun {
  run: RunRow;
  rows?: PlanInputRows;
}

/**
 * Take a run for planning: a `pending` run (the usual first delivery) is claimed by one
 * conditional UPDATE that returns it, in one D1 batch with the plan's inputs (the
 * workspace's baseline and the proposed version, found through the run by subqueries, so
 * nothing is read before); any other case reads the run first. Returns the run, or the
 * step's outcome when there is nothing to plan.
 */
async function claimForPlanning(db: Db, runId: string, deps: RunStepDeps): Promise<ClaimedRun | RunStepOutcome> {
  const [claimedRows, baselineRows, versions] = await db.batch([
    transitionRunQuery(db, runId, ["pending"], ["plan_queued", "planning"], deps.now()).returning(),
    workspaceBaselineQuery(db, runWorkspaceIdSql(runId)),
    moduleVersionByIdQuery(db, runModuleVersionIdSql(runId)),
  ]);
  const claimed = claimedRows[0];
  if (claimed) return { run: claimed, rows: { baseline: baselineRows[0], version: versions[0] } };
  const run = await findRun(db, runId);
  if (!run) return { outcome: "skipped", reason: "unknown run" };
  if (run.status === "apply_queued" && run.autoApply && run.kind === "plan-and-apply") {
    // The previous delivery moved the run on but may have failed to queue the apply:
    // queue it again (the apply step is idempotent by run id).
    await deps.send(applyRunMessage(runId));
    return { outcome: "skipped", reason: "apply re-queued" };
  }
  const through: [RunStatus, ...RunStatus[]] = run.status === "pending" ? ["plan_queued", "planning"] : ["planning"];
  if (!(await claim(db, runId, run.status as RunStatus, ["pending", "plan_queued"], through, "planning", deps.now()))) {
    return { outcome: "skipped", reason: `run is already ${run.status}` };
  }
  return { run };
}

/** The `plan-run` step (see the module comment). */
export async function processPlanRun(env: RunStepEnv, runId: string, deps: RunStepDeps): Promise<RunStepOutcome> {
  const db = createDb(env.DB);
  const claimed = await claimForPlanning(db, runId, deps);
  if ("outcome" in claimed) return claimed;
  const { run, rows } = claimed;

  let plan: Plan;
  try {
    const configuration = parseRunConfiguration(run.configuration);
    plan = rows
      ? await planConfigurationFrom(db, rows, configuration, deps.planner)
      : await planConfiguration(db, run.workspaceId, configuration, deps.planner);
  } catch (err) {
    if (!(err instanceof RunFailure)) throw err;
    await errorRun(db, runId, err.message, ["planning"], deps.now());
    return { outcome: "errored", error: err.message };
  }

  const at = deps.now();
  const set = { plan: JSON.stringify(plan) };
  // N7: nothing to change ends the run, except an upgrade run, which waits for E7.
  if (!plan.hasChanges && run.kind !== "upgrade") {
    const moved = await transitionRun(db, runId, ["planning"], ["planned_and_finished"], at, set);
    return moved ? { outcome: "planned_and_finished" } : { outcome: "skipped", reason: "planned concurrently" };
  }
  if (run.autoApply && run.kind === "plan-and-apply") {
    // N7: with auto-apply the run continues past `planned` by itself.
    const moved = await transitionRun(db, runId, ["planning"], ["planned", "confirmed", "apply_queued"], at, set);
    if (!moved) return { outcome: "skipped", reason: "planned concurrently" };
    await deps.send(applyRunMessage(runId));
    return { outcome: "apply_queued" };
  }
  const moved = await transitionRun(db, runId, ["planning"], ["planned"], at, set);
  return moved ? { outcome: "planned" } : { outcome: "skipped", reason: "planned concurrently" };
}

/** The `apply-run` step (see the module comment). */
export async function processApplyRun(env: RunStepEnv, runId: string, deps: RunStepDeps): Promise<RunStepOutcome> {
  const db = createDb(env.DB);
  const run = await findRun(db, runId);
  if (!run) return { outcome: "skipped", reason: "unknown run" };
  if (!(await claim(db, runId, run.status as RunStatus, ["apply_queued"], ["applying"], "applying", deps.now()))) {
    return { outcome: "skipped", reason: `run is already ${run.status}` };
  }

  let resources: string[];
  let outputs: { name: string; sensitive: boolean; value: null }[];
  try {
    if (!run.plan) throw new RunFailure("the run has no plan");
    const plan = JSON.parse(run.plan) as Plan;
    const summary = await summaryOfVersion(db, parseRunConfiguration(run.configuration).moduleVersionId);
    resources = plan.addresses;
    outputs = summary.outputs.map((o) => ({ name: o.name, sensitive: o.sensitive, value: null }));
  } catch (err) {
    if (!(err instanceof RunFailure)) throw err;
    await errorRun(db, runId, err.message, ["applying"], deps.now());
    return { outcome: "errored", error: err.message };
  }
  await deps.beforeApplyCommit?.(runId);

  const at = deps.now();
  const stateVersionId = newId("sv");
  await db.batch(applyRunStatements(db, run, stateVersionId, resources, outputs, at));
  const after = await findRun(db, runId);
  return after?.stateVersionId === stateVersionId ? { outcome: "applied" } : { outcome: "skipped", reason: "applied concurrently" };
}

/** The error of a run whose message went to the dead-letter queue. */
export const RUN_GAVE_UP = "the run failed repeatedly because of an internal error";

/**
 * Dead-letter verdict (N11): the step of `kind` kept failing until the queue gave up, so
 * the run becomes `errored` if it is still in a state that step would have moved it out
 * of (a run waiting at `planned` for a person, or one already finished, is left alone).
 */
export async function failRunAfterRetries(env: Pick<Env, "DB">, runId: string, kind: "plan-run" | "apply-run", at = Date.now()): Promise<boolean> {
  const db = createDb(env.DB);
  const run = await findRun(db, runId);
  if (!run) return false;
  const from: RunStatus[] =
    kind === "apply-run"
      ? ["confirmed", "apply_queued", "applying"]
      : // A plan message of an auto-apply run also (re-)queues its apply.
        ["pending", "plan_queued", "planning", ...(run.autoApply && run.kind === "plan-and-apply" ? (["apply_queued"] as const) : [])];
  return errorRun(db, runId, RUN_GAVE_UP, from, at);
}
