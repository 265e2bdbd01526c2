/**
 * The D1 statements of E5 and E7 (decision N8): each step is one batch (a transaction)
 * whose conditional statements decide between concurrent requests, so a loser changes
 * nothing.
 */
import { not } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Db } from "../../db/client";
import {
  deleteRunUnlessQuery,
  dropVarChangesQuery,
  insertRunQuery,
  type RunRow,
  restoreConfigurationQuery,
  runMovedBy,
  transitionRunQuery,
  workspaceBusy,
} from "../runs/repo";
import {
  deleteWorkspaceVarQuery,
  insertWorkspaceVarQuery,
  updateWorkspaceQuery,
  updateWorkspaceVarQuery,
  type WorkspaceRow,
  type WorkspaceVarRow,
  workspaceLatestRunIs,
} from "../workspaces/repo";
import { type PendingVarChange, withoutFlag } from "./vars";

/**
 * E5's write: the workspace takes the new run as latest and current only while it has no
 * non-terminal run; the insert is undone when it did not (so concurrent E5s, and any run
 * created meanwhile, leave exactly one).
 */
export function insertUpgradeRunStatements(db: Db, row: RunRow, now: number) {
  return [
    updateWorkspaceQuery(
      db,
      row.workspaceId,
      { latestRunId: row.id, currentRunId: row.id, updatedAt: now },
      not(workspaceBusy(db, row.workspaceId)),
    ),
    insertRunQuery(db, row),
    deleteRunUnlessQuery(db, row.id, workspaceLatestRunIs(db, row.workspaceId, row.id)),
  ] as const;
}

/** Statements that write E7's vars, each only if `won` (this request confirmed the run). */
function varWrites(
  db: Db,
  workspaceId: string,
  changes: readonly PendingVarChange[],
  won: ReturnType<typeof runMovedBy>,
): BatchItem<"sqlite">[] {
  return changes.flatMap((change): BatchItem<"sqlite">[] => {
    const row = withoutFlag(change);
    if (change.replaces) {
      const { id: _id, workspaceId: _ws, createdAt: _created, ...set } = row;
      return [updateWorkspaceVarQuery(db, workspaceId, row.id, set, won)];
    }
    return [insertWorkspaceVarQuery(db, row), deleteWorkspaceVarQuery(db, workspaceId, row.id, not(won))];
  });
}

/**
 * E7's write: the run's move `planned → confirmed → apply_queued` (stamped `at`, carrying
 * this request's random `token`) decides whether the workspace switches to `set` and gets
 * the pending vars; `won` recognises this request's move by its token, so a concurrent E7
 * or E5 changes nothing here, even one that read the same time.
 */
export function confirmUpgradeStatements(
  db: Db,
  run: RunRow,
  workspaceId: string,
  set: Partial<Omit<WorkspaceRow, "id">>,
  changes: readonly PendingVarChange[],
  at: number,
  token: string,
): [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]] {
  const won = runMovedBy(db, run.id, "apply_queued", token);
  return [
    transitionRunQuery(db, run.id, ["planned"], ["confirmed", "apply_queued"], at, { transitionToken: token }),
    updateWorkspaceQuery(db, workspaceId, set, won),
    ...varWrites(db, workspaceId, changes, won),
    // The pending vars (sensitive ones encrypted) are not needed once written.
    dropVarChangesQuery(db, run.id, won),
  ];
}

/** Statements that put back what E7 changed (`before`: the workspace and its vars then), if the apply could not be queued. */
export function undoConfirmStatements(
  db: Db,
  run: RunRow,
  workspace: WorkspaceRow,
  before: readonly WorkspaceVarRow[],
  changes: readonly PendingVarChange[],
  token: string,
): [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]] {
  const stillOurs = runMovedBy(db, run.id, "apply_queued", token);
  const restoreVars = changes.map((change): BatchItem<"sqlite"> => {
    const old = before.find((v) => v.id === change.id);
    if (!old) return deleteWorkspaceVarQuery(db, workspace.id, change.id, stillOurs);
    const { id: _id, workspaceId: _ws, createdAt: _created, ...set } = old;
    return updateWorkspaceVarQuery(db, workspace.id, old.id, set, stillOurs);
  });
  const { id: _id, ...workspaceBefore } = workspace;
  // The run moves back last: the statements before it recognise this E7's move by its token.
  return [
    updateWorkspaceQuery(db, workspace.id, workspaceBefore, stillOurs),
    ...restoreVars,
    restoreConfigurationQuery(db, run.id, run.configuration, stillOurs),
    transitionRunQuery(db, run.id, ["apply_queued"], ["planned"], Date.now(), { transitionToken: null }),
  ];
}
