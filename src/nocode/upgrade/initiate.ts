/**
 * E5 `POST /no-code-modules/:id/workspaces/:workspace_id/upgrade` (seed E5; decisions N7,
 * N8, N15): answers a `message` and creates nothing when the workspace already runs the
 * pin, with the module's option sets, and the given vars change no effective value (and
 * that configuration was applied or is being applied: see {@link settled}). Otherwise it
 * plans synchronously with the N7 planner (baseline: the configuration of the last
 * applied run) and creates an ordinary workspace run of kind `upgrade` in status
 * `planned` (even for an empty plan), which becomes the workspace's latest and current
 * run. While the workspace has a non-terminal run → 409, unless that run is a stale
 * upgrade plan, which E5 discards.
 *
 * N19: on an `agent` workspace nothing is planned here. The run is created `pending`
 * with the upgrade's version and variables recorded on it (the variables sealed for its
 * agent, N18: never the module's current pin, never the workspace's vars before E7), and
 * its plan job is queued for the workspace's pool; E5 answers `pending` and E6 follows the
 * run until an agent has planned it. A stale upgrade run not yet planned is canceled
 * (N19a) rather than discarded.
 */
import type { Db } from "../../db/client";
import { queueAgentJob } from "../agent-pools/job-queue";
import { sealAgentInputs } from "../agents/inputs";
import { conflict, unprocessable } from "../errors";
import { newId } from "../ids";
import { optionSetFingerprint } from "../no-code-modules/fingerprint";
import { checkProvisionable, provisionableVersionQueries } from "../no-code-modules/provisionable";
import { type NoCodeModuleRow, optionSetOf, variableOptionsQuery } from "../no-code-modules/repo";
import { changedVariables, type PlannedConfiguration } from "../planner";
import { activeRolloutItemOf } from "../rollout-hooks";
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
import { CANCELABLE_IN_PLACE, discardOrCancelRun } from "../runs/discard";
import { findRun, hasActiveRun, listActiveRuns, type RunRow, type RunStatus } from "../runs/repo";
import { type WorkspaceRow, workspaceVarsQuery } from "../workspaces/repo";
import { checkRequiredVars, checkVarOptions } from "../workspaces/vars";
import type { UpgradeInput } from "./input";
import { insertUpgradeRunStatements } from "./repo";
import { upgradeStaleness } from "./staleness";
import { mergeUpgradeVars, plainVarsOf, type UpgradeRunConfiguration } from "./vars";

/** What E5 did: nothing, a run planned at once (remote), or a run queued for an agent (N19). */
export type InitiateResult =
  | { kind: "no-upgrade"; workspace: WorkspaceRow; message: string }
  | { kind: "planned" | "queued"; workspace: WorkspaceRow; run: RunRow };

/**
 * N8: clear the workspace for a new upgrade plan. A `planned` upgrade run that is stale is
 * discarded; N19a: a stale upgrade run still queued for an agent is canceled; any other
 * non-terminal run → 409.
 */
async function discardStaleUpgradePlans(env: UpgradeEnv, db: Db, workspace: WorkspaceRow, now: number): Promise<void> {
  for (const run of await listActiveRuns(db, workspace.id)) {
    const stale =
      run.kind === "upgrade" &&
      (run.status === "planned" || CANCELABLE_IN_PLACE.includes(run.status as RunStatus)) &&
      (await upgradeStaleness(db, run, parseRunConfiguration(run.configuration), workspace)).length > 0;
    if (!stale) {
      throw conflict(
        `The workspace has a run in progress (${run.id} is ${run.status}); wait for it to finish or discard it before starting an upgrade`,
      );
    }
    // Conditional: if E7 confirmed it (or an agent took it) meanwhile, this changes nothing
    // and E5 answers 409 below.
    await discardOrCancelRun(db, run.id, now, env);
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
async function settled(
  db: Db,
  workspace: WorkspaceRow,
  versionId: string,
  values: RunConfiguration["values"],
): Promise<boolean> {
  let baseline: RunConfiguration | null;
  try {
    baseline = await baselineConfiguration(db, workspace.id);
  } catch (err) {
    if (err instanceof RunFailure) return false;
    throw err;
  }
  if (baseline && baseline.moduleVersionId === versionId && sameValues(baseline.values, values)) return true;
  return hasActiveRun(db, workspace.id);
}

/** Bindings E5 uses: the KEK and hash key for the vars, the pools for an agent run's plan job (N19). */
export type UpgradeEnv = Pick<Env, "KEYWAY_KEK" | "KEYWAY_HASH_KEY" | "AGENT_POOLS">;

/**
 * E5 with validated input, on a module and workspace the caller may upgrade (see
 * ../upgrade/target.ts). Returns what was done; throws NocodeError for every refusal.
 *
 * @example
 * const result = await initiateUpgrade(c.env, db, module, workspace, upgradeInputOf(await initiate.body(c)));
 */
export async function initiateUpgrade(
  env: UpgradeEnv,
  db: Db,
  module: NoCodeModuleRow,
  workspace: WorkspaceRow,
  input: UpgradeInput,
  now = Date.now(),
): Promise<InitiateResult> {
  // N15: a workspace whose rollout item has not ended is the rollout's to upgrade.
  const item = await activeRolloutItemOf(db, workspace.id);
  if (item)
    throw conflict(
      `The workspace is part of upgrade rollout ${item.rolloutId} (its item is ${item.status}); wait for that item to end or cancel the rollout`,
    );
  // N20: a remote workspace's upgrade is planned at once, which a user's lock forbids.
  if (workspace.executionMode === "remote" && workspace.lockedBy !== null)
    throw conflict("The workspace is locked; unlock it to plan an upgrade");
  return planUpgrade(env, db, module, workspace, input, now);
}

/**
 * E5's work once the caller and input are checked: also the step of a rollout (N15),
 * which calls it with no vars.
 */
export async function planUpgrade(
  env: UpgradeEnv,
  db: Db,
  module: NoCodeModuleRow,
  workspace: WorkspaceRow,
  input: UpgradeInput,
  now: number,
): Promise<InitiateResult> {
  // N3: E5 needs an enabled module with an `ok` pin (422).
  // Its checks read the registry module and the pin; the module's options and the
  // workspace's vars come in the same D1 batch.
  const [registryModules, versions, optionRows, stored] = await db.batch([
    ...provisionableVersionQueries(db, module),
    variableOptionsQuery(db, module.id),
    workspaceVarsQuery(db, workspace.id),
  ]);
  const { version, summary } = checkProvisionable(module, registryModules[0], versions[0]);
  const options = optionRows.map(optionSetOf);

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

  await discardStaleUpgradePlans(env, db, workspace, now);

  const configuration: UpgradeRunConfiguration = {
    ...(await buildRunConfiguration({ noCodeModule: module, version, values, options, storedVars: stored })),
    varChanges: merged.changes,
  };
  const engineVersion = await resolveRunEngineVersion(db, workspace);
  const message = input.message ?? `Upgrade to version ${version.version} of the no-code module`;
  // An upgrade runs a new configuration: it gets a configuration version of its own.
  const runWorkspace = { ...workspace, currentConfigurationVersionId: newId("cv") };

  if (workspace.executionMode === "agent") {
    // N19: an agent plans it. The run records the variables as E7 would leave them (N18).
    const runId = newId("run");
    const row = newRunRow(
      {
        workspace: runWorkspace,
        kind: "upgrade",
        configuration,
        engineVersion,
        // N8: an upgrade run waits at `planned` for E7, whatever the workspace's auto-apply.
        autoApply: false,
        message,
        agentInputs: await sealAgentInputs(env, runId, await plainVarsOf(env, merged.rows)),
      },
      now,
      runId,
    );
    await insertUpgradeRun(db, row, now);
    await queueAgentJob(env, db, row.id, "plan", now);
    return { kind: "queued", workspace, run: (await findRun(db, row.id)) ?? row };
  }

  let plan: Awaited<ReturnType<typeof planConfiguration>>;
  try {
    plan = await planConfiguration(db, workspace.id, configuration);
  } catch (err) {
    if (err instanceof RunFailure) throw unprocessable(`The upgrade cannot be planned: ${err.message}`);
    throw err;
  }
  const row = newRunRow(
    {
      workspace: runWorkspace,
      kind: "upgrade",
      configuration,
      engineVersion,
      // N8: an upgrade run waits at `planned` for E7, whatever the workspace's auto-apply.
      autoApply: false,
      message,
      // N7: an upgrade run waits at `planned` even when its plan is empty.
      planned: { plan, status: "planned" },
    },
    now,
  );
  await insertUpgradeRun(db, row, now);
  return { kind: "planned", workspace, run: row };
}

/** Store E5's run: one D1 batch decides between concurrent E5s (and any run created meanwhile). */
async function insertUpgradeRun(db: Db, row: RunRow, now: number): Promise<void> {
  await db.batch(insertUpgradeRunStatements(db, row, now));
  if (!(await findRun(db, row.id))) {
    throw conflict(
      "The workspace has a run in progress; wait for it to finish or discard it before starting an upgrade",
    );
  }
}
