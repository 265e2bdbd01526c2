/**
 * Workspace locks (decision N20), HCP Terraform's
 * `POST /workspaces/:id/actions/lock|unlock|force-unlock`
 * (https://developer.hashicorp.com/terraform/cloud-docs/api-docs/workspaces#lock-a-workspace):
 * 200 with the workspace (a lock's `reason` is accepted and not kept); 409 when the workspace is already locked (lock), is not locked or
 * is locked by someone else (unlock), or while a run is `applying` (force-unlock). Force-unlock
 * of a lock held by a run that is not applying ends that run (see `endLockingRun`).
 *
 * A user's (or team's) lock is stored on the workspace (`locked_by`). A run holds the lock
 * from `planning` to its end: that lock is read from the run's status, never stored, so it
 * ends with the run whatever ends it. While a user holds the lock, the workspace's queued
 * runs stay `plan_queued`: for an agent workspace its pool is told before the lock is
 * written, so no plan job is handed out meanwhile; a remote workspace's runs are held by
 * the Queue consumer (../runs/lifecycle.ts) and sent again on unlock.
 *
 * Rights: lock and unlock need manage-workspaces as a user or team (`run-workspaces`, as the
 * other run actions); force-unlock needs the owners team.
 */
import { type Context, Hono } from "hono";
import { logError } from "../../lib/log";
import type { NocodeCaller } from "../access/auth";
import { tellPoolJobCanceled, tellPoolWorkspaceLock } from "../agent-pools/job-queue";
import { cancelJobOfCanceledRunQuery, findLiveJobOfRun, type JobStatus } from "../agents/repo";
import type { NocodeEnv } from "../env";
import { conflict } from "../errors";
import { planRunMessage } from "../messages/provision";
import { operation } from "../request/operation";
import { jsonApi } from "../respond";
import { rights, scope } from "../route-rights";
import {
  discardPlannedRunStatements,
  findLockingRun,
  findQueuedRuns,
  type RunStatus,
  transitionRunReturningQuery,
} from "../runs/repo";
import { loadWorkspaceResource } from "./load";
import { findWorkspace, forceReleaseLock, releaseLock, takeLock, type WorkspaceRow } from "./repo";
import { workspaceDocumentAnswer } from "./serialize";

/** The workspace `:id`. */
const workspaceById = scope(async (c) => {
  const ws = await findWorkspace(c.var.db, c.req.param("id") ?? "");
  return ws && { resource: ws, organization: ws.organization };
});

/** Who a lock is held by, as stored in `locked_by`. */
export function lockHolderOf(caller: NocodeCaller): string | null {
  switch (caller.kind) {
    case "user":
      return `user:${caller.userId}`;
    case "team":
      return `team:${caller.teamId}`;
    default:
      return null;
  }
}

/**
 * Tell whoever holds the workspace's queued runs of a lock change (N20): an agent
 * workspace's pool; for a remote workspace, unlocking sends the plan message of each run
 * the lock kept queued again (the Queue consumer held them in `plan_queued`).
 */
async function tellPool(c: Context<NocodeEnv>, ws: WorkspaceRow, locked: boolean) {
  if (ws.executionMode === "agent" && ws.agentPoolId) {
    await tellPoolWorkspaceLock(c.env, ws.agentPoolId, ws.id, locked);
    return;
  }
  if (locked) return;
  for (const run of await findQueuedRuns(c.var.db, ws.id))
    await c.env.PROVISION_QUEUE.send(planRunMessage(run.id), { contentType: "json" });
}

/** A lock action's description: it answers the workspace, or 409. */
const lockAction = (summary: string) =>
  operation({
    tag: "workspaces",
    summary,
    answers: { 200: { description: "The workspace", schema: workspaceDocumentAnswer } },
    errors: [409],
  });

/** The answer of a lock action: the workspace as it is now (`ws` if it is gone meanwhile). */
async function workspaceNow(c: Context<NocodeEnv>, ws: WorkspaceRow): Promise<Response> {
  const db = c.var.db;
  const now = await findWorkspace(db, ws.id);
  return jsonApi({ data: await loadWorkspaceResource(db, c.var.orgRights, now ?? ws) });
}

/** Routes of workspace locks. */
export const workspaceLockRoutes = new Hono<NocodeEnv>();

workspaceLockRoutes.post(
  "/workspaces/:id/actions/lock",
  rights({ right: "run-workspaces" }, { cache: "unchanged", scope: workspaceById }),
  lockAction("Lock a workspace (N20; manage-workspaces, user or team tokens): 409 when already locked"),
  async (c) => {
    const db = c.var.db;
    const ws = workspaceById.of(c);
    const holder = lockHolderOf(c.var.caller!);
    if (!holder) throw conflict("Unable to lock workspace: only a user or a team may hold a lock");
    if (ws.lockedBy !== null) throw conflict("Unable to lock workspace. The workspace is already locked.");
    // The pool first: from here no plan job of this workspace is handed out (N20).
    await tellPool(c, ws, true);
    const moved = await takeLock(db, ws.id, holder);

    if (!moved) {
      const now = await findWorkspace(db, ws.id);
      if (!now?.lockedBy) await tellPool(c, ws, false);
      throw conflict("Unable to lock workspace. The workspace is already locked.");
    }
    return workspaceNow(c, ws);
  },
);

workspaceLockRoutes.post(
  "/workspaces/:id/actions/unlock",
  rights({ right: "run-workspaces" }, { cache: "unchanged", scope: workspaceById }),
  lockAction(
    "Unlock a workspace the caller locked (N20; manage-workspaces, user or team tokens): 409 when not locked, locked by a run or by someone else",
  ),
  async (c) => {
    const db = c.var.db;
    const ws = workspaceById.of(c);
    const holder = lockHolderOf(c.var.caller!);
    if (ws.lockedBy === null) {
      if (await findLockingRun(db, ws.id))
        throw conflict("Unable to unlock workspace. The workspace is locked by a run; it unlocks when the run ends.");
      throw conflict("Unable to unlock workspace. The workspace is not locked.");
    }
    if (ws.lockedBy !== holder)
      throw conflict("Unable to unlock workspace. The workspace is locked by a different user; use force-unlock.");
    if (!(await releaseLock(db, ws.id, holder)))
      throw conflict("Unable to unlock workspace. The workspace is not locked.");
    await tellPool(c, ws, false);
    return workspaceNow(c, ws);
  },
);

/** The error a run ended by force-unlock carries. */
const FORCE_UNLOCK_MESSAGE = "the workspace's lock was force-unlocked by an owner";

/**
 * N20 force-unlock of a lock a run holds: the run ends, so its lock ends with it (a run's
 * lock is its status), as an HCP Terraform administrator frees a workspace by discarding or
 * canceling the run that holds it:
 * - `planned` (awaiting confirmation) → `discarded`, as N7's `actions/discard` does;
 * - `planning`, `confirmed`, `apply_queued` → `canceled` at once: a queued job is dropped, a
 *   running plan job is signalled `cancel` to its agent. A plan writes no state, so unlike a
 *   cancel of a running apply nothing is waited for; an apply job that has started is
 *   `applying`, which force-unlock refuses.
 * Returns whether this call ended the run (false: it moved meanwhile).
 */
async function endLockingRun(c: Context<NocodeEnv>, runId: string, status: string): Promise<boolean> {
  const db = c.var.db;
  const now = Date.now();
  if (status === "planned") {
    const [discarded] = await db.batch(discardPlannedRunStatements(db, runId, now));
    return discarded.length > 0;
  }
  const job = await findLiveJobOfRun(db, runId);
  const from: RunStatus[] =
    job?.phase === "apply" ? ["confirmed", "apply_queued"] : ["planning", "confirmed", "apply_queued"];
  const moveRun = transitionRunReturningQuery(db, runId, from, ["canceled"], now, { error: FORCE_UNLOCK_MESSAGE });
  if (!job) return (await moveRun.all()).length > 0;
  // An apply job ends only while queued: once its agent started it the run is `applying`.
  const jobFrom: JobStatus[] = job.phase === "apply" ? ["queued"] : ["queued", "running"];
  const [moved] = await db.batch([moveRun, cancelJobOfCanceledRunQuery(db, job, jobFrom, now, FORCE_UNLOCK_MESSAGE)]);
  if (moved.length === 0) return false;
  try {
    await tellPoolJobCanceled(c.env, job.poolId, job.id);
  } catch (err) {
    // The pool reconciles its queue with D1 within a minute, and a running job's token ends with its job.
    logError(String(c.var.requestId ?? ""), "could not tell the agent pool of a force-unlock", err);
  }
  return true;
}

workspaceLockRoutes.post(
  "/workspaces/:id/actions/force-unlock",
  rights({ right: "owner" }, { cache: "unchanged", scope: workspaceById }),
  lockAction(
    "Release a workspace's lock whoever holds it (N20; owners): a run holding it is discarded (planned) or canceled; 409 while a run is applying or when the workspace is not locked",
  ),
  async (c) => {
    const db = c.var.db;
    const ws = workspaceById.of(c);
    // Twice at most: a run that moved meanwhile (e.g. confirmed, then applying) is judged again.
    for (let attempt = 0; attempt < 2; attempt++) {
      const run = await findLockingRun(db, ws.id);
      if (run?.status === "applying") throw conflict("Unable to force-unlock workspace while a run is applying.");
      if (run) {
        if (!(await endLockingRun(c, run.id, run.status))) continue;
      }
      const now = await findWorkspace(db, ws.id);
      if (now?.lockedBy) {
        if (await forceReleaseLock(db, ws.id)) await tellPool(c, ws, false);
      } else if (!run) throw conflict("Unable to force-unlock workspace. The workspace is not locked.");
      return workspaceNow(c, ws);
    }
    throw conflict("Unable to force-unlock workspace: the run holding its lock is changing; try again.");
  },
);
