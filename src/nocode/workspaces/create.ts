/**
 * E4 `POST /no-code-modules/:id/workspaces`: create a workspace from a no-code module
 * (decisions N1, N5, N6, N7, N10; HCP Terraform's no-code provisioning API (E4), agent pools
 * API and workspace rules).
 *
 * The handler finds the module the caller may provision from ({@link provisionableModule}:
 * 404 first), reads the body (./input.ts, through the request kit), then {@link provisionWorkspace} checks the rest
 * before anything is written, so a refused request creates nothing: the project and agent
 * pool, the module (enabled, with an `ok` pin), the engine version, the name, and the vars
 * against the module (options, required variables). Then one D1 batch writes the
 * workspace, its vars and its first run; the UNIQUE (organization, name) index decides
 * whether the name is free, also between concurrent creates of one name (the loser gets
 * 422 `Name has already been taken`). The first run's plan is queued after the batch (N7,
 * N11). With a warm per-isolate cache that batch is E4's only D1 call (docs/performance.md).
 */
import type { Db } from "../../db/client";
import { insertUnique } from "../../db/unique";
import { type AgentPoolRow, agentPoolInOrganizationQuery, storedIds } from "../agent-pools/repo";
import { sealAgentInputs } from "../agents/inputs";
import { invalidAttribute, NocodeError, notFound, unprocessable } from "../errors";
import { newId } from "../ids";
import { cachedNoCodeModuleWithOptions, cachedPinnedVersion } from "../no-code-modules/cached";
import { noCodeModuleVersionId } from "../no-code-modules/fingerprint";
import { checkProvisionable, sourceModuleIdOf } from "../no-code-modules/provisionable";
import type { NoCodeModuleWithOptions } from "../no-code-modules/repo";
import { cachedWorkspaceProjectId } from "../projects/cached";
import { cachedReleases } from "../releases/cached";
import { engineVersionError, pickEngineVersion } from "../releases/resolve";
import { scope } from "../route-rights";
import { buildRunConfiguration, effectiveValues } from "../runs/configuration";
import { enqueueRunPlan, newRunRow } from "../runs/create";
import { insertRunQuery } from "../runs/repo";
import { nameTaken, type WorkspaceInput } from "./input";
import { findWorkspaceByName, insertWorkspaceStatements, type WorkspaceRow, type WorkspaceVarRow } from "./repo";
import { checkRequiredVars, checkVarOptions, newVarRow } from "./vars";

/**
 * The agent-pool rules of a workspace, with HCP Terraform's texts (its agent pools API).
 * `pool` is the row of `input.agentPoolId` in the workspace's organization, if
 * there is one.
 */
function checkAgentPool(input: WorkspaceInput, projectId: string, pool: AgentPoolRow | undefined): void {
  if (input.executionMode === "agent" && input.agentPoolId === null) {
    throw invalidAttribute("agent-pool-id", "Agent pool must be specified when using 'agent' execution mode");
  }
  if (input.executionMode !== "agent" && input.agentPoolId !== null) {
    throw unprocessable("Agent pool must not be specified unless using 'agent' execution mode");
  }
  if (input.agentPoolId === null) return;
  if (!pool)
    throw invalidAttribute("agent-pool-id", "Agent pool must be an agent pool of the workspace's organization");
  if (!pool.organizationScoped && !storedIds(pool.allowedProjects).includes(projectId)) {
    throw invalidAttribute("agent-pool-id", "Agent pool is not available to the workspace's project");
  }
}

/**
 * The no-code module `:id` E4 provisions from; its organization's rights decide (N10:
 * `run-workspaces`, which the organization token lacks). The route's rights check runs
 * before the body is read, so a caller who may not provision learns nothing from
 * validation errors.
 */
export const provisionableModule = scope<NoCodeModuleWithOptions>(async (c) => {
  // E3's entry of the per-isolate cache (docs/performance.md): the module and its option sets, so
  // neither is read again below. Like every cached read, at most NOCODE_CACHE_TTL_MS old
  // for another isolate's E2 or DELETE; this isolate's own clear the cache at once.
  const found = await cachedNoCodeModuleWithOptions(c.var.db, c.req.param("id") ?? "");
  return found && { resource: found, organization: found.module.organization };
});

/** What E4 created: the workspace and its vars (the vars are what its document lists). */
export interface ProvisionedWorkspace {
  workspace: WorkspaceRow;
  vars: WorkspaceVarRow[];
}

/**
 * Run E4 with validated input on a module the caller may provision from (see
 * {@link provisionableModule}). Throws NocodeError (422) for every rule violation.
 */
export async function provisionWorkspace(
  env: Pick<Env, "KEYWAY_KEK" | "KEYWAY_HASH_KEY" | "PROVISION_QUEUE" | "AGENT_POOLS">,
  db: Db,
  { module, sets: options }: NoCodeModuleWithOptions,
  input: WorkspaceInput,
  requestId = "",
): Promise<ProvisionedWorkspace> {
  const organization = module.organization;

  // Every read depends only on the module and the input, and (for speed, docs/performance.md) each comes from
  // the per-isolate cache when this isolate has it: the project (the named one, or else
  // the organization's default, N6), the pin's registry module and `ok` version, and the
  // release list. The agent pool is read only when one is named. The checks below then run
  // in the order they always have, so a request with several faults gets the same error.
  const poolId = input.agentPoolId;
  const [projectId, pinned, releases, pool] = await Promise.all([
    cachedWorkspaceProjectId(db, organization, input.projectId),
    cachedPinnedVersion(db, module),
    cachedReleases(db),
    poolId === null ? undefined : agentPoolInOrganizationQuery(db, organization, poolId).then((rows) => rows[0]),
  ]);

  if (!projectId) {
    if (input.projectId === undefined) throw notFound();
    throw new NocodeError(
      "invalid_attribute",
      "Project must be a project of the workspace's organization",
      "/data/relationships/project",
    );
  }
  checkAgentPool(input, projectId, pool);

  const { registryModule, version, summary } = checkProvisionable(
    module,
    pinned.registryModule,
    pinned.version,
    pinned.summary,
  );
  const engine = pickEngineVersion(releases, input.engineVersion.value);
  if (!engine.ok) throw engineVersionError(engine, input.engineVersion.attribute);

  // N5: the module's rules on the vars (its option sets came with the module). A taken
  // name is reported before them, as it always was; but the name is read only on this
  // error path: on success the UNIQUE (organization, name) index decides, below.
  try {
    checkVarOptions(input.vars, options);
    checkRequiredVars(input.vars, summary, version.version);
  } catch (err) {
    if (err instanceof NocodeError && (await findWorkspaceByName(db, organization, input.name))) throw nameTaken();
    throw err;
  }

  const now = Date.now();
  const workspaceId = newId("ws");
  const varRows = await Promise.all(input.vars.map((v) => newVarRow(env, workspaceId, v, now)));
  const [configuration, moduleVersionId] = await Promise.all([
    buildRunConfiguration({
      noCodeModule: module,
      version,
      values: effectiveValues(summary, varRows),
      options,
      storedVars: varRows,
    }),
    noCodeModuleVersionId(module.id, version.version),
  ]);
  const configurationVersionId = newId("cv");
  const runId = newId("run");
  const run = newRunRow(
    {
      workspace: {
        id: workspaceId,
        organization,
        currentConfigurationVersionId: configurationVersionId,
        executionMode: input.executionMode,
      },
      // N18: an agent run records its variables (sensitive ones included, sealed) for its agent.
      agentInputs: input.executionMode === "agent" ? await sealAgentInputs(env, runId, input.vars) : null,
      kind: "plan-and-apply",
      configuration,
      engineVersion: engine.version,
      autoApply: input.autoApply,
      message: input.message ?? "Triggered by no-code workspace creation",
    },
    now,
    runId,
  );
  const workspace: WorkspaceRow = {
    id: workspaceId,
    organization,
    name: input.name,
    projectId,
    description: input.description,
    autoApply: input.autoApply,
    executionMode: input.executionMode,
    executionModeSet: input.executionModeSet,
    agentPoolId: input.agentPoolId,
    engineVersion: engine.requested,
    source: "tfe-module",
    sourceName: input.sourceName,
    sourceUrl: input.sourceUrl,
    sourceModuleId: sourceModuleIdOf(registryModule, version.version),
    noCodeModuleId: module.id,
    noCodeModuleVersionId: moduleVersionId,
    noCodeVersionId: version.id,
    noCodeVersion: version.version,
    optionSetFingerprint: configuration.optionSetFingerprint,
    currentConfigurationVersionId: configurationVersionId,
    currentRunId: run.id,
    latestRunId: run.id,
    currentStateVersionId: null,
    resourceCount: 0,
    latestChangeAt: now,
    locked: false,
    lockedBy: null,
    lockedAt: null,
    createdAt: now,
    updatedAt: now,
  };
  // The workspace already names the run as latest and current: no UPDATE after the insert.
  // N6: a taken name, or concurrent creates of one name: the UNIQUE (organization, name)
  // index keeps exactly one. It is the only unique index this batch can meet: the ids are
  // new, and two vars of one key were refused when the body was read (./input.ts).
  await insertUnique(
    db.batch([...insertWorkspaceStatements(db, workspace, varRows), insertRunQuery(db, run)]),
    nameTaken,
  );
  // The run was written `pending` in the batch above; its plan is queued by id (N11)
  // with nothing read back.
  await enqueueRunPlan(env, db, run, requestId);
  return { workspace, vars: varRows };
}
