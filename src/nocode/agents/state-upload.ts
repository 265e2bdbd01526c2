/**
 * Recording an engine state (decision N20), one code path for the agent's upload (N18) and
 * the owners' recovery upload (`POST /workspaces/:id/state-versions`): a state with the
 * current serial and the same MD5 is a no-op (no new version); the same serial with other
 * content, a lower serial or another lineage is refused (`lineage mismatch`,
 * `serial N is not above the current M`). The bytes go to R2 encrypted
 * (./run-data.ts) and the version row and the workspace's `current-state-version` are
 * written in one batch, conditioned on no other upload having won meanwhile.
 */
import { and, desc, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { stateVersions, workspaces } from "../../db/schema/nocode";
import { type StateSummary, StateSummaryScanner } from "../../lib/terraform/json-plan";
import { newId } from "../ids";
import { insertRunDataQuery, type RunDataRow, type ScannedUpload, storeScannedStream } from "./run-data";

/** What recording a state came to. */
export type StateRecorded =
  | { kind: "created"; id: string; serial: number }
  /** The current state already: nothing recorded. */
  | { kind: "unchanged"; id: string; serial: number }
  /** N20's serial and lineage rules refused it (409). */
  | { kind: "refused"; message: string };

/** The workspace's current engine state version (structural ones are never compared or given to an agent, N19). */
export function currentEngineState(db: Db, workspaceId: string) {
  return db
    .select()
    .from(stateVersions)
    .where(and(eq(stateVersions.workspaceId, workspaceId), eq(stateVersions.kind, "engine")))
    .orderBy(desc(stateVersions.serial), desc(stateVersions.createdAt))
    .limit(1)
    .get();
}

/** What {@link storeStateStream} stored. */
export type StoredState = ScannedUpload<StateSummary>;

/**
 * Take a state's bytes as they arrive (N20: up to 64 MiB, in bounded memory): its size, its
 * MD5, its summary (StateSummaryScanner) and the encrypted R2 object, as
 * ./run-data.ts storeScannedStream does. Throws {@link ScannedUploadError} when the state is
 * over `limit` or is not a state (nothing kept), or the error of `body` itself.
 */
export function storeStateStream(
  env: Pick<Env, "RUN_DATA" | "KEYWAY_KEK">,
  body: ReadableStream<Uint8Array>,
  limit: number,
  limitText: string,
): Promise<StoredState> {
  return storeScannedStream(env, "state", body, { limit, limitText, what: "state" }, new StateSummaryScanner());
}

/**
 * Record a state already stored ({@link storeStateStream}) as the workspace's new state
 * under N20's rules; a state refused or unchanged is deleted from R2. `runId`: the run whose
 * apply wrote it, or null for a recovery upload.
 */
export async function recordStoredEngineState(
  env: Pick<Env, "RUN_DATA" | "KEYWAY_KEK">,
  db: Db,
  workspaceId: string,
  runId: string | null,
  state: StateSummary,
  md5: string,
  object: RunDataRow,
): Promise<StateRecorded> {
  const judged = judgeState(await currentEngineState(db, workspaceId), state, md5);
  if (judged) {
    await env.RUN_DATA.delete(object.r2Key);
    return judged;
  }
  return commitEngineState(env, db, workspaceId, runId, state, md5, object);
}

/** N20's serial and lineage rules against the current state: the verdict, or null to record it. */
function judgeState(
  current: Awaited<ReturnType<typeof currentEngineState>>,
  state: StateSummary,
  md5: string,
): StateRecorded | null {
  if (!current) return null;
  if (current.lineage !== state.lineage) return { kind: "refused", message: "lineage mismatch" };
  if (state.serial === current.serial && current.md5 === md5)
    return { kind: "unchanged", id: current.id, serial: current.serial };
  if (state.serial <= current.serial)
    return { kind: "refused", message: `serial ${state.serial} is not above the current ${current.serial}` };
  return null;
}

/** Write the version row and the workspace's current version, unless another upload won meanwhile. */
async function commitEngineState(
  env: Pick<Env, "RUN_DATA">,
  db: Db,
  workspaceId: string,
  runId: string | null,
  state: StateSummary,
  md5: string,
  object: RunDataRow,
): Promise<StateRecorded> {
  const id = newId("sv");
  const now = Date.now();
  const [, inserted] = await db.batch([
    insertRunDataQuery(db, object),
    // Columns in the table's declared order (src/db/schema/nocode.ts stateVersions). A recovery
    // upload has no run: its run_id is '' (the column predates N20 and is NOT NULL).
    db
      .insert(stateVersions)
      .select(sql`SELECT ${id}, ${workspaceId}, ${runId ?? ""}, ${state.serial}, ${JSON.stringify(state.resources)},
        ${JSON.stringify(state.outputs.map((o) => ({ ...o, value: null })))}, ${now}, 'engine', ${state.lineage},
        ${md5}, ${object.size}, ${object.id}
      WHERE NOT EXISTS (SELECT 1 FROM state_versions WHERE workspace_id = ${workspaceId} AND kind = 'engine'
        AND (serial >= ${state.serial} OR lineage <> ${state.lineage}))`)
      .returning({ id: stateVersions.id }),
    db
      .update(workspaces)
      .set({
        currentStateVersionId: id,
        resourceCount: state.resources.length,
        latestChangeAt: now,
        updatedAt: now,
      })
      .where(and(eq(workspaces.id, workspaceId), sql`EXISTS (SELECT 1 FROM state_versions WHERE id = ${id})`)),
  ]);
  if (inserted.length > 0) return { kind: "created", id, serial: state.serial };

  // Another upload of this workspace won meanwhile: judge this one against it.
  await env.RUN_DATA.delete(object.r2Key);
  const now2 = await currentEngineState(db, workspaceId);
  if (now2 && now2.serial === state.serial && now2.md5 === md5 && now2.lineage === state.lineage)
    return { kind: "unchanged", id: now2.id, serial: now2.serial };
  return {
    kind: "refused",
    message:
      now2 && now2.lineage !== state.lineage
        ? "lineage mismatch"
        : `serial ${state.serial} is not above the current ${now2?.serial ?? state.serial}`,
  };
}
