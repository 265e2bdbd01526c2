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
import type { BatchItem } from "drizzle-orm/batch";
import { createDb, type Db, nonEmptyBatch } from "../../db/client";
import { queueAgentJob } from "../agent-pools/job-queue";
import { newId } from "../ids";
import { applyRunMessage, type ProvisionMessage } from "../messages/provision";
import { type Plan, planRun } from "../planner";
import {
  parseRunConfiguration,
  planConfiguration,
  planConfigurationFrom,
  RunFailure,
  summaryOfVersion,
} from "./configuration";
import {
  applyRunStatements,
  findRun,
  type RunRow,
  type RunStatus,
  type RunTransitionSet,
  runWorkspaceIdSql,
  transitionRun,
  transitionRunQuery,
  transitionRunReturningQuery,
  WORKSPACE_NOT_USER_LOCKED,
  type WorkspaceBaselineRow,
  workspaceBaselineQuery,
  workspaceUserLocked,
} from "./repo";

/** Bindings the run steps use. */
export type RunStepEnv = Pick<Env, "DB" | "PROVISION_QUEUE" | "AGENT_POOLS">;

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
export function defaultRunStepDeps(
  env: Pick<Env, "PROVISION_QUEUE">,
  overrides: Partial<RunStepDeps> = {},
): RunStepDeps {
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
export async function errorRun(
  db: Db,
  runId: string,
  error: string,
  from: readonly RunStatus[],
  at = Date.now(),
): Promise<boolean> {
  return transitionRun(db, runId, from, ["errored"], at, { error });
}

/**
 * Claim a step: move the run from `from` to `working` (stamping `through`), or accept a
 * run already in `working` (a redelivery after a failed attempt). Returns false when the
 * run is elsewhere (the step was done, or the run was discarded or errored).
 */
async function claim(
  db: Db,
  runId: string,
  status: RunStatus,
  from: RunStatus[],
  through: [RunStatus, ...RunStatus[]],
  working: RunStatus,
  at: number,
) {
  if (status === working) return true;
  if (!from.includes(status)) return false;
  // N20: a run moves to planning only while no user holds its workspace's lock.
  const condition = working === "planning" ? WORKSPACE_NOT_USER_LOCKED : undefined;
  if ((await transitionRunReturningQuery(db, runId, [status], through, at, {}, condition).get()) !== undefined)
    return true;
  return (await findRun(db, runId))?.status === working;
}

/** A run taken for planning, with the workspace's baseline row when the claim read it too. */
interface ClaimedRun {
  run: RunRow;
  baseline?: { row: WorkspaceBaselineRow | undefined };
}

/**
 * Take a run that the batched claim of {@link processPlanRuns} did not find `pending`: a
 * redelivery, or a run moved on meanwhile. The run is read first. Returns the run, or the
 * step's outcome when there is nothing to plan.
 */
async function claimUnpendingRun(db: Db, runId: string, deps: RunStepDeps): Promise<ClaimedRun | RunStepOutcome> {
  const run = await findRun(db, runId);
  if (!run) return { outcome: "skipped", reason: "unknown run" };
  if (run.status === "apply_queued" && run.autoApply && run.kind === "plan-and-apply") {
    // The previous delivery moved the run on but may have failed to queue the apply:
    // queue it again (the apply step is idempotent by run id).
    await deps.send(applyRunMessage(runId));
    return { outcome: "skipped", reason: "apply re-queued" };
  }
  if ((run.status === "pending" || run.status === "plan_queued") && (await workspaceUserLocked(db, run.workspaceId))) {
    // N20: a user's lock keeps the run queued; unlocking sends its plan message again.
    if (run.status === "pending") await transitionRun(db, runId, ["pending"], ["plan_queued"], deps.now());
    return { outcome: "skipped", reason: "the workspace is locked" };
  }
  const through: [RunStatus, ...RunStatus[]] = run.status === "pending" ? ["plan_queued", "planning"] : ["planning"];
  if (!(await claim(db, runId, run.status as RunStatus, ["pending", "plan_queued"], through, "planning", deps.now()))) {
    return { outcome: "skipped", reason: `run is already ${run.status}` };
  }
  return { run };
}

/** One run of {@link processPlanRuns}: its id and the dependencies its step uses. */
export interface PlanRunStep {
  runId: string;
  deps: RunStepDeps;
}

/** The result of one {@link PlanRunStep}: its outcome, or the transient fault that failed it alone. */
export type PlanRunResult = RunStepOutcome | { fault: unknown };

/** What planning a claimed run decided, before it is recorded. */
type PlanDecision = { plan: Plan } | { failure: string } | { fault: unknown };

/**
 * N7's move out of `planning` for `decision`, with the outcome it has when this step's
 * conditional UPDATE wins: errored on a permanent failure; `planned_and_finished` when
 * nothing changes (never for an upgrade run, which waits for E7); on through
 * `apply_queued` with auto-apply; else `planned`.
 */
function planTransition(
  run: RunRow,
  decision: { plan: Plan } | { failure: string },
): { through: [RunStatus, ...RunStatus[]]; set: RunTransitionSet; outcome: RunStepOutcome } {
  if ("failure" in decision)
    return {
      through: ["errored"],
      set: { error: decision.failure },
      outcome: { outcome: "errored", error: decision.failure },
    };
  const set = { plan: JSON.stringify(decision.plan) };
  if (!decision.plan.hasChanges && run.kind !== "upgrade")
    return { through: ["planned_and_finished"], set, outcome: { outcome: "planned_and_finished" } };
  if (run.autoApply && run.kind === "plan-and-apply")
    return { through: ["planned", "confirmed", "apply_queued"], set, outcome: { outcome: "apply_queued" } };
  return { through: ["planned"], set, outcome: { outcome: "planned" } };
}

/**
 * The `plan-run` step for the runs of one queue batch (see the module comment). For speed
 * (docs/performance.md): a D1 round trip costs more than planning a run, so the runs are planned together in
 * two round trips in all, whatever their number: one D1 batch claims every `pending` run
 * (`pending → plan_queued → planning`, one conditional UPDATE each, returning the run)
 * with its workspace's baseline, and after planning, one batch records every plan (one
 * conditional UPDATE from `planning` each). A run the claim did not find `pending` takes
 * the slower path of a redelivery ({@link claimUnpendingRun}) and joins the second batch.
 *
 * Returns each step's result in order. A fault of one run (its planner threw, its apply
 * could not be queued) fails that run alone; a fault of a shared D1 batch throws, and
 * every message is retried (each step is idempotent by run id).
 */
export async function processPlanRuns(env: RunStepEnv, steps: readonly PlanRunStep[]): Promise<PlanRunResult[]> {
  if (steps.length === 0) return [];
  const db = createDb(env.DB);
  const results: PlanRunResult[] = new Array(steps.length);

  // Two statements per run, in step order: its claim (returning the run), its baseline.
  const reads = await db.batch(
    nonEmptyBatch(
      steps.flatMap(({ runId, deps }): BatchItem<"sqlite">[] => [
        // N20: not while a user holds the workspace's lock (the slower path below holds the run queued).
        transitionRunQuery(
          db,
          runId,
          ["pending"],
          ["plan_queued", "planning"],
          deps.now(),
          {},
          WORKSPACE_NOT_USER_LOCKED,
        ).returning(),
        workspaceBaselineQuery(db, runWorkspaceIdSql(runId)),
      ]),
    ),
  );
  const claimed: { index: number; claimed: ClaimedRun }[] = [];
  for (const [index, step] of steps.entries()) {
    const run = (reads[2 * index] as RunRow[])[0];
    if (run) {
      claimed.push({ index, claimed: { run, baseline: { row: (reads[2 * index + 1] as WorkspaceBaselineRow[])[0] } } });
      continue;
    }
    try {
      const taken = await claimUnpendingRun(db, step.runId, step.deps);
      if ("outcome" in taken) results[index] = taken;
      else claimed.push({ index, claimed: taken });
    } catch (fault) {
      results[index] = { fault };
    }
  }

  const decisions = await Promise.all(
    claimed.map(async ({ index, claimed: { run, baseline } }): Promise<PlanDecision> => {
      const { planner } = steps[index]!.deps;
      try {
        const configuration = parseRunConfiguration(run.configuration);
        const plan = baseline
          ? await planConfigurationFrom(db, baseline.row, configuration, planner)
          : await planConfiguration(db, run.workspaceId, configuration, planner);
        return { plan };
      } catch (err) {
        return err instanceof RunFailure ? { failure: err.message } : { fault: err };
      }
    }),
  );

  const toRecord = claimed.flatMap(({ index, claimed: { run } }, i) => {
    const decision = decisions[i]!;
    if ("fault" in decision) {
      results[index] = { fault: decision.fault };
      return [];
    }
    return [{ index, run, transition: planTransition(run, decision) }];
  });
  if (toRecord.length === 0) return results;
  // One conditional UPDATE from `planning` per run, returning its id when it moved.
  const written = await db.batch(
    nonEmptyBatch(
      toRecord.map(
        ({ index, run, transition }): BatchItem<"sqlite"> =>
          transitionRunReturningQuery(
            db,
            run.id,
            ["planning"],
            transition.through,
            steps[index]!.deps.now(),
            transition.set,
          ),
      ),
    ),
  );

  for (const [i, { index, run, transition }] of toRecord.entries()) {
    const moved = (written[i] as unknown[]).length > 0;
    const outcome: RunStepOutcome = moved ? transition.outcome : { outcome: "skipped", reason: "planned concurrently" };
    results[index] = outcome;
    if (outcome.outcome !== "apply_queued") continue;
    try {
      await steps[index]!.deps.send(applyRunMessage(run.id));
    } catch (fault) {
      // The run is `apply_queued`: the retried message finds it there and queues the apply again.
      results[index] = { fault };
    }
  }
  return results;
}

/** The `apply-run` step (see the module comment). */
export async function processApplyRun(env: RunStepEnv, runId: string, deps: RunStepDeps): Promise<RunStepOutcome> {
  const db = createDb(env.DB);
  const run = await findRun(db, runId);
  if (!run) return { outcome: "skipped", reason: "unknown run" };
  if (run.executionMode === "agent") {
    // N19: an agent applies the run; its job is queued for the pool (idempotent by run and phase).
    if (run.status !== "apply_queued") return { outcome: "skipped", reason: `run is already ${run.status}` };
    await queueAgentJob(env, db, runId, "apply", deps.now());
    return { outcome: "skipped", reason: "apply queued for an agent" };
  }
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
  return after?.stateVersionId === stateVersionId
    ? { outcome: "applied" }
    : { outcome: "skipped", reason: "applied concurrently" };
}

/** The error of a run whose message went to the dead-letter queue. */
export const RUN_GAVE_UP = "the run failed repeatedly because of an internal error";

/**
 * Dead-letter verdict (N11): the step of `kind` kept failing until the queue gave up, so
 * the run becomes `errored` if it is still in a state that step would have moved it out
 * of (a run waiting at `planned` for a person, or one already finished, is left alone).
 */
export async function failRunAfterRetries(
  env: Pick<Env, "DB">,
  runId: string,
  kind: "plan-run" | "apply-run",
  at = Date.now(),
): Promise<boolean> {
  const db = createDb(env.DB);
  const run = await findRun(db, runId);
  if (!run) return false;
  const from: RunStatus[] =
    kind === "apply-run"
      ? ["confirmed", "apply_queued", "applying"]
      : // A plan message of an auto-apply run also (re-)queues its apply.
        [
          "pending",
          "plan_queued",
          "planning",
          ...(run.autoApply && run.kind === "plan-and-apply" ? (["apply_queued"] as const) : []),
        ];
  return errorRun(db, runId, RUN_GAVE_UP, from, at);
}
