/**
 * Fleet upgrades (decision N15): an upgrade rollout moves the workspaces of a
 * no-code module to the version it targets, in batches driven by the provisioning queue.
 *
 * - Create: the workspaces given, or every workspace of the module with
 *   `no-code-upgrade-available`; each item records the workspace's latest run and a digest
 *   of its vars, so a workspace changed by someone else before its batch is skipped with
 *   a reason, never overwritten.
 * - A step ({@link advanceRollout}, queue message `rollout-step`) refreshes the items
 *   from their runs, ends the rollout `failed` when the pin moved or more than
 *   `max-failures` items errored, plans the pending items of the current batch with E5's
 *   service, confirms as E7 does each plan that meets `auto-confirm`, and moves to the
 *   next batch once every item of this one ended.
 * - N19: on an agent workspace E5 only queues the plan. The item then stays `planning`
 *   with its run, showing the run's reason while it waits for an agent of the pool
 *   ("waiting for an agent of pool <name>"); the batch waits for it like any plan, and the
 *   agent's `finish` queues a step that records the real counts and judges
 *   `auto-confirm` on them. Cancel (or a failure) cancels the runs still queued (N19a)
 *   and discards the planned ones; a plan an agent is still making is discarded once it
 *   reaches `planned`.
 * - Idempotence: every item and rollout status change is a conditional UPDATE in D1; a
 *   confirmation is the run's own conditional `planned → apply_queued`. A redelivered or
 *   duplicated step finds the rows already moved and does nothing twice.
 *
 * Permissions (N10): `manage-workspaces`; the organization token → 404.
 */
import { createDb, type Db } from "../../db/client";
import { insertUnique } from "../../db/unique";
import { logInfo } from "../../lib/log";
import type { NocodeCaller } from "../access/auth";
import { conflict, NocodeError, notFound, unprocessable } from "../errors";
import { newId } from "../ids";
import { rolloutStepMessage } from "../messages/provision";
import { optionSetFingerprint } from "../no-code-modules/fingerprint";
import { provisionableVersion } from "../no-code-modules/provisionable";
import { findNoCodeModule, listVariableOptions, type NoCodeModuleRow } from "../no-code-modules/repo";
import { ACTIVE_ROLLOUT_STATUSES } from "../rollout-hooks";
import { discardOrCancelRun } from "../runs/discard";
import { discardPlannedRunStatements, findActiveRun, findRun, type RunRow } from "../runs/repo";
import { planOf } from "../runs/serialize";
import { confirmUpgradeRun } from "../upgrade/confirm";
import type { UpgradeDeps } from "../upgrade/deps";
import { planUpgrade, type UpgradeEnv } from "../upgrade/initiate";
import {
  findWorkspace,
  listModuleWorkspaces,
  listModuleWorkspaceVarStamps,
  listWorkspaceVars,
  type WorkspaceRow,
} from "../workspaces/repo";
import { MAX_ROLLOUT_WORKSPACES, type RolloutInput } from "./input";
import {
  countErroredItems,
  deleteRolloutStatements,
  findRollout,
  hasBatch,
  insertRolloutStatements,
  listBatchItems,
  listItemsBehindTheirRuns,
  listRolloutItems,
  moveToBatch,
  type RolloutItemRow,
  type RolloutItemStatus,
  type RolloutRow,
  type RolloutStatus,
  takeOverPlanningItem,
  transitionItem,
  transitionRollout,
} from "./repo";

/** Workspaces of a module looked at by one create. */
const MAX_MODULE_WORKSPACES = 10_000;

/** How long a step holds an item it is planning before a redelivered step may take it over. */
const PLANNING_LEASE_MS = 30_000;

/** Item statuses that have ended. */
const ENDED: readonly RolloutItemStatus[] = ["applied", "skipped", "errored", "canceled"];

/** A digest of a workspace's vars (ids and update times): any write to them changes it. */
async function varsDigest(db: Db, workspaceId: string): Promise<string> {
  return digestOf(await listWorkspaceVars(db, workspaceId));
}

async function digestOf(vars: readonly { id: string; updatedAt: number }[]): Promise<string> {
  const text = vars
    .map((v) => `${v.id}:${v.updatedAt}`)
    .sort()
    .join(",");
  const hash = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(hash)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The module to roll out (404 when there is none). Whoever calls it has checked the
 * caller's `run-workspaces` in its organization (N10: a manage-workspaces team; never the
 * organization token): the routes through their rights (../route-rights.ts).
 */
export async function rolloutModule(db: Db, noCodeModuleId: string): Promise<NoCodeModuleRow> {
  const module = await findNoCodeModule(db, noCodeModuleId);
  if (!module) throw notFound();
  return module;
}

/** The rollout (404 when there is none); the caller's rights were checked as for {@link rolloutModule}. */
async function rolloutFor(db: Db, rolloutId: string): Promise<RolloutRow> {
  const rollout = await findRollout(db, rolloutId);
  if (!rollout) throw notFound();
  return rollout;
}

/**
 * N15 create, with validated input on a module the caller may roll out (see
 * {@link rolloutModule}). Returns the new rollout; its first step is queued.
 *
 * @example
 * const rollout = await createRollout(db, caller, module, rolloutInputOf(await rolloutCreate.body(c)), defaultUpgradeDeps(c.env));
 */
export async function createRollout(
  db: Db,
  caller: NocodeCaller,
  module: NoCodeModuleRow,
  input: RolloutInput,
  deps: UpgradeDeps,
): Promise<RolloutRow> {
  const { version } = await provisionableVersion(db, module);

  // A constant number of queries whatever the number of workspaces (D1 counts queries per invocation).
  const [all, options, allVars] = await Promise.all([
    listModuleWorkspaces(db, module.id, MAX_MODULE_WORKSPACES),
    listVariableOptions(db, module.id),
    listModuleWorkspaceVarStamps(db, module.id),
  ]);
  let targets: WorkspaceRow[];
  if (input.workspaceIds) {
    const byId = new Map(all.map((w) => [w.id, w] as const));
    targets = input.workspaceIds.map((id) => {
      const ws = byId.get(id);
      if (!ws || ws.organization !== module.organization)
        throw unprocessable(`Workspace ${id} is not a workspace of this no-code module`);
      return ws;
    });
  } else {
    // N8's no-code-upgrade-available, with the module's pin and option fingerprint read once.
    const fingerprint = await optionSetFingerprint(options);
    targets = all.filter((ws) => ws.noCodeVersion !== module.versionPin || ws.optionSetFingerprint !== fingerprint);
    if (targets.length > MAX_ROLLOUT_WORKSPACES)
      throw unprocessable(
        `More than ${MAX_ROLLOUT_WORKSPACES} workspaces have an upgrade available; list the workspaces of each rollout`,
      );
    if (targets.length === 0) throw unprocessable("No workspace of this no-code module has an upgrade available");
  }
  const varsOf = new Map<string, { id: string; updatedAt: number }[]>();
  for (const v of allVars) varsOf.set(v.workspaceId, [...(varsOf.get(v.workspaceId) ?? []), v]);

  const now = deps.now();
  const rollout: RolloutRow = {
    id: newId("rollout"),
    organization: module.organization,
    noCodeModuleId: module.id,
    targetVersionId: version.id,
    targetVersion: version.version,
    batchSize: input.batchSize,
    autoConfirm: input.autoConfirm,
    maxFailures: input.maxFailures,
    status: "pending",
    reason: null,
    currentBatch: 0,
    createdBy: caller.kind === "user" ? caller.username : caller.kind === "team" ? caller.teamId : null,
    createdAt: now,
    updatedAt: now,
  };
  const items: RolloutItemRow[] = [];
  for (const [position, ws] of targets.entries()) {
    items.push({
      rolloutId: rollout.id,
      workspaceId: ws.id,
      position,
      batch: Math.floor(position / input.batchSize),
      status: "pending",
      runId: null,
      reason: null,
      additions: null,
      changes: null,
      destructions: null,
      baselineRunId: ws.latestRunId,
      baselineVars: await digestOf(varsOf.get(ws.id) ?? []),
      updatedAt: now,
    });
  }
  // One batch (a transaction): the partial unique index decides between concurrent creates.
  await insertUnique(db.batch(insertRolloutStatements(db, rollout, items)), () =>
    conflict("The no-code module already has an active upgrade rollout; wait for it to end or cancel it"),
  );
  try {
    await deps.send(rolloutStepMessage(rollout.id));
  } catch (err) {
    await db.batch(deleteRolloutStatements(db, rollout.id));
    throw err;
  }
  logInfo("rollout created", {
    rollout: rollout.id,
    module: module.id,
    target: version.version,
    workspaces: items.length,
    batchSize: input.batchSize,
  });
  return rollout;
}

/** N15 read: the rollout and its items. */
export async function readRollout(
  db: Db,
  rolloutId: string,
): Promise<{ rollout: RolloutRow; items: RolloutItemRow[] }> {
  const rollout = await rolloutFor(db, rolloutId);
  return { rollout, items: await listRolloutItems(db, rollout.id) };
}

function logItem(
  rollout: RolloutRow,
  workspaceId: string,
  status: RolloutItemStatus,
  fields: Record<string, unknown> = {},
) {
  logInfo("rollout item", {
    rollout: rollout.id,
    batch: rollout.currentBatch,
    workspace: workspaceId,
    status,
    ...fields,
  });
}

/** The plan counts of a planned run. */
function planCounts(run: RunRow) {
  const plan = planOf(run);
  return { additions: plan?.additions ?? 0, changes: plan?.changes ?? 0, destructions: plan?.destructions ?? 0 };
}

/** Whether the plan meets the rollout's gate (N15). */
function meetsGate(gate: string, counts: ReturnType<typeof planCounts>): boolean {
  if (gate === "no-destructions") return counts.destructions === 0;
  if (gate === "no-changes") return counts.additions + counts.changes + counts.destructions === 0;
  return false;
}

/**
 * Discard the unconfirmed plan of an item and mark it `canceled` (cancel, failure): the
 * run's own conditional `planned → discarded` decides against a concurrent confirmation;
 * a run confirmed meanwhile leaves the item applying. N19a: a run still queued for an
 * agent is canceled; one an agent is planning is left to finish, and discarded by the
 * step its `finish` queues ({@link discardEndedRolloutPlans}).
 */
async function discardItemPlan(
  db: Db,
  rollout: RolloutRow,
  item: RolloutItemRow,
  reason: string,
  at: number,
): Promise<void> {
  if (item.runId) {
    const outcome = await discardOrCancelRun(db, item.runId, at);
    const run = await findRun(db, item.runId);
    if (!outcome && run && run.status !== "discarded" && run.status !== "canceled") {
      await syncItemWithRun(db, rollout, item);
      return;
    }
  }
  if (
    await transitionItem(
      db,
      rollout.id,
      item.workspaceId,
      ["pending", "planning", "waiting-confirmation"],
      "canceled",
      at,
      { reason },
    )
  ) {
    logItem(rollout, item.workspaceId, "canceled", { reason });
  }
}

/** End the rollout as `status` (failed, canceled): every item that has not started applying is canceled. */
async function endRollout(
  db: Db,
  rollout: RolloutRow,
  from: readonly RolloutStatus[],
  status: "failed" | "canceled",
  reason: string | null,
  at: number,
): Promise<boolean> {
  if (!(await transitionRollout(db, rollout.id, from, status, at, { reason }))) return false;
  logInfo("rollout ended", { rollout: rollout.id, status, reason });
  const itemReason = status === "canceled" ? "the rollout was canceled" : `the rollout failed: ${reason}`;
  for (const item of await listRolloutItems(db, rollout.id)) {
    if (item.status === "pending" || item.status === "planning" || item.status === "waiting-confirmation")
      await discardItemPlan(db, rollout, item, itemReason, at);
  }
  return true;
}

/** Bring an item that holds a run up to date with the run (E7 by hand, applies finishing). */
async function syncItemWithRun(
  db: Db,
  rollout: RolloutRow,
  item: RolloutItemRow,
  known?: Pick<RunRow, "id" | "status" | "error">,
): Promise<void> {
  if (!item.runId) return;
  const run = known ?? (await findRun(db, item.runId));
  const at = Date.now();
  if (!run) return;
  const move = async (from: RolloutItemStatus[], to: RolloutItemStatus, reason: string | null = null) => {
    if (await transitionItem(db, rollout.id, item.workspaceId, from, to, at, { reason }))
      logItem(rollout, item.workspaceId, to, { run: run.id, reason });
  };
  switch (run.status) {
    case "confirmed":
    case "apply_queued":
    case "applying":
      return move(["waiting-confirmation", "planning"], "applying");
    case "applied":
      return move(["waiting-confirmation", "planning", "applying"], "applied");
    case "errored":
      return move(["waiting-confirmation", "planning", "applying"], "errored", run.error ?? "the run errored");
    case "discarded":
    case "canceled":
      return move(
        ["waiting-confirmation", "planning", "applying"],
        "skipped",
        `the upgrade run was ${run.status} outside the rollout`,
      );
  }
}

/** Confirm an item's planned run as E7 does; the item moves to applying, or records why not. */
async function confirmItem(
  db: Db,
  rollout: RolloutRow,
  module: NoCodeModuleRow,
  item: RolloutItemRow & { runId: string },
  deps: UpgradeDeps,
): Promise<void> {
  const [workspace, run] = await Promise.all([findWorkspace(db, item.workspaceId), findRun(db, item.runId)]);
  if (!workspace || !run) return;
  try {
    await confirmUpgradeRun(db, module, workspace, run, deps);
  } catch (err) {
    if (!(err instanceof NocodeError)) throw err;
    const after = await findRun(db, item.runId);
    // Confirmed by someone else meanwhile (E7 by hand, a concurrent confirm): it counts.
    if (after && after.status !== "planned" && after.status !== "discarded") return syncItemWithRun(db, rollout, item);
    // A stale plan means the workspace (or the module) changed under the rollout: skipped.
    const reason = `not confirmed: ${err.detail ?? err.message}`;
    if (
      await transitionItem(db, rollout.id, item.workspaceId, ["waiting-confirmation"], "skipped", Date.now(), {
        reason,
      })
    ) {
      await db.batch(discardPlannedRunStatements(db, item.runId, Date.now()));
      logItem(rollout, item.workspaceId, "skipped", { run: item.runId, reason });
    }
    return;
  }
  if (await transitionItem(db, rollout.id, item.workspaceId, ["waiting-confirmation"], "applying", Date.now())) {
    logItem(rollout, item.workspaceId, "applying", { run: item.runId });
  }
}

/**
 * N19: follow an item whose run an agent plans: record the plan once the run is `planned`
 * (and confirm it when it meets the gate); while it waits, show the run's reason on the
 * item ("waiting for an agent of pool <name>"); a run that ended is followed as any.
 */
async function followAgentPlan(
  db: Db,
  rollout: RolloutRow,
  module: NoCodeModuleRow,
  item: RolloutItemRow & { runId: string },
  deps: UpgradeDeps,
): Promise<void> {
  const run = await findRun(db, item.runId);
  if (!run) return;
  if (run.status === "planned") return recordPlan(db, rollout, module, item, run, deps);
  if (run.status === "pending" || run.status === "plan_queued" || run.status === "planning") {
    const reason = run.status === "planning" ? null : (run.statusReason ?? "waiting for an agent");
    if (reason !== item.reason)
      await transitionItem(db, rollout.id, item.workspaceId, ["planning"], "planning", deps.now(), { reason });
    return;
  }
  return syncItemWithRun(db, rollout, item, run);
}

/**
 * After a rollout ended (canceled, failed): items whose plan an agent was still making
 * when it ended have their plan discarded (or their run canceled) now, and are canceled.
 */
async function discardEndedRolloutPlans(db: Db, rollout: RolloutRow, at: number): Promise<void> {
  const reason =
    rollout.status === "canceled" ? "the rollout was canceled" : `the rollout failed: ${rollout.reason ?? ""}`;
  for (const item of await listRolloutItems(db, rollout.id)) {
    if (item.status === "planning" && item.runId) await discardItemPlan(db, rollout, item, reason, at);
  }
}

/** Plan one pending item of the current batch with E5's service (and confirm it when it meets the gate). */
async function planItem(
  env: UpgradeEnv,
  db: Db,
  rollout: RolloutRow,
  module: NoCodeModuleRow,
  item: RolloutItemRow,
  deps: UpgradeDeps,
): Promise<void> {
  const at = deps.now();
  if (item.status === "pending") {
    // Only one delivery of the step takes the item.
    if (!(await transitionItem(db, rollout.id, item.workspaceId, ["pending"], "planning", at))) return;
  } else if (item.status === "planning") {
    // A step that stopped mid-planning (redelivered after a crash): take the item over only
    // once its lease expired, by a conditional update on the time stamp it left, so two
    // deliveries running at once never plan the same workspace. Until then, retry later.
    if (at - item.updatedAt < PLANNING_LEASE_MS)
      throw new Error(`rollout ${rollout.id}: workspace ${item.workspaceId} is being planned by another step`);
    const claimed = await takeOverPlanningItem(db, rollout.id, item.workspaceId, item.updatedAt, at);
    if (!claimed) return;
  } else {
    return;
  }
  const workspace = await findWorkspace(db, item.workspaceId);
  const skip = async (reason: string) => {
    if (await transitionItem(db, rollout.id, item.workspaceId, ["planning"], "skipped", at, { reason }))
      logItem(rollout, item.workspaceId, "skipped", { reason });
  };
  if (!workspace || workspace.noCodeModuleId !== module.id)
    return skip("the workspace no longer belongs to the no-code module");

  // A step redelivered after it planned but before it recorded the run: adopt that run.
  if (item.status === "planning" && workspace.latestRunId && workspace.latestRunId !== item.baselineRunId) {
    const latest = await findRun(db, workspace.latestRunId);
    if (latest?.kind === "upgrade" && latest.message?.includes(rollout.id))
      return latest.status === "planned" || latest.executionMode !== "agent"
        ? recordPlan(db, rollout, module, item, latest, deps)
        : recordQueuedRun(env, db, rollout, module, item, latest, deps);
  }
  // N15: changed by someone else since the rollout began → skipped, never overwritten.
  if (workspace.latestRunId !== item.baselineRunId)
    return skip(`a run (${workspace.latestRunId}) was started on the workspace after the rollout began`);
  if ((await varsDigest(db, workspace.id)) !== item.baselineVars)
    return skip("the workspace's variables changed after the rollout began");
  // A run of someone else still in progress (say a manual E5's plan made before the rollout
  // began, waiting for its E7): the workspace is theirs to finish; planning here would
  // either discard their plan or fail on it, so it is skipped, never overwritten (N15).
  const busy = await findActiveRun(db, workspace.id);
  if (busy) return skip(`a run (${busy.id}) started outside the rollout is ${busy.status} on the workspace`);

  let result: Awaited<ReturnType<typeof planUpgrade>>;
  try {
    result = await planUpgrade(
      env,
      db,
      module,
      workspace,
      { vars: [], message: `Upgrade rollout ${rollout.id}: version ${rollout.targetVersion} of the no-code module` },
      at,
    );
  } catch (err) {
    if (!(err instanceof NocodeError)) throw err;
    const reason = err.detail ?? err.message;
    if (await transitionItem(db, rollout.id, item.workspaceId, ["planning"], "errored", at, { reason }))
      logItem(rollout, item.workspaceId, "errored", { reason });
    return;
  }
  if (result.kind === "no-upgrade") return skip(result.message);
  if (result.kind === "queued") return recordQueuedRun(env, db, rollout, module, item, result.run, deps);
  return recordPlan(db, rollout, module, item, result.run, deps);
}

/**
 * N19: E5 queued the item's run for an agent: the item keeps `planning` and records the
 * run, then follows it at once, since the agent may have finished the plan before the
 * item named its run (the notice of that `finish` found no item to wake).
 */
async function recordQueuedRun(
  env: UpgradeEnv,
  db: Db,
  rollout: RolloutRow,
  module: NoCodeModuleRow,
  item: RolloutItemRow,
  run: RunRow,
  deps: UpgradeDeps,
): Promise<void> {
  const recorded = await transitionItem(db, rollout.id, item.workspaceId, ["planning"], "planning", deps.now(), {
    runId: run.id,
    reason: run.statusReason,
  });
  if (!recorded) {
    // The item ended meanwhile (cancel, failure): its run must not wait for anyone.
    await discardOrCancelRun(db, run.id, deps.now(), env);
    return;
  }
  logItem(rollout, item.workspaceId, "planning", { run: run.id, reason: run.statusReason });
  return followAgentPlan(db, rollout, module, { ...item, runId: run.id, reason: run.statusReason }, deps);
}

/** Record a planned run on its item; confirm it when it meets the gate. */
async function recordPlan(
  db: Db,
  rollout: RolloutRow,
  module: NoCodeModuleRow,
  item: RolloutItemRow,
  run: RunRow,
  deps: UpgradeDeps,
): Promise<void> {
  const counts = planCounts(run);
  const recorded = await transitionItem(
    db,
    rollout.id,
    item.workspaceId,
    ["planning"],
    "waiting-confirmation",
    deps.now(),
    // The reason an agent run waited with is over once it is planned.
    { runId: run.id, reason: null, ...counts },
  );
  if (!recorded) {
    // The item ended meanwhile (cancel, failure): its plan must not wait for anyone.
    await db.batch(discardPlannedRunStatements(db, run.id, deps.now()));
    return;
  }
  logItem(rollout, item.workspaceId, "waiting-confirmation", { run: run.id, ...counts, gate: rollout.autoConfirm });
  if (meetsGate(rollout.autoConfirm, counts))
    await confirmItem(db, rollout, module, { ...item, runId: run.id, status: "waiting-confirmation" }, deps);
}

/** Errored items, and whether they exceed `max-failures`. */
function overFailures(rollout: RolloutRow, errored: number): string | null {
  return errored > rollout.maxFailures
    ? `${errored} workspace(s) errored, more than max-failures (${rollout.maxFailures})`
    : null;
}

/**
 * One step of a rollout (queue message `rollout-step`): see the file comment. Returns the
 * rollout's status afterwards.
 */
export async function advanceRollout(
  env: Pick<Env, "DB"> & UpgradeEnv,
  rolloutId: string,
  deps: UpgradeDeps,
): Promise<string> {
  const db = createDb(env.DB);
  let rollout = await findRollout(db, rolloutId);
  if (!rollout) return "gone";
  // Items follow their runs even after the rollout ended (applies already running finish).
  for (const { item, run } of await listItemsBehindTheirRuns(db, rollout.id))
    await syncItemWithRun(db, rollout, item, run);
  if (rollout.status === "pending") await transitionRollout(db, rollout.id, ["pending"], "running", deps.now());
  rollout = (await findRollout(db, rolloutId))!;
  if (rollout.status === "canceled" || rollout.status === "failed")
    await discardEndedRolloutPlans(db, rollout, deps.now());
  if (rollout.status !== "running" && rollout.status !== "waiting-confirmation") return rollout.status;

  const module = await findNoCodeModule(db, rollout.noCodeModuleId);
  const active = ACTIVE_ROLLOUT_STATUSES;
  if (!module?.enabled || module.versionPin !== rollout.targetVersion) {
    const reason = !module
      ? "the no-code module was deleted"
      : !module.enabled
        ? "the no-code module was disabled"
        : `the module's version pin moved from ${rollout.targetVersion} to ${module.versionPin ?? "none"} during the rollout`;
    await endRollout(db, rollout, active, "failed", reason, deps.now());
    return "failed";
  }

  // Only the current batch's items are read (plus counts): a step of a 1,000-workspace
  // rollout must not read every item once per workspace it plans.
  for (const item of await listBatchItems(db, rollout.id, rollout.currentBatch)) {
    if (item.status !== "pending" && item.status !== "planning") continue;
    // A pause, cancel or failure between two items stops planning at once.
    const now = await findRollout(db, rollout.id);
    if (now?.status !== "running" && now?.status !== "waiting-confirmation") return now?.status ?? "gone";
    if (item.status === "planning" && item.runId)
      await followAgentPlan(db, rollout, module, { ...item, runId: item.runId }, deps);
    else await planItem(env, db, rollout, module, item, deps);
    const failure = overFailures(rollout, await countErroredItems(db, rollout.id));
    if (failure) {
      await endRollout(db, rollout, active, "failed", failure, deps.now());
      return "failed";
    }
  }
  const failure = overFailures(rollout, await countErroredItems(db, rollout.id));
  if (failure) {
    await endRollout(db, rollout, active, "failed", failure, deps.now());
    return "failed";
  }
  const batch = await listBatchItems(db, rollout.id, rollout.currentBatch);
  const counts = {
    ...Object.fromEntries(
      ["applying", "applied", "skipped", "errored", "waiting-confirmation"].map((s) => [
        s,
        batch.filter((i) => i.status === s).length,
      ]),
    ),
    // N19: items whose run waits for an agent (or is being planned by one) count as waiting.
    "waiting-for-plan": batch.filter((i) => i.status === "planning" && i.runId !== null).length,
  };
  if (batch.some((i) => i.status === "waiting-confirmation")) {
    if (await transitionRollout(db, rollout.id, ["running"], "waiting-confirmation", deps.now())) {
      logInfo("rollout batch", {
        rollout: rollout.id,
        batch: rollout.currentBatch,
        status: "waiting-confirmation",
        ...counts,
      });
    }
    return "waiting-confirmation";
  }
  // Nothing waits any more (confirmed by hand or by the action): running again.
  if (rollout.status === "waiting-confirmation")
    await transitionRollout(db, rollout.id, ["waiting-confirmation"], "running", deps.now());
  if (!batch.every((i) => ENDED.includes(i.status))) return "running"; // applies finishing will step again

  logInfo("rollout batch", { rollout: rollout.id, batch: rollout.currentBatch, status: "ended", ...counts });
  const next = rollout.currentBatch + 1;
  if (!(await hasBatch(db, rollout.id, next))) {
    if (await transitionRollout(db, rollout.id, ["running"], "completed", deps.now()))
      logInfo("rollout ended", { rollout: rollout.id, status: "completed" });
    return "completed";
  }
  // Conditional on the batch number: a duplicated step moves the rollout on once.
  const moved = await moveToBatch(db, rollout.id, rollout.currentBatch, next, deps.now());
  if (moved) await deps.send(rolloutStepMessage(rollout.id));
  return "running";
}

/** The rollout actions of N15. */
export type RolloutAction = "confirm" | "pause" | "resume" | "cancel";

/**
 * N15 actions: 202 when applied, 409 in a state where they do not apply.
 *
 * @example
 * await rolloutAction(c.var.db, id, "pause", defaultUpgradeDeps(c.env));
 */
export async function rolloutAction(
  db: Db,
  rolloutId: string,
  action: RolloutAction,
  deps: UpgradeDeps,
): Promise<RolloutRow> {
  const rollout = await rolloutFor(db, rolloutId);
  const refuse = () => conflict(`Cannot ${action} a rollout that is ${rollout.status}`);
  const at = deps.now();
  switch (action) {
    case "pause":
      if (!(await transitionRollout(db, rollout.id, ["pending", "running", "waiting-confirmation"], "paused", at)))
        throw refuse();
      logInfo("rollout paused", { rollout: rollout.id });
      break;
    case "resume":
      if (!(await transitionRollout(db, rollout.id, ["paused"], "running", at))) throw refuse();
      logInfo("rollout resumed", { rollout: rollout.id });
      await deps.send(rolloutStepMessage(rollout.id));
      break;
    case "cancel":
      if (!(await endRollout(db, rollout, ACTIVE_ROLLOUT_STATUSES, "canceled", null, at))) throw refuse();
      break;
    case "confirm": {
      if (rollout.status !== "waiting-confirmation") throw refuse();
      const module = await findNoCodeModule(db, rollout.noCodeModuleId);
      if (!module) throw refuse();
      const waiting = (await listRolloutItems(db, rollout.id)).filter(
        (i) => i.batch === rollout.currentBatch && i.status === "waiting-confirmation",
      );
      if (waiting.length === 0) throw refuse();
      for (const item of waiting)
        if (item.runId) await confirmItem(db, rollout, module, { ...item, runId: item.runId }, deps);
      logInfo("rollout batch confirmed", { rollout: rollout.id, batch: rollout.currentBatch, items: waiting.length });
      await deps.send(rolloutStepMessage(rollout.id));
      break;
    }
  }
  return (await findRollout(db, rollout.id))!;
}
