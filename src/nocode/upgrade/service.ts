/**
 * Upgrading a no-code workspace in three steps (seed E5–E7; decisions N7, N8, N10, N11):
 *
 * - E5 {@link initiateUpgrade}: answers a `message` and creates nothing when the
 *   workspace already runs the pin, with the module's option sets, and the given vars
 *   change no effective value (and that configuration was applied or is being applied:
 *   see {@link settled}). Otherwise it plans synchronously with the N7 planner
 *   (baseline: the configuration of the last applied run) and creates an ordinary
 *   workspace run of kind `upgrade` in status `planned` (even for an empty plan), which
 *   becomes the workspace's latest and current run. While the workspace has a
 *   non-terminal run → 409, unless that run is a stale upgrade plan, which E5 discards.
 * - E6 {@link findUpgradeRun}: the run's current status.
 * - E7 {@link confirmUpgrade}: only a `planned`, fresh upgrade run; switches the workspace
 *   to the planned version, option-set fingerprint and vars, moves the run
 *   `planned → confirmed → apply_queued` in the same D1 batch, then queues the apply of
 *   that same run (the Queue consumer's `apply-run` step, idempotent by run id).
 *
 * Permissions (N10): E5 and E7 need `run-workspaces` (manage-workspaces), E6 `read-upgrades` (read-workspaces); all three
 * refuse the organization token. Everything not permitted or not found is 404.
 */
import { and, eq, exists, inArray, not, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { createDb, type Db } from "../../db/client";
import { runs, workspaces, workspaceVars } from "../../db/schema";
import { isUniqueViolation } from "../../db/errors";
import type { NocodeCaller } from "../auth";
import { conflict, notFound, unprocessable } from "../errors";
import { newId } from "../ids";
import { attributeAt, FieldErrors, readDocument, relationshipAt, toManyMembers } from "../no-code-modules/document";
import { noCodeModuleVersionId, optionSetFingerprint } from "../no-code-modules/fingerprint";
import { findNoCodeModule, listVariableOptions, type NoCodeModuleRow } from "../no-code-modules/repo";
import { requireOrgPermission } from "../permissions";
import { changedVariables, type PlannedConfiguration } from "../planner";
import { applyRunMessage, type ProvisionMessage } from "../queue/messages";
import { findModuleVersionById, findRegistryModuleById } from "../registry/repo";
import { activeRolloutItemOf, notifyRolloutOfRun } from "../rollouts/repo";
import {
  baselineConfiguration,
  buildRunConfiguration,
  effectiveValues,
  parseRunConfiguration,
  planConfiguration,
  type RunConfiguration,
  RunFailure,
} from "../runs/configuration";
import { newRunRow, resolveRunEngineVersion } from "../runs/create";
import { configurationWithoutVarChanges, findRun, NON_TERMINAL_RUN_STATUSES, type RunRow, transitionRunQuery } from "../runs/repo";
import { provisionableVersion, sourceModuleIdOf, WORKSPACE_TYPES } from "../workspaces/create";
import { findWorkspace, listWorkspaceVars, type WorkspaceRow, type WorkspaceVarRow } from "../workspaces/repo";
import { checkRequiredVars, checkVarOptions, parseVarMembers, requireUniqueVarKeys, type VarInput } from "../workspaces/vars";
import { upgradeStaleness } from "./staleness";
import { mergeUpgradeVars, type PendingVarChange, withoutFlag } from "./vars";

/** The configuration of an upgrade run: what it plans, plus the vars E7 will write. */
export interface UpgradeRunConfiguration extends RunConfiguration {
  /** Removed from the stored configuration once E7 wrote them (or the run was discarded). */
  varChanges?: PendingVarChange[];
}

/** The no-code module and one of its workspaces, the caller holding `permission` (N10); 404 otherwise. */
async function moduleAndWorkspace(
  db: Db,
  caller: NocodeCaller,
  noCodeModuleId: string,
  workspaceId: string,
  permission: "run-workspaces" | "read-upgrades",
): Promise<{ module: NoCodeModuleRow; workspace: WorkspaceRow }> {
  const module = await findNoCodeModule(db, noCodeModuleId);
  if (!module) throw notFound();
  await requireOrgPermission(db, caller, module.organization, permission);
  const workspace = await findWorkspace(db, workspaceId);
  // A workspace not created from this module is not one of its workspaces: 404.
  if (!workspace || workspace.organization !== module.organization || workspace.noCodeModuleId !== module.id) throw notFound();
  return { module, workspace };
}

/** The upgrade run `runId` of this module and workspace; 404 for any other run (N8). */
async function upgradeRunOf(db: Db, module: NoCodeModuleRow, workspace: WorkspaceRow, runId: string): Promise<RunRow> {
  const run = await findRun(db, runId);
  if (run?.kind !== "upgrade" || run.workspaceId !== workspace.id || run.noCodeModuleId !== module.id) throw notFound();
  return run;
}

/** Validated E5 input. */
export interface UpgradeInput {
  vars: VarInput[];
  message: string | null;
}

/** Read E5's body: `data.type` `workspaces` (or a synonym, N1), optional `message` and `vars`; an empty body is no vars. */
async function readUpgradeInput(request: Request): Promise<UpgradeInput> {
  const doc = await readDocument(request, WORKSPACE_TYPES, { optional: true });
  const errors = new FieldErrors();
  const message = doc.attributes.message;
  if (message !== undefined && message !== null && typeof message !== "string") errors.add(attributeAt("message"), "Message must be a string");
  const members = toManyMembers(errors, doc.relationships, "vars") ?? [];
  const vars = parseVarMembers(errors, members, relationshipAt("vars"));
  errors.throwIfAny();
  requireUniqueVarKeys(vars);
  return { vars, message: typeof message === "string" ? message : null };
}

/** What E5 did. */
export type InitiateResult =
  | { kind: "no-upgrade"; workspace: WorkspaceRow; message: string }
  | { kind: "planned"; workspace: WorkspaceRow; run: RunRow };

/** Injectable clock and queue of the upgrade steps (N11: tests inject failures). */
export interface UpgradeDeps {
  now: () => number;
  /** Send a message on the provisioning queue (ids only, N11). */
  send: (message: ProvisionMessage) => Promise<void>;
}

/** Production dependencies over `env.PROVISION_QUEUE`. */
export function defaultUpgradeDeps(env: Pick<Env, "PROVISION_QUEUE">): UpgradeDeps {
  return {
    now: Date.now,
    send: async (message) => {
      await env.PROVISION_QUEUE.send(message, { contentType: "json" });
    },
  };
}

/** SQL true while the workspace has a non-terminal run. */
function workspaceBusy(db: Db, workspaceId: string) {
  return exists(
    db
      .select({ one: sql`1` })
      .from(runs)
      .where(and(eq(runs.workspaceId, workspaceId), inArray(runs.status, [...NON_TERMINAL_RUN_STATUSES]))),
  );
}

/**
 * N8: clear the workspace for a new upgrade plan. A `planned` upgrade run that is stale is
 * discarded; any other non-terminal run → 409.
 */
async function discardStaleUpgradePlans(db: Db, workspace: WorkspaceRow, now: number): Promise<void> {
  const active = await db
    .select()
    .from(runs)
    .where(and(eq(runs.workspaceId, workspace.id), inArray(runs.status, [...NON_TERMINAL_RUN_STATUSES])))
    .all();
  for (const run of active) {
    const stale = run.kind === "upgrade" && run.status === "planned" && (await upgradeStaleness(db, run, parseRunConfiguration(run.configuration), workspace)).length > 0;
    if (!stale) {
      throw conflict(`The workspace has a run in progress (${run.id} is ${run.status}); wait for it to finish or discard it before starting an upgrade`);
    }
    // Conditional: if E7 confirmed it meanwhile, this changes nothing and E5 answers 409 below.
    await db.batch([
      transitionRunQuery(db, run.id, ["planned"], ["discarded"], now),
      db.update(runs).set({ configuration: configurationWithoutVarChanges }).where(and(eq(runs.id, run.id), eq(runs.status, "discarded"))),
    ]);
  }
}

/** Whether two sets of effective values are equal (N7's comparison; sensitive ones by keyed hash). */
function sameValues(a: RunConfiguration["values"], b: RunConfiguration["values"]): boolean {
  // changedVariables compares the values only; it never reads the summaries.
  return changedVariables({ values: a } as PlannedConfiguration, { values: b } as PlannedConfiguration).length === 0;
}

/**
 * The last part of E5's "nothing to upgrade": what the workspace runs was applied (its
 * last applied run configured this version with these values), or a run that will apply
 * it is still in progress (say, the first run of a new workspace). Otherwise the last
 * attempt failed or was discarded, and E5 plans again: N8 says when E5 may create
 * nothing, and a workspace whose upgrade apply errored must keep a way to retry.
 */
async function settled(db: Db, workspace: WorkspaceRow, versionId: string, values: RunConfiguration["values"]): Promise<boolean> {
  let baseline: RunConfiguration | null;
  try {
    baseline = await baselineConfiguration(db, workspace);
  } catch (err) {
    if (err instanceof RunFailure) return false;
    throw err;
  }
  if (baseline && baseline.moduleVersionId === versionId && sameValues(baseline.values, values)) return true;
  const active = await db
    .select({ id: runs.id })
    .from(runs)
    .where(and(eq(runs.workspaceId, workspace.id), inArray(runs.status, [...NON_TERMINAL_RUN_STATUSES])))
    .get();
  return active !== undefined;
}

/**
 * E5. Returns what was done; throws NocodeError for every refusal.
 *
 * @example
 * const result = await initiateUpgrade(c.env, c.var.caller, c.req.param("id"), c.req.param("ws"), c.req.raw);
 */
export async function initiateUpgrade(
  env: Env,
  caller: NocodeCaller,
  noCodeModuleId: string,
  workspaceId: string,
  request: Request,
  now = Date.now(),
): Promise<InitiateResult> {
  const db = createDb(env.DB);
  const { module, workspace } = await moduleAndWorkspace(db, caller, noCodeModuleId, workspaceId, "run-workspaces");
  const input = await readUpgradeInput(request);
  // N15: a workspace whose rollout item has not ended is the rollout's to upgrade.
  const item = await activeRolloutItemOf(db, workspace.id);
  if (item) throw conflict(`The workspace is part of upgrade rollout ${item.rolloutId} (its item is ${item.status}); wait for that item to end or cancel the rollout`);
  return planUpgrade(env, db, module, workspace, input, now);
}

/**
 * E5's work once the caller and input are checked: also the step of a rollout (N15),
 * which calls it with no vars.
 */
export async function planUpgrade(
  env: Pick<Env, "KEYWAY_KEK" | "KEYWAY_HASH_KEY">,
  db: Db,
  module: NoCodeModuleRow,
  workspace: WorkspaceRow,
  input: UpgradeInput,
  now: number,
): Promise<InitiateResult> {
  // N3: E5 needs an enabled module with an `ok` pin (422).
  const { version, summary } = await provisionableVersion(db, module);
  const [options, stored] = await Promise.all([listVariableOptions(db, module.id), listWorkspaceVars(db, workspace.id)]);

  // N5: the module's rules on the vars the workspace will have after the upgrade.
  const given = new Set(input.vars.map((v) => `${v.category}\u0000${v.key}`));
  checkVarOptions([...input.vars, ...stored.filter((v) => !given.has(`${v.category}\u0000${v.key}`))], options);
  const declaredSensitive = new Set(summary.variables.filter((v) => v.sensitive).map((v) => v.name));
  const merged = await mergeUpgradeVars(env, workspace.id, stored, input.vars, now, declaredSensitive);
  checkRequiredVars(merged.rows, summary, version.version);

  // N8: nothing to upgrade → a message, and nothing is created.
  const values = effectiveValues(summary, merged.rows);
  const fingerprint = await optionSetFingerprint(options);
  if (
    workspace.noCodeVersionId === version.id &&
    workspace.optionSetFingerprint === fingerprint &&
    sameValues(effectiveValues(summary, stored), values) &&
    (await settled(db, workspace, version.id, values))
  ) {
    return {
      kind: "no-upgrade",
      workspace,
      message: `No upgrade available: the workspace already runs version ${version.version} of this no-code module with its current variable options, and the given variables change no value.`,
    };
  }

  await discardStaleUpgradePlans(db, workspace, now);

  const configuration: UpgradeRunConfiguration = {
    ...(await buildRunConfiguration({ noCodeModule: module, version, values, options, storedVars: stored })),
    varChanges: merged.changes,
  };
  let plan: Awaited<ReturnType<typeof planConfiguration>>;
  try {
    plan = await planConfiguration(db, workspace, configuration);
  } catch (err) {
    if (err instanceof RunFailure) throw unprocessable(`The upgrade cannot be planned: ${err.message}`);
    throw err;
  }
  const row = newRunRow(
    {
      // An upgrade runs a new configuration: it gets a configuration version of its own.
      workspace: { ...workspace, currentConfigurationVersionId: newId("cv") },
      kind: "upgrade",
      configuration,
      engineVersion: await resolveRunEngineVersion(db, workspace),
      // N8: an upgrade run waits at `planned` for E7, whatever the workspace's auto-apply.
      autoApply: false,
      message: input.message ?? `Upgrade to version ${version.version} of the no-code module`,
      // N7: an upgrade run waits at `planned` even when its plan is empty.
      planned: { plan, status: "planned" },
    },
    now,
  );

  // One D1 batch decides between concurrent E5s (and any run created meanwhile): the
  // workspace takes the new run as latest and current only while it has no non-terminal
  // run; the insert is undone when it did not.
  const isLatest = exists(
    db
      .select({ one: sql`1` })
      .from(workspaces)
      .where(and(eq(workspaces.id, workspace.id), eq(workspaces.latestRunId, row.id))),
  );
  await db.batch([
    db
      .update(workspaces)
      .set({ latestRunId: row.id, currentRunId: row.id, updatedAt: now })
      .where(and(eq(workspaces.id, workspace.id), not(workspaceBusy(db, workspace.id)))),
    db.insert(runs).values(row),
    db.delete(runs).where(and(eq(runs.id, row.id), not(isLatest))),
  ]);
  if (!(await findRun(db, row.id))) {
    throw conflict("The workspace has a run in progress; wait for it to finish or discard it before starting an upgrade");
  }
  return { kind: "planned", workspace, run: row };
}

/**
 * E6: the upgrade run (404 unless it is an upgrade run of this module and workspace).
 *
 * @example
 * const { run, workspace } = await findUpgradeRun(env, caller, moduleId, workspaceId, runId);
 */
export async function findUpgradeRun(
  env: Env,
  caller: NocodeCaller,
  noCodeModuleId: string,
  workspaceId: string,
  runId: string,
): Promise<{ workspace: WorkspaceRow; run: RunRow }> {
  const db = createDb(env.DB);
  const { module, workspace } = await moduleAndWorkspace(db, caller, noCodeModuleId, workspaceId, "read-upgrades");
  return { workspace, run: await upgradeRunOf(db, module, workspace, runId) };
}

/** Statements that write E7's vars, each only if `won` (this request confirmed the run). */
function varWrites(db: Db, workspaceId: string, changes: readonly PendingVarChange[], won: ReturnType<typeof exists>): BatchItem<"sqlite">[] {
  return changes.flatMap((change): BatchItem<"sqlite">[] => {
    const row = withoutFlag(change);
    if (change.replaces) {
      const { id: _id, workspaceId: _ws, createdAt: _created, ...set } = row;
      return [db.update(workspaceVars).set(set).where(and(eq(workspaceVars.id, row.id), eq(workspaceVars.workspaceId, workspaceId), won))];
    }
    return [db.insert(workspaceVars).values(row), db.delete(workspaceVars).where(and(eq(workspaceVars.id, row.id), not(won)))];
  });
}

/** Statements that put back what E7 changed, if the apply could not be queued. */
function undoStatements(
  db: Db,
  run: RunRow,
  workspace: WorkspaceRow,
  before: readonly WorkspaceVarRow[],
  changes: readonly PendingVarChange[],
  at: number,
): [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]] {
  const stillOurs = exists(
    db
      .select({ one: sql`1` })
      .from(runs)
      .where(and(eq(runs.id, run.id), eq(runs.status, "apply_queued"), eq(runs.updatedAt, at))),
  );
  const restoreVars = changes.map((change): BatchItem<"sqlite"> => {
    const old = before.find((v) => v.id === change.id);
    if (!old) return db.delete(workspaceVars).where(and(eq(workspaceVars.id, change.id), stillOurs));
    const { id: _id, workspaceId: _ws, createdAt: _created, ...set } = old;
    return db.update(workspaceVars).set(set).where(and(eq(workspaceVars.id, old.id), stillOurs));
  });
  const { id: _id, ...workspaceBefore } = workspace;
  // The run moves back last: the statements before it recognise this E7's move by its stamp.
  return [
    db.update(workspaces).set(workspaceBefore).where(and(eq(workspaces.id, workspace.id), stillOurs)),
    ...restoreVars,
    db.update(runs).set({ configuration: run.configuration }).where(and(eq(runs.id, run.id), stillOurs)),
    transitionRunQuery(db, run.id, ["apply_queued"], ["planned"], Date.now()),
  ];
}

/**
 * E7. Throws 404 for anything but an upgrade run of this module and workspace, 409 when
 * it is not `planned` or its plan is stale (N8); on success the workspace runs the new
 * version and vars and the apply of the run is queued.
 *
 * @example
 * await confirmUpgrade(c.env, c.var.caller, moduleId, workspaceId, runId, defaultUpgradeDeps(c.env));
 */
export async function confirmUpgrade(
  env: Env,
  caller: NocodeCaller,
  noCodeModuleId: string,
  workspaceId: string,
  runId: string,
  deps: UpgradeDeps,
): Promise<void> {
  const db = createDb(env.DB);
  const { module, workspace } = await moduleAndWorkspace(db, caller, noCodeModuleId, workspaceId, "run-workspaces");
  const run = await upgradeRunOf(db, module, workspace, runId);
  await confirmUpgradeRun(db, module, workspace, run, deps);
  // N15: a rollout's planned run confirmed by hand counts as confirmed; let the rollout know.
  await notifyRolloutOfRun(db, run.id, deps.send);
}

/**
 * E7's work once the run is known to be an upgrade run of this module and workspace:
 * also what a rollout does to confirm a plan (N15). Throws 409 when the run is not
 * `planned` or is stale.
 */
export async function confirmUpgradeRun(db: Db, module: NoCodeModuleRow, workspace: WorkspaceRow, run: RunRow, deps: UpgradeDeps): Promise<void> {
  const notAwaiting = (status: string) => conflict(`The upgrade run is ${status}, not awaiting confirmation`);
  if (run.status !== "planned") throw notAwaiting(run.status);
  const configuration = parseRunConfiguration(run.configuration) as UpgradeRunConfiguration;
  const reasons = await upgradeStaleness(db, run, configuration, workspace);
  if (reasons.length > 0) throw conflict(`The upgrade plan is stale: ${reasons.join("; ")}. Start a new upgrade to plan again.`);

  const [version, registryModule, before] = await Promise.all([
    findModuleVersionById(db, configuration.moduleVersionId),
    findRegistryModuleById(db, configuration.registryModuleId),
    listWorkspaceVars(db, workspace.id),
  ]);
  if (!version || !registryModule) throw conflict("The upgrade plan is stale: the planned module version no longer exists. Start a new upgrade to plan again.");
  const changes = configuration.varChanges ?? [];

  // One D1 batch (a transaction): the run's move `planned → confirmed → apply_queued`
  // decides whether the workspace switches; `won` recognises this request's move by its
  // time stamp, so a concurrent E7 or E5 changes nothing here.
  const at = deps.now();
  const won = exists(
    db
      .select({ one: sql`1` })
      .from(runs)
      .where(and(eq(runs.id, run.id), eq(runs.status, "apply_queued"), eq(runs.updatedAt, at))),
  );
  try {
    await db.batch([
      transitionRunQuery(db, run.id, ["planned"], ["confirmed", "apply_queued"], at),
      db
        .update(workspaces)
        .set({
          noCodeVersionId: version.id,
          noCodeVersion: version.version,
          sourceModuleId: sourceModuleIdOf(registryModule, version.version),
          noCodeModuleVersionId: await noCodeModuleVersionId(module.id, version.version),
          optionSetFingerprint: configuration.optionSetFingerprint,
          currentConfigurationVersionId: run.configurationVersionId,
          currentRunId: run.id,
          updatedAt: at,
        })
        .where(and(eq(workspaces.id, workspace.id), won)),
      ...varWrites(db, workspace.id, changes, won),
      // The pending vars (sensitive ones encrypted) are not needed once written.
      db.update(runs).set({ configuration: configurationWithoutVarChanges }).where(and(eq(runs.id, run.id), won)),
    ]);
  } catch (err) {
    // A var of the same key created in the meantime (the plan is stale by then).
    if (isUniqueViolation(err)) throw conflict("The upgrade plan is stale: a workspace variable changed. Start a new upgrade to plan again.");
    throw err;
  }
  const after = await findRun(db, run.id);
  if (after?.status !== "apply_queued" || after.updatedAt !== at) throw notAwaiting(after?.status ?? "gone");

  try {
    await deps.send(applyRunMessage(run.id));
  } catch (err) {
    // The apply could not be queued: put everything back so E7 can be retried.
    await db.batch(undoStatements(db, run, workspace, before, changes, at));
    throw err;
  }
}
