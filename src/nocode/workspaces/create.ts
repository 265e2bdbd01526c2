/**
 * E4 `POST /no-code-modules/:id/workspaces`: create a workspace from a no-code module
 * (seed §4; decisions N1, N5, N6, N7, N10; reference §3 E4, §5.4, §7).
 *
 * Everything is validated before anything is written, so a refused request creates
 * nothing: the document's fields, the project and agent pool, the module (enabled, with
 * an `ok` pin), the engine version, the name, and the vars against the module (options,
 * required variables). Then one D1 batch writes the workspace, its vars and its first
 * run; the UNIQUE (organization, name) index decides between concurrent creates of one
 * name (the loser gets 422 `Name has already been taken`). The first run's plan is
 * queued after the batch (N7, N11).
 */
import { eq } from "drizzle-orm";
import { createDb, type Db } from "../../db/client";
import { organizations, runs as runsTable, workspaces, workspaceVars } from "../../db/schema";
import { isUniqueViolation } from "../../db/errors";
import type { ModuleSummary } from "../../lib/terraform/types";
import { type AgentPoolRow, agentPoolInOrganizationQuery, storedIds } from "../agent-pools/repo";
import type { NocodeCaller } from "../auth";
import { invalidAttribute, NocodeError, notFound, unprocessable } from "../errors";
import { newId } from "../ids";
import { attributeAt, FieldErrors, readDocument, relationshipAt, toManyMembers, toOneId } from "../no-code-modules/document";
import { designError } from "../no-code-modules/design";
import { noCodeModuleVersionId } from "../no-code-modules/fingerprint";
import { findNoCodeModule, type NoCodeModuleRow, optionSetOf, variableOptionsQuery } from "../no-code-modules/repo";
import { requireOrgPermission } from "../permissions";
import { projectInOrganizationQuery } from "../projects/repo";
import {
  moduleVersionQuery,
  type RegistryModuleRow,
  type RegistryModuleVersionRow,
  registryModuleByIdQuery,
  versionSummary,
} from "../registry/repo";
import { engineVersionError, pickEngineVersion, releasesQuery } from "../releases/resolve";
import { buildRunConfiguration, effectiveValues } from "../runs/configuration";
import { enqueueRunPlan, newRunRow } from "../runs/create";
import { findWorkspaceByName, type WorkspaceRow, workspaceByNameQuery } from "./repo";
import { checkRequiredVars, checkVarOptions, newVarRow, parseVarMembers, requireUniqueVarKeys, type VarInput } from "./vars";

/** Accepted `data.type` of E4/E5 (N1: go-tfe sends `no-code-module-workspace`). */
export const WORKSPACE_TYPES = ["workspaces", "workspace", "no-code-module-workspace"] as const;
/** Accepted project relationship types (N1). */
const PROJECT_TYPES = ["projects", "project"] as const;

/** N6: letters, digits, `-`, `_`; 1–260 characters. */
export const WORKSPACE_NAME_RE = /^[A-Za-z0-9_-]+$/;
export const WORKSPACE_NAME_MAX = 260;

/** N6: the exact text for a taken name (reference §2.3). */
export const nameTaken = () => invalidAttribute("name", "Name has already been taken");

/** Validated E4 input. */
interface WorkspaceInput {
  name: string;
  description: string;
  autoApply: boolean;
  executionMode: "remote" | "agent";
  executionModeSet: boolean;
  agentPoolId: string | null;
  sourceName: string | null;
  sourceUrl: string | null;
  /** The engine version as given, and the attribute it came in. */
  engineVersion: { value: string | null; attribute: string };
  message: string | null;
  projectId: string | undefined;
  vars: VarInput[];
}

function optionalString(errors: FieldErrors, attrs: Record<string, unknown>, name: string): string | null | undefined {
  const value = attrs[name];
  if (value === undefined) return undefined;
  if (value === null) return null;
  if (typeof value !== "string") {
    errors.add(attributeAt(name), `${name.charAt(0).toUpperCase()}${name.slice(1).replaceAll("-", " ")} must be a string`);
    return undefined;
  }
  return value;
}

/** N6: validate a workspace name (records errors). */
export function checkWorkspaceName(errors: FieldErrors, name: unknown): string | undefined {
  if (name === undefined || name === null || name === "") errors.add(attributeAt("name"), "Name can't be blank");
  else if (typeof name !== "string") errors.add(attributeAt("name"), "Name must be a string");
  else if (name.length > WORKSPACE_NAME_MAX) errors.add(attributeAt("name"), `Name is too long (maximum is ${WORKSPACE_NAME_MAX} characters)`);
  else if (!WORKSPACE_NAME_RE.test(name)) {
    errors.add(attributeAt("name"), "Name may only contain letters, numbers, dashes (-), and underscores (_)");
  } else return name;
  return undefined;
}

async function readWorkspaceInput(request: Request): Promise<WorkspaceInput> {
  const doc = await readDocument(request, WORKSPACE_TYPES);
  const attrs = doc.attributes;
  const errors = new FieldErrors();
  const name = checkWorkspaceName(errors, attrs.name);
  const description = optionalString(errors, attrs, "description");

  // N1: `auto-apply` (go-tfe) and `auto_apply` (the docs, pytfe).
  const autoApplyKey = attrs["auto-apply"] !== undefined ? "auto-apply" : "auto_apply";
  const autoApply = attrs[autoApplyKey];
  if (autoApply !== undefined && autoApply !== null && typeof autoApply !== "boolean") errors.add(attributeAt(autoApplyKey), "Auto apply must be true or false");

  const mode = attrs["execution-mode"];
  if (mode !== undefined && mode !== null && mode !== "remote" && mode !== "agent") {
    errors.add(attributeAt("execution-mode"), 'Execution mode must be "remote" or "agent" for a no-code workspace');
  }
  const agentPoolId = optionalString(errors, attrs, "agent-pool-id");
  const sourceName = optionalString(errors, attrs, "source-name");
  const sourceUrl = optionalString(errors, attrs, "source-url");
  const message = optionalString(errors, attrs, "message");
  // N1: `terraform-version` is a synonym of `engine-version`.
  const engineAttribute = attrs["engine-version"] !== undefined ? "engine-version" : "terraform-version";
  const engineVersion = optionalString(errors, attrs, engineAttribute);

  const projectId = toOneId(errors, doc.relationships, "project", PROJECT_TYPES);
  const members = toManyMembers(errors, doc.relationships, "vars") ?? [];
  const vars = parseVarMembers(errors, members, relationshipAt("vars"));
  errors.throwIfAny();

  requireUniqueVarKeys(vars);
  return {
    name: name!,
    description: description ?? "",
    autoApply: typeof autoApply === "boolean" ? autoApply : false,
    executionMode: mode === "agent" ? "agent" : "remote",
    executionModeSet: mode === "remote" || mode === "agent",
    agentPoolId: agentPoolId ?? null,
    sourceName: sourceName ?? null,
    sourceUrl: sourceUrl ?? null,
    engineVersion: { value: engineVersion ?? null, attribute: engineAttribute },
    message: message ?? null,
    projectId,
    vars,
  };
}

/**
 * Reference §5.4 and §2.3: agent-pool rules of a workspace. `pool` is the row of
 * `input.agentPoolId` in the workspace's organization, if there is one.
 */
function checkAgentPool(input: WorkspaceInput, projectId: string, pool: AgentPoolRow | undefined): void {
  if (input.executionMode === "agent" && input.agentPoolId === null) {
    throw invalidAttribute("agent-pool-id", "Agent pool must be specified when using 'agent' execution mode");
  }
  if (input.executionMode !== "agent" && input.agentPoolId !== null) {
    throw unprocessable("Agent pool must not be specified unless using 'agent' execution mode");
  }
  if (input.agentPoolId === null) return;
  if (!pool) throw invalidAttribute("agent-pool-id", "Agent pool must be an agent pool of the workspace's organization");
  if (!pool.organizationScoped && !storedIds(pool.allowedProjects).includes(projectId)) {
    throw invalidAttribute("agent-pool-id", "Agent pool is not available to the workspace's project");
  }
}

/** A no-code module's provisionable version: its registry module, the pinned version and that version's summary. */
export interface ProvisionableVersion {
  registryModule: RegistryModuleRow;
  version: RegistryModuleVersionRow;
  summary: ModuleSummary;
}

/** What E4 (and E5) need of a no-code module: enabled, with an `ok` pin (N3) that meets N12; else 422. */
export async function provisionableVersion(db: Db, module: NoCodeModuleRow): Promise<ProvisionableVersion> {
  const [registryModules, versions] = await db.batch([
    registryModuleByIdQuery(db, module.registryModuleId),
    moduleVersionQuery(db, module.registryModuleId, module.versionPin ?? ""),
  ]);
  return checkProvisionable(module, registryModules[0], versions[0]);
}

/**
 * provisionableVersion's checks on rows already read: `registryModule` is the module's
 * registry module and `version` its pinned version (each undefined when absent; `version`
 * is not looked at when the module has no pin).
 */
function checkProvisionable(
  module: NoCodeModuleRow,
  registryModule: RegistryModuleRow | undefined,
  version: RegistryModuleVersionRow | undefined,
): ProvisionableVersion {
  if (!module.enabled) throw unprocessable("The no-code module is not enabled; enable it (PATCH enabled: true) before provisioning workspaces");
  if (module.versionPin === null) throw unprocessable("The no-code module has no version pin: no version of its registry module is ok yet");
  if (!registryModule || !version) throw unprocessable(`The pinned version ${module.versionPin} no longer exists`);
  const summary = versionSummary(version);
  if (!summary) {
    const why = version.status === "reg_ingress_failed" ? `failed ingestion: ${version.error}` : `is ${version.status}, not yet ingested`;
    throw unprocessable(`The pinned version ${version.version} ${why}; only an ok version can be provisioned`);
  }
  // N12: a pin that was pending when the module was enabled may have become an `ok`
  // version that fails the design requirements; such a version is not provisioned either.
  const design = designError(version.version, summary);
  if (design) throw design;
  return { registryModule, version, summary };
}

/** `private/<namespace>/<name>/<provider>/<version>` (reference §3 E4). */
export function sourceModuleIdOf(module: Pick<RegistryModuleRow, "namespace" | "name" | "provider">, version: string): string {
  return `private/${module.namespace}/${module.name}/${module.provider}/${version}`;
}

/**
 * Run E4: returns the stored workspace row. Throws NocodeError for every refusal (404
 * for an unknown module or a caller without manage-workspaces or with the organization
 * token, 422 for rule violations).
 */
export async function provisionWorkspace(
  env: Env,
  caller: NocodeCaller,
  noCodeModuleId: string,
  request: Request,
  requestId = "",
): Promise<WorkspaceRow> {
  const db = createDb(env.DB);
  const module = await findNoCodeModule(db, noCodeModuleId);
  if (!module) throw notFound();
  // N10: manage-workspaces' run right; seed §5: not with an organization token (it lacks it).
  await requireOrgPermission(db, caller, module.organization, "run-workspaces");
  const input = await readWorkspaceInput(request);
  const organization = module.organization;

  // Every other read depends only on the module and the input: one D1 batch, one round
  // trip. The checks below then run in the order they always have, so a request with
  // several faults gets the same error as before. Reads a check does not need (the pool
  // of a workspace without one, the pin of a module without one) match no row.
  const [projectRows, orgRows, poolRows, registryModuleRows, versionRows, releases, sameNameRows, optionRows] = await db.batch([
    projectInOrganizationQuery(db, organization, input.projectId ?? ""),
    db.select({ defaultProjectId: organizations.defaultProjectId }).from(organizations).where(eq(organizations.name, organization)).limit(1),
    agentPoolInOrganizationQuery(db, organization, input.agentPoolId ?? ""),
    registryModuleByIdQuery(db, module.registryModuleId),
    moduleVersionQuery(db, module.registryModuleId, module.versionPin ?? ""),
    releasesQuery(db),
    workspaceByNameQuery(db, organization, input.name),
    variableOptionsQuery(db, module.id),
  ]);

  // N6: the project defaults to the organization's default project.
  let projectId = input.projectId;
  if (projectId === undefined) {
    const org = orgRows[0];
    if (!org) throw notFound();
    projectId = org.defaultProjectId;
  } else if (!projectRows[0]) {
    throw new NocodeError("invalid_attribute", "Project must be a project of the workspace's organization", relationshipAt("project"));
  }
  checkAgentPool(input, projectId, poolRows[0]);

  const { registryModule, version, summary } = checkProvisionable(module, registryModuleRows[0], versionRows[0]);
  const engine = pickEngineVersion(releases, input.engineVersion.value);
  if (!engine.ok) throw engineVersionError(engine, input.engineVersion.attribute);
  if (sameNameRows[0]) throw nameTaken();

  // N5: the module's rules on the vars.
  const options = optionRows.map(optionSetOf);
  checkVarOptions(input.vars, options);
  checkRequiredVars(input.vars, summary, version.version);

  const now = Date.now();
  const workspaceId = newId("ws");
  const varRows = await Promise.all(input.vars.map((v) => newVarRow(env, workspaceId, v, now)));
  const configuration = await buildRunConfiguration({
    noCodeModule: module,
    version,
    values: effectiveValues(summary, varRows),
    options,
    storedVars: varRows,
  });
  const configurationVersionId = newId("cv");
  const run = newRunRow(
    {
      workspace: { id: workspaceId, organization, currentConfigurationVersionId: configurationVersionId },
      kind: "plan-and-apply",
      configuration,
      engineVersion: engine.version,
      autoApply: input.autoApply,
      message: input.message ?? "Triggered by no-code workspace creation",
    },
    now,
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
    noCodeModuleVersionId: await noCodeModuleVersionId(module.id, version.version),
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
    createdAt: now,
    updatedAt: now,
  };
  try {
    // One statement per row: D1 caps bound parameters per statement at 100.
    await db.batch([
      db.insert(workspaces).values(workspace),
      ...varRows.map((v) => db.insert(workspaceVars).values(v)),
      db.insert(runsTable).values(run),
    ]);
  } catch (err) {
    // N6: concurrent creates of one name: the UNIQUE index keeps exactly one.
    if (isUniqueViolation(err) && (await findWorkspaceByName(db, organization, input.name))) throw nameTaken();
    throw err;
  }
  await enqueueRunPlan(env, db, run.id, requestId);
  return workspace;
}
