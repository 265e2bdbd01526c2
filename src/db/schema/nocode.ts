/**
 * The D1 tables of the no-code service (/api/v2, the `src/nocode` wing): organizations,
 * users, teams, tokens, projects, the registry, no-code modules, workspaces, runs, the
 * console and SSO, fleet upgrades and the execution plane. Column names are explicit
 * snake_case; timestamps are integer milliseconds since the epoch unless a name says
 * otherwise. Secrets are never stored in the clear (decision B2): tokens as keyed hashes,
 * sensitive values encrypted. Only `src/nocode` (with its tests and the bench) imports
 * this file; the secrets service's tables are in `ssh.ts`. docs/storage-schema.md
 * describes each table.
 */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { timestamps } from "./columns";

// ---------------------------------------------------------------------------
// No-code service (/api/v2): organizations, users, teams, tokens, projects,
// agent pools and the engine release list (decisions N6, N9, N10)
// ---------------------------------------------------------------------------

/** Organizations (N9). The name is the id everywhere (HCP Terraform's id formats). */
export const organizations = sqliteTable("organizations", {
  name: text("name").primaryKey(),
  email: text("email").notNull(),
  /** The `Default Project` created with the organization (N6: workspaces default to it). */
  defaultProjectId: text("default_project_id").notNull(),
  createdAt: integer("created_at").notNull(),
});

/** Users of the no-code service (N9 `POST /admin/users`). `id` is `user-` + 16 alnum. */
export const nocodeUsers = sqliteTable(
  "nocode_users",
  {
    id: text("id").primaryKey(),
    username: text("username").notNull(),
    email: text("email").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("nocode_users_username").on(t.username)],
);

/**
 * Teams and their organization access (N9, N10). `id` is `team-` + 16 alnum; the team
 * named `owners` may do everything in its organization.
 */
export const teams = sqliteTable(
  "teams",
  {
    id: text("id").primaryKey(),
    organization: text("organization").notNull(),
    name: text("name").notNull(),
    manageWorkspaces: integer("manage_workspaces", { mode: "boolean" }).notNull().default(false),
    manageProjects: integer("manage_projects", { mode: "boolean" }).notNull().default(false),
    manageModules: integer("manage_modules", { mode: "boolean" }).notNull().default(false),
    manageAgentPools: integer("manage_agent_pools", { mode: "boolean" }).notNull().default(false),
    readWorkspaces: integer("read_workspaces", { mode: "boolean" }).notNull().default(false),
    readProjects: integer("read_projects", { mode: "boolean" }).notNull().default(false),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("teams_organization_name").on(t.organization, t.name)],
);

/** Team membership (N9 `POST|DELETE /teams/:id/relationships/users`). */
export const teamMemberships = sqliteTable(
  "team_memberships",
  {
    teamId: text("team_id").notNull(),
    userId: text("user_id").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.teamId, t.userId] }), index("team_memberships_user").on(t.userId)],
);

/**
 * API tokens of the no-code service (B1, B2): stored only as
 * `keyedHash(KEYWAY_HASH_KEY, "tfe-token", token)`. `kind` is `user`, `team` or
 * `organization`; `subject_id` the user id, team id or organization name. Teams and
 * organizations hold at most one token each (a new one replaces the old).
 */
export const nocodeTokens = sqliteTable(
  "nocode_tokens",
  {
    hash: text("hash").primaryKey(),
    /** Public id of the token (`at-` + 16 alnum), the JSON:API id of `authentication-tokens`. */
    id: text("id").notNull(),
    /** N17: `agent` tokens belong to an agent pool (`subject_id` the pool id) and reach only the agent protocol. */
    kind: text("kind", { enum: ["user", "team", "organization", "agent"] }).notNull(),
    subjectId: text("subject_id").notNull(),
    /** The organization of a team or organization token; null for user tokens. */
    organization: text("organization"),
    description: text("description"),
    createdAt: integer("created_at").notNull(),
    /** N13: last request made with the token (epoch ms), written at most once a minute; null before the first. */
    lastUsedAt: integer("last_used_at"),
    /** N13: when the token stops working (epoch ms); null: never. */
    expiredAt: integer("expired_at"),
  },
  (t) => [
    uniqueIndex("nocode_tokens_id").on(t.id),
    index("nocode_tokens_subject").on(t.kind, t.subjectId),
    uniqueIndex("nocode_tokens_one_per_team_or_org")
      .on(t.kind, t.subjectId)
      .where(sql`kind IN ('team', 'organization')`),
  ],
);

/** Projects (N9, HCP Terraform's projects API). `id` is `prj-` + 16 alnum. */
export const projects = sqliteTable(
  "projects",
  {
    id: text("id").primaryKey(),
    organization: text("organization").notNull(),
    name: text("name").notNull(),
    description: text("description"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("projects_organization_name").on(t.organization, t.name)],
);

/** Agent pools (N9, HCP Terraform's agent pools API). `id` is `apool-` + 16 alnum. */
export const agentPools = sqliteTable(
  "agent_pools",
  {
    id: text("id").primaryKey(),
    organization: text("organization").notNull(),
    name: text("name").notNull(),
    organizationScoped: integer("organization_scoped", { mode: "boolean" }).notNull().default(true),
    /** JSON arrays of ids from the `allowed-workspaces`, `allowed-projects`, `excluded-workspaces` relationships. */
    allowedWorkspaces: text("allowed_workspaces").notNull().default("[]"),
    allowedProjects: text("allowed_projects").notNull().default("[]"),
    excludedWorkspaces: text("excluded_workspaces").notNull().default("[]"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("agent_pools_organization_name").on(t.organization, t.name)],
);

/**
 * The engine release list (N6), managed through `/api/v2/admin/terraform-versions`.
 * `id` is `tool-` + 16 alnum. Disabled and beta releases never resolve a constraint or
 * the default; deprecated ones still do.
 */
export const terraformVersions = sqliteTable(
  "terraform_versions",
  {
    id: text("id").primaryKey(),
    version: text("version").notNull(),
    url: text("url"),
    sha: text("sha"),
    official: integer("official", { mode: "boolean" }).notNull().default(true),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    beta: integer("beta", { mode: "boolean" }).notNull().default(false),
    deprecated: integer("deprecated", { mode: "boolean" }).notNull().default(false),
    deprecatedReason: text("deprecated_reason"),
    ...timestamps(),
  },
  (t) => [uniqueIndex("terraform_versions_version").on(t.version)],
);

// ---------------------------------------------------------------------------
// No-code service (/api/v2): private registry modules, their versions and the
// single-use upload links of module tarballs (decisions N3, N4, N9, B5)
// ---------------------------------------------------------------------------

/**
 * Private registry modules (N9, HCP Terraform's private registry API). `id` is `mod-` + 16 alnum. Private
 * modules have the organization as namespace. No foreign keys (D1 ignores
 * `PRAGMA foreign_keys=OFF`); deleting a module removes its versions and links itself.
 */
export const registryModules = sqliteTable(
  "registry_modules",
  {
    id: text("id").primaryKey(),
    organization: text("organization").notNull(),
    /** Always `private` for now (no public curation). */
    registryName: text("registry_name").notNull(),
    namespace: text("namespace").notNull(),
    name: text("name").notNull(),
    provider: text("provider").notNull(),
    /** The legacy `no-code` attribute (N9): set on create, or when a no-code module is enabled. */
    noCode: integer("no_code", { mode: "boolean" }).notNull().default(false),
    ...timestamps(),
  },
  (t) => [uniqueIndex("registry_modules_address").on(t.organization, t.registryName, t.namespace, t.name, t.provider)],
);

/**
 * Versions of a registry module (N3, N4). `id` is `modver-` + 16 alnum. `status` is
 * `pending` (created, nothing uploaded), `reg_ingressing` (tarball stored, ingestion
 * queued), `ok` or `reg_ingress_failed` (with `error`). `summary` holds the full
 * ModuleSummary JSON ingested from the tarball (the planner of N7 reads it).
 */
export const registryModuleVersions = sqliteTable(
  "registry_module_versions",
  {
    id: text("id").primaryKey(),
    moduleId: text("module_id").notNull(),
    version: text("version").notNull(),
    commitSha: text("commit_sha"),
    status: text("status", { enum: ["pending", "reg_ingressing", "ok", "reg_ingress_failed"] }).notNull(),
    error: text("error"),
    /**
     * R2 key (binding MODULES) of the uploaded tarball, recorded by the batch that spent the
     * upload link (B16: one object per attempt); null before upload and after a failed ingestion.
     */
    tarballKey: text("tarball_key"),
    tarballBytes: integer("tarball_bytes"),
    /** JSON of the ingested ModuleSummary; set only when `status` is `ok`. */
    summary: text("summary"),
    ...timestamps(),
    uploadedAt: integer("uploaded_at"),
    ingestedAt: integer("ingested_at"),
  },
  (t) => [uniqueIndex("registry_module_versions_module_version").on(t.moduleId, t.version)],
);

/**
 * Single-use upload links of module tarballs (N9). The link's token is the credential
 * and is kept only as `keyedHash(KEYWAY_HASH_KEY, "registry-upload", token)` (B2).
 */
export const registryUploadLinks = sqliteTable(
  "registry_upload_links",
  {
    tokenHash: text("token_hash").primaryKey(),
    versionId: text("version_id").notNull(),
    expiresAt: integer("expires_at").notNull(),
    /** When the link was spent; null while unused. */
    usedAt: integer("used_at"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("registry_upload_links_version").on(t.versionId)],
);

/**
 * Upload attempts whose R2 object is written but not (yet) recorded (B16). Each attempt
 * writes its own object, recorded here first; the batch that spends the link records the
 * winner's key on its version and deletes its row, a loser deletes its object and row, and
 * the hourly cron deletes what is left after one hour (src/nocode/registry/uploads.ts).
 */
export const registryUploadAttempts = sqliteTable(
  "registry_upload_attempts",
  {
    objectKey: text("object_key").primaryKey(),
    versionId: text("version_id").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("registry_upload_attempts_created").on(t.createdAt)],
);

// ---------------------------------------------------------------------------
// No-code service (/api/v2): no-code modules, variable options, workspaces, their
// variables, runs and state versions (decisions N3, N5–N8, N12)
// ---------------------------------------------------------------------------

/**
 * No-code modules (E1–E3, N3). `id` is `nocode-` + 16 alnum. At most one per registry
 * module (N3: a second E1 → 422). `version_pin` is a concrete version of the registry
 * module (`latest` is stored resolved), or null while no version is `ok`.
 */
export const noCodeModules = sqliteTable(
  "no_code_modules",
  {
    id: text("id").primaryKey(),
    organization: text("organization").notNull(),
    registryModuleId: text("registry_module_id").notNull(),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(false),
    versionPin: text("version_pin"),
    ...timestamps(),
  },
  (t) => [
    uniqueIndex("no_code_modules_registry_module").on(t.registryModuleId),
    index("no_code_modules_organization").on(t.organization),
  ],
);

/**
 * Variable options of a no-code module (N5). `id` is `ncvaropt-` + 16 alnum; `options`
 * is a JSON array (empty = free text); `position` keeps creation order.
 */
export const variableOptions = sqliteTable(
  "variable_options",
  {
    id: text("id").primaryKey(),
    noCodeModuleId: text("no_code_module_id").notNull(),
    variableName: text("variable_name").notNull(),
    variableType: text("variable_type").notNull(),
    options: text("options").notNull().default("[]"),
    position: integer("position").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("variable_options_module_variable").on(t.noCodeModuleId, t.variableName)],
);

/**
 * Workspaces created from no-code modules (E4, N6). `id` is `ws-` + 16 alnum; names are
 * unique per organization (the UNIQUE index decides concurrent creates). The no-code
 * columns record what the workspace runs: the no-code module, the registry version
 * (`no_code_version`, `no_code_version_id`), and the option-set fingerprint recorded at
 * the last E4/E7 (N8: `no-code-upgrade-available`).
 */
export const workspaces = sqliteTable(
  "workspaces",
  {
    id: text("id").primaryKey(),
    organization: text("organization").notNull(),
    name: text("name").notNull(),
    projectId: text("project_id").notNull(),
    description: text("description"),
    autoApply: integer("auto_apply", { mode: "boolean" }).notNull().default(false),
    executionMode: text("execution_mode", { enum: ["remote", "agent"] })
      .notNull()
      .default("remote"),
    /** `setting-overwrites.execution-mode`: whether E4 set the mode explicitly. */
    executionModeSet: integer("execution_mode_set", { mode: "boolean" }).notNull().default(false),
    agentPoolId: text("agent_pool_id"),
    /** The `engine-version` as given (exact version or constraint), or the resolved default (N6). */
    engineVersion: text("engine_version").notNull(),
    source: text("source").notNull().default("tfe-module"),
    sourceName: text("source_name"),
    sourceUrl: text("source_url"),
    /** `private/<namespace>/<name>/<provider>/<version>` of the version the workspace runs. */
    sourceModuleId: text("source_module_id"),
    noCodeModuleId: text("no_code_module_id"),
    /** Id of the `no-code-module-versions` relationship (`nocodever-…`). */
    noCodeModuleVersionId: text("no_code_module_version_id"),
    /** The registry module version the workspace runs (`modver-…`) and its version string. */
    noCodeVersionId: text("no_code_version_id"),
    noCodeVersion: text("no_code_version"),
    /** optionSetFingerprint of the module's variable options at the last E4/E7 (N8). */
    optionSetFingerprint: text("option_set_fingerprint"),
    currentConfigurationVersionId: text("current_configuration_version_id"),
    currentRunId: text("current_run_id"),
    latestRunId: text("latest_run_id"),
    currentStateVersionId: text("current_state_version_id"),
    resourceCount: integer("resource_count").notNull().default(0),
    latestChangeAt: integer("latest_change_at"),
    locked: integer("locked", { mode: "boolean" }).notNull().default(false),
    /** N20: who holds the workspace's user lock (`user:<id>`, `team:<id>`); null when none (migration `0055`). */
    lockedBy: text("locked_by"),
    lockedAt: integer("locked_at"),
    ...timestamps(),
  },
  (t) => [
    uniqueIndex("workspaces_organization_name").on(t.organization, t.name),
    index("workspaces_no_code_module").on(t.noCodeModuleId),
  ],
);

/**
 * Workspace variables (N5, N9). `category` is `engine` or `env`. A sensitive value is
 * stored only AES-GCM encrypted (`value_encrypted`, B2) with its keyed hash for the
 * planner (`sensitive_hash`); `value` is then null. `version_id` changes on every write.
 */
export const workspaceVars = sqliteTable(
  "workspace_vars",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull(),
    key: text("key").notNull(),
    category: text("category", { enum: ["engine", "env"] }).notNull(),
    value: text("value"),
    valueEncrypted: text("value_encrypted"),
    sensitiveHash: text("sensitive_hash"),
    description: text("description"),
    hcl: integer("hcl", { mode: "boolean" }).notNull().default(false),
    sensitive: integer("sensitive", { mode: "boolean" }).notNull().default(false),
    versionId: text("version_id").notNull(),
    ...timestamps(),
  },
  (t) => [uniqueIndex("workspace_vars_workspace_category_key").on(t.workspaceId, t.category, t.key)],
);

/**
 * Runs (N7, N8). `id` is `run-` + 16 alnum, `plan_id` `plan-` + 16 alnum. `kind` is
 * `plan-and-apply` (E4 and ordinary runs) or `upgrade` (E5, waits at `planned` for E7).
 * `configuration` is the JSON snapshot of what is planned (RunConfiguration in
 * src/nocode/runs/configuration.ts); `plan` the planner's Plan JSON once planned;
 * `status_timestamps` maps `<status>-at` to ISO times, as HCP's `status-timestamps`.
 */
export const runs = sqliteTable(
  "runs",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull(),
    organization: text("organization").notNull(),
    kind: text("kind", { enum: ["plan-and-apply", "upgrade"] }).notNull(),
    noCodeModuleId: text("no_code_module_id"),
    moduleVersionId: text("module_version_id").notNull(),
    moduleVersion: text("module_version").notNull(),
    configuration: text("configuration").notNull(),
    configurationVersionId: text("configuration_version_id").notNull(),
    /** The concrete engine release the run uses (N6). */
    engineVersion: text("engine_version").notNull(),
    planId: text("plan_id").notNull(),
    plan: text("plan"),
    status: text("status").notNull(),
    statusTimestamps: text("status_timestamps").notNull().default("{}"),
    autoApply: integer("auto_apply", { mode: "boolean" }).notNull().default(false),
    message: text("message"),
    error: text("error"),
    stateVersionId: text("state_version_id"),
    /**
     * The random token of the request whose conditional move last claimed the run (E7's
     * confirm): the statements batched with that move recognise it by this, never by a
     * time stamp, which concurrent requests in workerd can share (migration `0014`).
     */
    transitionToken: text("transition_token"),
    /** N19: `agent` runs are executed by an agent of the workspace's pool; `remote` ones by N7's planner (migration `0040`). */
    executionMode: text("execution_mode", { enum: ["remote", "agent"] })
      .notNull()
      .default("remote"),
    /** N19: JSON of the plan's `execution-details` of an agent run (agent, pool, engine); null until an agent starts it. */
    executionDetails: text("execution_details"),
    /** N18/N19: why the run waits or was discarded (`waiting for an agent of pool …`); null when none. */
    statusReason: text("status_reason"),
    /**
     * N18: the variables an agent receives for this run (engine and env, sensitive values
     * included), as JSON encrypted under KEYWAY_KEK with the context `run-inputs:<run id>`.
     */
    agentInputs: text("agent_inputs"),
    ...timestamps(),
    /** N19a: when a cancel of the running run was first asked; force-cancel counts from it (migration `0052`). */
    cancelRequestedAt: integer("cancel_requested_at"),
  },
  (t) => [uniqueIndex("runs_plan_id").on(t.planId), index("runs_workspace_created").on(t.workspaceId, t.createdAt)],
);

/**
 * State versions recorded by applies (N7): the resource addresses and the outputs (values
 * null). `id` is `sv-` + 16 alnum; one per applied run.
 */
export const stateVersions = sqliteTable(
  "state_versions",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull(),
    runId: text("run_id").notNull(),
    serial: integer("serial").notNull(),
    /** JSON array of resource addresses. */
    resources: text("resources").notNull(),
    /** JSON array of `{name, sensitive, value: null}`. */
    outputs: text("outputs").notNull(),
    createdAt: integer("created_at").notNull(),
    /**
     * N19/N20: `structural` (written by N7's built-in apply; listed, never downloaded, never
     * given to an agent) or `engine` (a state an agent uploaded, stored encrypted in R2).
     */
    kind: text("kind", { enum: ["structural", "engine"] })
      .notNull()
      .default("structural"),
    /** The engine state's `lineage`, its MD5 (hex) and size in bytes; null for structural ones. */
    lineage: text("lineage"),
    md5: text("md5"),
    size: integer("size"),
    /** The `run_data_objects` row holding the state's bytes; null for structural ones. */
    objectId: text("object_id"),
  },
  // N20: an agent's apply may record more than one state (an interrupted apply, then the final one).
  (t) => [index("state_versions_run").on(t.runId), index("state_versions_workspace").on(t.workspaceId, t.serial)],
);

// --- Self-service console (N14) ---

/**
 * Console sessions (N14): stored only as the keyed hash of the cookie's random id, bound
 * to the hash of the no-code token they were opened with, 12 h at most.
 */
export const consoleSessions = sqliteTable(
  "console_sessions",
  {
    idHash: text("id_hash").primaryKey(),
    /** A token session (N14): the stored hash of the token it was opened with; null for an SSO session. */
    tokenHash: text("token_hash"),
    /** An SSO session (N16): the user, the organization it is scoped to, the configuration generation, the sign-in time (ms). */
    userId: text("user_id"),
    ssoOrganization: text("sso_organization"),
    ssoGeneration: integer("sso_generation"),
    ssoSignedInAt: integer("sso_signed_in_at"),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [
    index("console_sessions_expires").on(t.expiresAt),
    index("console_sessions_sso").on(t.ssoOrganization, t.userId),
  ],
);

// --- Organization single sign-on (N16) ---

/**
 * An organization's SSO configuration (N16). `client_secret_encrypted` is under KEYWAY_KEK
 * (B2), context `sso-client-secret:<organization>`; `discovered` the provider's endpoints
 * (JSON); `generation` grows when `issuer`, `client_id` or `enabled` changes.
 */
export const ssoConfigurations = sqliteTable("sso_configurations", {
  organization: text("organization").primaryKey(),
  enabled: integer("enabled", { mode: "boolean" }).notNull().default(false),
  issuer: text("issuer"),
  clientId: text("client_id"),
  clientSecretEncrypted: text("client_secret_encrypted"),
  groupsClaim: text("groups_claim"),
  autoProvision: integer("auto_provision", { mode: "boolean" }).notNull().default(false),
  defaultTeam: text("default_team"),
  teamSync: integer("team_sync", { mode: "boolean" }).notNull().default(false),
  discovered: text("discovered"),
  generation: integer("generation").notNull().default(1),
  updatedAt: integer("updated_at").notNull(),
});

/** Provider identities (issuer, `sub`) linked to users, per organization (N16). */
export const ssoIdentities = sqliteTable(
  "sso_identities",
  {
    organization: text("organization").notNull(),
    issuer: text("issuer").notNull(),
    subject: text("subject").notNull(),
    userId: text("user_id").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.organization, t.issuer, t.subject] }), index("sso_identities_user").on(t.userId)],
);

// --- Fleet upgrades (N15) ---

/** Rollout statuses (N15). */
export const ROLLOUT_STATUSES = [
  "pending",
  "running",
  "waiting-confirmation",
  "paused",
  "completed",
  "failed",
  "canceled",
] as const;
/** Rollout item statuses (N15). */
export const ROLLOUT_ITEM_STATUSES = [
  "pending",
  "planning",
  "waiting-confirmation",
  "applying",
  "applied",
  "skipped",
  "errored",
  "canceled",
] as const;

/**
 * Upgrade rollouts (N15): `id` is `rollout-` + 16 alnum. One active rollout per no-code
 * module (partial unique index over the active statuses). `current_batch` is the batch
 * being worked on (0-based).
 */
export const upgradeRollouts = sqliteTable(
  "upgrade_rollouts",
  {
    id: text("id").primaryKey(),
    organization: text("organization").notNull(),
    noCodeModuleId: text("no_code_module_id").notNull(),
    targetVersionId: text("target_version_id").notNull(),
    targetVersion: text("target_version").notNull(),
    batchSize: integer("batch_size").notNull(),
    autoConfirm: text("auto_confirm", { enum: ["never", "no-destructions", "no-changes"] }).notNull(),
    maxFailures: integer("max_failures").notNull(),
    status: text("status", { enum: ROLLOUT_STATUSES }).notNull(),
    reason: text("reason"),
    currentBatch: integer("current_batch").notNull(),
    createdBy: text("created_by"),
    ...timestamps(),
  },
  (t) => [
    uniqueIndex("upgrade_rollouts_one_active")
      .on(t.noCodeModuleId)
      .where(sql`status IN ('pending', 'running', 'waiting-confirmation', 'paused')`),
    index("upgrade_rollouts_module").on(t.noCodeModuleId, t.createdAt),
  ],
);

/** One workspace of a rollout (N15), with what it looked like when the rollout began. */
export const upgradeRolloutItems = sqliteTable(
  "upgrade_rollout_items",
  {
    rolloutId: text("rollout_id").notNull(),
    workspaceId: text("workspace_id").notNull(),
    position: integer("position").notNull(),
    batch: integer("batch").notNull(),
    status: text("status", { enum: ROLLOUT_ITEM_STATUSES }).notNull(),
    runId: text("run_id"),
    reason: text("reason"),
    additions: integer("additions"),
    changes: integer("changes"),
    destructions: integer("destructions"),
    baselineRunId: text("baseline_run_id"),
    baselineVars: text("baseline_vars").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.rolloutId, t.workspaceId] }),
    index("upgrade_rollout_items_workspace").on(t.workspaceId, t.status),
    index("upgrade_rollout_items_run").on(t.runId),
  ],
);

// --- The execution plane (N17–N20; migrations 0040–0041) ---

/**
 * N17/N18: agents of a pool, one row per registration. `status` is the last one written by
 * the pool's Durable Object (`idle`, `busy`, `unknown`, `errored`, `exited`), which holds the
 * live status; `last_ping_at` is written at most once a minute.
 */
export const agents = sqliteTable(
  "agents",
  {
    id: text("id").primaryKey(),
    poolId: text("pool_id").notNull(),
    organization: text("organization").notNull(),
    /** The agent token (`at-…`) it registered with. */
    tokenId: text("token_id").notNull(),
    name: text("name").notNull(),
    version: text("version").notNull(),
    engineName: text("engine_name").notNull(),
    engineVersion: text("engine_version").notNull(),
    ipAddress: text("ip_address"),
    status: text("status").notNull(),
    lastPingAt: integer("last_ping_at").notNull(),
    ...timestamps(),
  },
  (t) => [index("agents_pool").on(t.poolId, t.lastPingAt), index("agents_token").on(t.tokenId)],
);

/**
 * N18: one job per phase of an agent run. `status`: `queued`, `running`, `finished`,
 * `errored`, `canceled`. The job token and the registry token are stored only as keyed
 * hashes; the artifacts a plan job uploaded are `run_data_objects` rows.
 */
export const agentJobs = sqliteTable(
  "agent_jobs",
  {
    id: text("id").primaryKey(),
    runId: text("run_id").notNull(),
    phase: text("phase", { enum: ["plan", "apply"] }).notNull(),
    poolId: text("pool_id").notNull(),
    workspaceId: text("workspace_id").notNull(),
    organization: text("organization").notNull(),
    /** The workspace's `engine-version` (an exact version or a constraint). */
    engineConstraint: text("engine_constraint").notNull(),
    status: text("status", { enum: ["queued", "running", "finished", "errored", "canceled"] }).notNull(),
    agentId: text("agent_id"),
    tokenHash: text("token_hash"),
    registryTokenHash: text("registry_token_hash"),
    startedAt: integer("started_at"),
    expiresAt: integer("expires_at"),
    finishedAt: integer("finished_at"),
    message: text("message"),
    /** Bytes of log stored for this phase (N18 offsets). */
    logLength: integer("log_length").notNull().default(0),
    planFileObjectId: text("plan_file_object_id"),
    jsonPlanObjectId: text("json_plan_object_id"),
    lockFileObjectId: text("lock_file_object_id"),
    ...timestamps(),
    /** N19a: when the job was force-canceled; its token then serves only the state upload (migration `0052`). */
    forceCanceledAt: integer("force_canceled_at"),
  },
  (t) => [
    uniqueIndex("agent_jobs_run_phase").on(t.runId, t.phase),
    uniqueIndex("agent_jobs_token").on(t.tokenHash),
    uniqueIndex("agent_jobs_registry_token").on(t.registryTokenHash),
    index("agent_jobs_pool_status").on(t.poolId, t.status),
    index("agent_jobs_agent").on(t.agentId, t.status),
  ],
);

/**
 * N20 "At rest": every state, plan file, lock file, JSON plan and log chunk in R2 (binding
 * RUN_DATA) is encrypted in 64 KiB AES-256-GCM segments under its own random data key,
 * stored here wrapped under KEYWAY_KEK with the context `data-key:<id>` (B11 rewraps it).
 */
export const runDataObjects = sqliteTable("run_data_objects", {
  id: text("id").primaryKey(),
  kind: text("kind", { enum: ["state", "plan-file", "json-plan", "lock-file", "log"] }).notNull(),
  r2Key: text("r2_key").notNull(),
  dataKeyEncrypted: text("data_key_encrypted").notNull(),
  /** Plaintext size in bytes. */
  size: integer("size").notNull(),
  createdAt: integer("created_at").notNull(),
});

/** N18: the log of a job as chunks at byte offsets, each its own encrypted object. */
export const agentJobLogChunks = sqliteTable(
  "agent_job_log_chunks",
  {
    jobId: text("job_id").notNull(),
    offset: integer("offset").notNull(),
    length: integer("length").notNull(),
    objectId: text("object_id").notNull(),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.offset] })],
);
