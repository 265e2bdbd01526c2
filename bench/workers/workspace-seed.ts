/**
 * Workspaces for the bench's scale checks, written straight into D1 by the probe Worker as
 * copies of one no-code workspace that E4 made through HTTP (`POST /clone-workspaces`):
 *
 * - with `history` (the rollout scale check, `npm run bench -- --only=rollout`, decision N15):
 *   the template's first run was applied by the Queue, and each copy gets its own ids
 *   (workspace, runs, plans, configuration versions, state versions, vars) and name; every
 *   other column, the run configurations and plans included, is the template's, with the
 *   template's ids in them replaced by the copy's. So each copy looks like a workspace E4
 *   made and applied.
 * - without (the E3/E4 scale rows, docs/performance.md): each copy is the workspace row alone (same
 *   organization, project, module, version and settings) under a new id and name, without a
 *   configuration version, run, state or vars, so 10,000 workspaces stand beside E3 and E4
 *   without 10,000 queued first runs.
 *
 * D1 allows 100 bound parameters per statement: rows go in multi-row INSERTs of at most
 * floor(100 / columns) rows, many INSERTs per batch.
 */
import { eq, getTableColumns } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { createDb, type Db } from "../../src/db/client";
import { runs, stateVersions, workspaces, workspaceVars } from "../../src/db/schema/nocode";
import { newId } from "../../src/nocode/ids";

/** What to copy and how many times. */
export interface CloneWorkspacesRequest {
  templateWorkspaceId: string;
  count: number;
  /** Names are `<namePrefix><n>`, n from 0. */
  namePrefix: string;
  /** Statements per D1 batch. */
  perBatch: number;
  /** Whether each copy also gets the template's runs, plans, state versions and vars (see above). */
  history: boolean;
}

const D1_BOUND_PARAMETERS = 100;

/** Rows per INSERT so that one statement binds at most 100 parameters. */
function rowsPerInsert(table: SQLiteTable): number {
  return Math.max(1, Math.floor(D1_BOUND_PARAMETERS / Object.keys(getTableColumns(table)).length));
}

/** Replace every template id in a row (its JSON text columns included) by the copy's. */
function rewrite<T>(row: T, ids: Map<string, string>, pattern: RegExp): T {
  return JSON.parse(JSON.stringify(row).replace(pattern, (id) => ids.get(id) ?? id)) as T;
}

function inserts<T extends SQLiteTable>(db: Db, table: T, rows: T["$inferInsert"][]) {
  const per = rowsPerInsert(table);
  const out = [];
  for (let i = 0; i < rows.length; i += per) out.push(db.insert(table).values(rows.slice(i, i + per)));
  return out;
}

/** Copy the template `count` times; answers the copies' ids. */
export async function cloneWorkspaces(
  d1: D1Database,
  input: CloneWorkspacesRequest,
): Promise<{ workspaceIds: string[]; statements: number }> {
  const db = createDb(d1);
  const [template, runRows, stateRows, varRows] = await Promise.all([
    db.select().from(workspaces).where(eq(workspaces.id, input.templateWorkspaceId)).get(),
    input.history ? db.select().from(runs).where(eq(runs.workspaceId, input.templateWorkspaceId)).all() : [],
    input.history
      ? db.select().from(stateVersions).where(eq(stateVersions.workspaceId, input.templateWorkspaceId)).all()
      : [],
    input.history
      ? db.select().from(workspaceVars).where(eq(workspaceVars.workspaceId, input.templateWorkspaceId)).all()
      : [],
  ]);
  if (!template) throw new Error(`template workspace ${input.templateWorkspaceId} not found`);
  // Without history, a copy is the workspace as E4 wrote it before its first run.
  const workspace = input.history
    ? template
    : {
        ...template,
        currentConfigurationVersionId: null,
        currentRunId: null,
        latestRunId: null,
        currentStateVersionId: null,
        resourceCount: 0,
        locked: false,
      };
  // Every id of the template that a copy must not share (ids are prefix + 16 alphanumerics).
  const templateIds = [
    workspace.id,
    workspace.currentConfigurationVersionId,
    ...runRows.flatMap((r) => [r.id, r.planId, r.configurationVersionId, r.stateVersionId]),
    ...stateRows.map((s) => s.id),
    ...varRows.flatMap((v) => [v.id, v.versionId]),
  ].filter((id): id is string => typeof id === "string" && /^[a-z]+-[A-Za-z0-9]{16}$/.test(id));
  const unique = [...new Set(templateIds)];
  const pattern = new RegExp(unique.map((id) => id.replace(/[-]/g, "\\-")).join("|"), "g");

  const workspaceIds: string[] = [];
  const rows = {
    workspaces: [] as (typeof workspaces.$inferInsert)[],
    runs: [] as (typeof runs.$inferInsert)[],
    states: [] as (typeof stateVersions.$inferInsert)[],
    vars: [] as (typeof workspaceVars.$inferInsert)[],
  };
  for (let n = 0; n < input.count; n++) {
    const ids = new Map(unique.map((id) => [id, newId(id.slice(0, id.indexOf("-")))] as const));
    const copy = rewrite(workspace, ids, pattern);
    copy.name = `${input.namePrefix}${n}`;
    workspaceIds.push(copy.id);
    rows.workspaces.push(copy);
    for (const r of runRows) rows.runs.push(rewrite(r, ids, pattern));
    for (const s of stateRows) rows.states.push(rewrite(s, ids, pattern));
    for (const v of varRows) rows.vars.push(rewrite(v, ids, pattern));
  }
  const statements = [
    ...inserts(db, workspaces, rows.workspaces),
    ...inserts(db, runs, rows.runs),
    ...inserts(db, stateVersions, rows.states),
    ...inserts(db, workspaceVars, rows.vars),
  ];
  for (let i = 0; i < statements.length; i += input.perBatch) {
    const batch = statements.slice(i, i + input.perBatch);
    await db.batch(batch as unknown as Parameters<typeof db.batch>[0]);
  }
  return { workspaceIds, statements: statements.length };
}
