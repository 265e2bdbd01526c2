/**
 * The /api/v2 authorization matrix (decisions N2a,
 * N10, N10a). Generated from Hono's route table, not a hand list: every route of the
 * no-code app must carry a `rights(rule)` annotation (src/nocode/route-rights.ts), and
 * every route × {no token, another organization's token, another organization's owner,
 * the organization token, a read-only team, ADMIN_TOKEN} is sent against one world.
 *
 * Each cell asserts the status the rule implies — 401 without a token (unless the route is
 * in UNAUTHENTICATED_ROUTES, the only exemption), 404 for a caller without the right,
 * neither for one with it — and that nothing changed (a read-back of every table). Write
 * cells carry a probe body that no handler accepts, so a permitted caller gets a 4xx
 * from validation and still changes nothing; a permitted DELETE runs for real on a
 * target made for it (and must answer 2xx).
 *
 * The expected rights of each caller are written here from the decisions, not read from
 * src/nocode/access/permissions.ts, so a change of the permission model has to change this too.
 *
 * N20's rights, which narrow inside routes (sensitive outputs, the state download, the
 * workspace's permissions) and whose permitted POSTs change things, have their own rows at
 * the end, sent as every caller kind (manage-workspaces users and teams and owners too).
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { isUnauthenticatedRoute, UNAUTHENTICATED_ROUTES } from "../../../src/nocode/access/unauthenticated";
import { nocodeApp } from "../../../src/nocode/app";
import { clearNocodeCache } from "../../../src/nocode/cache";
import { type RouteRule, ruleOf } from "../../../src/nocode/route-rights";
import { createAgentToken, createAgentWorkspace, createPool, stateWith } from "../../helpers/agents";
import {
  ADMIN,
  bootstrapOrg,
  createMember,
  createOrgToken,
  createTeam,
  createTeamToken,
  createUser,
  type TfeAnswer,
  tfe,
  uniqueName,
} from "../../helpers/nocode";
import {
  createRegistryModule,
  enableNoCode,
  type NoCodeOrg,
  noCodeModuleDoc,
  noCodeOrg,
} from "../../helpers/nocode-modules";
import { type AppliedAgentRun, appliedAgentRun, followLink, md5Hex } from "./state-versions/run-data-helpers";
import { e5, UPGRADE_TEST_TIMEOUT, upgradeReady } from "./upgrade/upgrade-helpers";

type CallerName = "none" | "otherOrgToken" | "otherOwner" | "orgToken" | "readOnlyTeam" | "admin";
const CALLERS: readonly CallerName[] = ["none", "otherOrgToken", "otherOwner", "orgToken", "readOnlyTeam", "admin"];

/** Each caller's rights in the world's organization, from N10 and N10a. */
const EXPECTED_RIGHTS: Record<CallerName, ReadonlySet<string>> = {
  none: new Set(),
  otherOrgToken: new Set(),
  otherOwner: new Set(),
  // N10: everything except E1, E2, E4–E7 and run actions; N10a: not owner.
  orgToken: new Set([
    "member",
    "read-workspaces",
    "write-vars",
    "manage-registry-modules",
    "manage-projects",
    "manage-agent-pools",
    "manage-teams",
  ]),
  // a team with read-workspaces only
  readOnlyTeam: new Set(["member", "read-workspaces", "read-upgrades"]),
  // N9, N10a: bootstrap only
  admin: new Set(["manage-teams"]),
};

/** A route of the table: method, full path, and its rule (undefined: not annotated). */
interface MatrixRoute {
  method: string;
  path: string;
  rule: RouteRule | undefined;
}

/** Every concrete route of the no-code app (middleware entries, method ALL, are not routes). */
function matrixRoutes(): MatrixRoute[] {
  const byKey = new Map<string, MatrixRoute>();
  for (const r of nocodeApp.routes) {
    if (r.method === "ALL") continue;
    const path = `/api/v2${r.path === "/" ? "" : r.path}`;
    const key = `${r.method} ${path}`;
    const entry = byKey.get(key) ?? { method: r.method, path, rule: undefined };
    entry.rule ??= ruleOf(r.handler);
    byKey.set(key, entry);
  }
  return [...byKey.values()];
}

const ROUTES = matrixRoutes();

/** The world every cell runs against, and the callers' tokens. */
interface World {
  org: string;
  tokens: Record<Exclude<CallerName, "none">, string>;
  ownerToken: string;
  params: Record<string, string>;
}
let world: World;
/** The last read-back of every table, while nothing has changed since. */
let current: string | undefined;

beforeAll(async () => {
  // A module pinned at 1.0.0, a workspace applied there, the pin moved to 1.1.0.
  const ctx = await upgradeReady();
  const other = await bootstrapOrg();
  const upgrade = await e5(ctx.noCodeModuleId, ctx.workspaceId, ctx.ownerToken);
  if (upgrade.status !== 200) throw new Error(`E5: ${upgrade.status} ${upgrade.text}`);
  const runId = upgrade.json.data.id as string;
  const plan = await tfe("GET", `runs/${runId}/plan`, { token: ctx.ownerToken });
  const ws = await tfe("GET", `workspaces/${ctx.workspaceId}`, { token: ctx.ownerToken });
  const vars = await tfe("GET", `workspaces/${ctx.workspaceId}/vars`, { token: ctx.ownerToken });
  const pool = await tfe("POST", `organizations/${ctx.org}/agent-pools`, {
    token: ctx.ownerToken,
    body: { data: { type: "agent-pools", attributes: { name: uniqueName("pool") } } },
  });
  const releases = await tfe("GET", "admin/terraform-versions");
  const user = await createUser();
  const userTokens = await tfe("GET", `users/${user.id}/authentication-tokens`, { token: user.token });
  // N15: an ended rollout of the module, so its read and its actions have a target (an
  // action on it is 409 for a caller with the right, and changes nothing).
  const rolloutId = `rollout-${uniqueName("matrix")}`;
  const now = Date.now();
  await env.DB.prepare(
    "INSERT INTO upgrade_rollouts (id, organization, no_code_module_id, target_version_id, target_version, batch_size, auto_confirm, max_failures, status, reason, current_batch, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, '1.1.0', 1, 'never', 0, 'canceled', NULL, 1, NULL, ?, ?)",
  )
    .bind(rolloutId, ctx.org, ctx.noCodeModuleId, `modver-${uniqueName("matrix")}`, now, now)
    .run();
  // N17: an agent of the pool, written directly (a registered session would write D1 on its own
  // schedule, from the pool's alarm, and change the world between cells).
  const agentId = await insertAgent(ctx.org, pool.json.data.id);
  world = {
    org: ctx.org,
    ownerToken: ctx.ownerToken,
    tokens: {
      otherOrgToken: await createOrgToken(other.org),
      otherOwner: other.ownerToken,
      orgToken: await createOrgToken(ctx.org),
      readOnlyTeam: await createTeamToken(await createTeam(ctx.org, { "read-workspaces": true })),
      admin: ADMIN,
    },
    params: {
      org: ctx.org,
      "teams:id": ctx.ownersTeamId,
      "projects:id": ctx.defaultProjectId,
      "agent-pools:id": pool.json.data.id,
      "agents:id": agentId,
      "registry-modules:id": ctx.registryModule.id,
      registry: "private",
      namespace: ctx.org,
      name: ctx.registryModule.name,
      provider: ctx.registryModule.provider,
      "no-code-modules:id": ctx.noCodeModuleId,
      version: "1.0.0",
      workspace_id: ctx.workspaceId,
      run_id: runId,
      "workspaces:id": ctx.workspaceId,
      "workspaces:name": ws.json.data.attributes.name,
      var_id: vars.json.data[0].id,
      "runs:id": runId,
      "plans:id": plan.json.data.id,
      "state-versions:id": ws.json.data.relationships["current-state-version"].data.id,
      // N20: the first output of the current state version (`pet`, not sensitive).
      "state-version-outputs:id": `wsout-${ws.json.data.relationships["current-state-version"].data.id.slice(3)}-0`,
      // N20, B23: a log link names its phase (the plan id); without a valid signature it is 404.
      "logs:id": plan.json.data.id,
      "applies:id": `apply-${plan.json.data.id.slice("plan-".length)}`,
      "users:id": user.id,
      "authentication-tokens:id": userTokens.json.data[0].id,
      "terraform-versions:id": releases.json.data[0].id,
      token: "A".repeat(43),
      "upgrade-rollouts:id": rolloutId,
      action: "pause",
    },
  };
}, UPGRADE_TEST_TIMEOUT);

/** An `exited` agent row of a pool (N17), as registration leaves one behind. */
async function insertAgent(org: string, poolId: string): Promise<string> {
  const id = `agent-${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
  const now = Date.now();
  await env.DB.prepare(
    "INSERT INTO agents (id, pool_id, organization, token_id, name, version, engine_name, engine_version, ip_address, status, last_ping_at, created_at, updated_at) VALUES (?, ?, ?, 'at-matrixmatrixmatr', 'matrix-agent', '0.1.0', 'terraform', '1.11.4', NULL, 'exited', ?, ?, ?)",
  )
    .bind(id, poolId, org, now, now, now)
    .run();
  return id;
}

/** The concrete URL of a route: each `:param` from the world, keyed by the segment before it when that is ambiguous. */
function concretePath(path: string, params: Record<string, string>): string {
  const segments = path.split("/");
  const out = segments.map((segment, i) => {
    if (!segment.startsWith(":")) return segment;
    const name = segment.slice(1);
    const value = params[`${segments[i - 1]}:${name}`] ?? params[name];
    if (value === undefined)
      throw new Error(`the matrix has no fixture for ${segment} in ${path}: add one to the world`);
    return encodeURIComponent(value);
  });
  const url = out.join("/");
  // The one route that needs a query to address anything.
  return url.endsWith("/version") ? `${url}?module_version=1.0.0` : url;
}

/** A read-back of every table (last-used-at excluded: N13 lets any authenticated request write it). */
async function snapshot(): Promise<string> {
  const tables = await env.DB.prepare(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name <> 'd1_migrations' ORDER BY name",
  ).all<{ name: string }>();
  const results = await env.DB.batch(
    tables.results.map((t) => env.DB.prepare(`SELECT * FROM "${t.name}" ORDER BY rowid`)),
  );
  return JSON.stringify(
    tables.results.map((t, i) => [
      t.name,
      (results[i]!.results as Record<string, unknown>[]).map((row) => {
        const { last_used_at: _ignored, ...rest } = row;
        return rest;
      }),
    ]),
  );
}

/** Whether `caller` may call a route with `rule` in the world's organization (the owners team being the team addressed). */
function permitted(rule: RouteRule, caller: CallerName): boolean {
  if (caller === "none") return false;
  if ("right" in rule) {
    const rights = EXPECTED_RIGHTS[caller];
    if (!rights.has(rule.right)) return false;
    // N10a: the team addressed is `owners`, which grants everything: only ADMIN_TOKEN (bootstrap) may.
    if (rule.team === "delegate") return caller === "admin";
    return true;
  }
  switch (rule.caller) {
    case "any":
    case "public":
      return true;
    case "admin":
      return caller === "admin";
    case "user":
      // the only user token among the callers is the other organization's owner (its own account)
      return caller === "otherOwner";
    case "user-self":
      // the user addressed is none of the callers
      return caller === "admin";
  }
}

/** A body no handler accepts: validation refuses it after the permission check. */
const PROBE = { data: { type: "authorization-matrix-probe", attributes: { name: "" } } };

/**
 * A permitted DELETE runs for real: on a target made for it, so the world stays whole.
 * Returns param overrides (and restores what the cell may remove).
 */
async function freshTarget(route: MatrixRoute): Promise<Record<string, string>> {
  const p = route.path;
  const owner = world.ownerToken;
  if (p.endsWith("/organizations/:org/authentication-token")) {
    // One token per organization: the new one replaces the world's (the caller may be it).
    world.tokens.orgToken = await createOrgToken(world.org);
    return {};
  }
  if (p.endsWith("/teams/:id/authentication-token")) {
    await createTeamToken(world.params["teams:id"]!);
    return {};
  }
  if (p.endsWith("/authentication-tokens/:id")) {
    const user = await createUser();
    const list = await tfe("GET", `users/${user.id}/authentication-tokens`, { token: user.token });
    return { "authentication-tokens:id": list.json.data[0].id };
  }
  if (p.endsWith("/agents/:id")) {
    return { "agents:id": await insertAgent(world.org, world.params["agent-pools:id"]!) };
  }
  if (p.endsWith("/registry-modules/:registry/:namespace/:name/:provider")) {
    const mod = await createRegistryModule(world.org, owner);
    return { name: mod.name, provider: mod.provider };
  }
  if (p.endsWith("/no-code-modules/:id")) {
    const mod = await createRegistryModule(world.org, owner);
    const enabled = await enableNoCode(world.org, owner, noCodeModuleDoc(mod.id, { enabled: false }));
    if (enabled.status !== 200) throw new Error(`E1: ${enabled.status} ${enabled.text}`);
    return { "no-code-modules:id": enabled.json.data.id };
  }
  if (p.endsWith("/vars/:var_id")) {
    const created = await tfe("POST", `workspaces/${world.params["workspaces:id"]}/vars`, {
      token: owner,
      body: {
        data: {
          type: "vars",
          attributes: { key: uniqueName("MATRIX").toUpperCase().replaceAll("-", "_"), value: "x", category: "env" },
        },
      },
    });
    if (created.status !== 201) throw new Error(`var: ${created.status} ${created.text}`);
    return { var_id: created.json.data.id };
  }
  if (p.endsWith("/terraform-versions/:id")) {
    const created = await tfe("POST", "admin/terraform-versions", {
      body: {
        data: {
          type: "terraform-versions",
          attributes: { version: `9.${Math.floor(Math.random() * 1e6)}.0`, enabled: false },
        },
      },
    });
    if (created.status !== 201) throw new Error(`release: ${created.status} ${created.text}`);
    return { "terraform-versions:id": created.json.data.id };
  }
  throw new Error(`a permitted DELETE ${p} has no fresh target in the matrix: add one`);
}

/** Methods whose permitted call is a real change even with the probe body. */
const destructive = (route: MatrixRoute) => route.method === "DELETE" && !route.path.endsWith("/relationships/users");

describe("the route table", () => {
  it("has routes, and every UNAUTHENTICATED_ROUTES entry names one of them", () => {
    expect(ROUTES.length).toBeGreaterThan(40);
    for (const entry of UNAUTHENTICATED_ROUTES) {
      expect(
        ROUTES.some((r) => r.path === entry.path && (entry.method === "*" || entry.method === r.method)),
        `${entry.method} ${entry.path}`,
      ).toBe(true);
    }
  });
});

describe("the /api/v2 authorization matrix (N2a, N10, N10a)", { timeout: UPGRADE_TEST_TIMEOUT }, () => {
  for (const route of ROUTES) {
    it(`${route.method} ${route.path}`, async () => {
      // A new route must say who may call it (src/nocode/route-rights.ts).
      expect(route.rule, `${route.method} ${route.path} has no rights(...) annotation`).toBeDefined();
      const rule = route.rule!;
      const exempt = isUnauthenticatedRoute(route.method, concretePath(route.path, world.params).split("?")[0]!);
      if ("caller" in rule && rule.caller === "public")
        expect(exempt, "a public route must be listed in UNAUTHENTICATED_ROUTES").toBe(true);
      for (const caller of CALLERS) {
        const allowed = permitted(rule, caller);
        const real = allowed && destructive(route);
        const params = real ? { ...world.params, ...(await freshTarget(route)) } : world.params;
        const token = caller === "none" ? null : world.tokens[caller];
        clearNocodeCache();
        // The read-back of the world before this cell: unchanged since the last one unless that ran for real.
        current ??= await snapshot();
        const before = current;
        const res = await tfe(route.method, concretePath(route.path, params), {
          token,
          body: route.method === "GET" || route.method === "HEAD" ? undefined : PROBE,
        });
        const cell = `${route.method} ${route.path} as ${caller}: ${res.status} ${res.text.slice(0, 200)}`;
        expect(res.status, cell).toBeLessThan(500);
        if (caller === "none" && !exempt) expect(res.status, cell).toBe(401);
        else if (!allowed) expect(res.status, cell).toBe(exempt && caller === "none" ? res.status : 404);
        else if (real) expect(res.status, cell).toBeLessThan(300);
        else if (!("caller" in rule && rule.caller === "public")) expect([401, 404], cell).not.toContain(res.status);
        if (!real) expect(await snapshot(), `${cell}: something changed`).toBe(before);
        else current = undefined;
        // The organization token revoked for real: the world needs one again.
        if (real && route.path.endsWith("/organizations/:org/authentication-token"))
          world.tokens.orgToken = await createOrgToken(world.org);
      }
    });
  }
});

/**
 * N20's rights, row by row, for every kind of caller: the rule of a route says only its base
 * right, while N20 narrows inside routes (a sensitive output, the download link, the
 * workspace's permissions), and a permitted lock, unlock, force-unlock or recovery upload
 * changes things for real. So each row here is sent as every caller, the permitted side on a
 * workspace made for that cell (its answer checked in HCP's shape), the refused side on the
 * shared one (404, nothing changed).
 */
type RunDataCaller =
  | "none"
  | "otherOrgToken"
  | "otherOwner"
  | "admin"
  | "orgToken"
  | "readTeam"
  | "readUser"
  | "manageTeam"
  | "manageUser"
  | "owner";
const RUN_DATA_CALLERS: readonly RunDataCaller[] = [
  "none",
  "otherOrgToken",
  "otherOwner",
  "admin",
  "orgToken",
  "readTeam",
  "readUser",
  "manageTeam",
  "manageUser",
  "owner",
];
/** N20's three levels: read-workspaces; manage-workspaces as a user or team (never the organization token); owners. */
type RunDataLevel = "read" | "manage" | "owner";
const LEVELS: Record<RunDataCaller, ReadonlySet<RunDataLevel>> = {
  none: new Set(),
  otherOrgToken: new Set(),
  otherOwner: new Set(),
  admin: new Set(),
  orgToken: new Set(["read"]),
  readTeam: new Set(["read"]),
  readUser: new Set(["read"]),
  manageTeam: new Set(["read", "manage"]),
  manageUser: new Set(["read", "manage"]),
  owner: new Set(["read", "manage", "owner"]),
};

describe("N20's rights for every caller (run data, state, locks, recovery)", { timeout: UPGRADE_TEST_TIMEOUT }, () => {
  let rd: NoCodeOrg;
  let poolId: string;
  let applied: AppliedAgentRun;
  let svId: string;
  const tokens = {} as Record<Exclude<RunDataCaller, "none">, string>;
  const tokenOf = (caller: RunDataCaller) => (caller === "none" ? null : tokens[caller]);
  const may = (caller: RunDataCaller, level: RunDataLevel) => LEVELS[caller].has(level);
  const refusedStatus = (caller: RunDataCaller) => (caller === "none" ? 401 : 404);

  beforeAll(async () => {
    rd = await noCodeOrg();
    poolId = await createPool(rd);
    const poolToken = (await createAgentToken(poolId, rd.ownerToken)).token;
    applied = await appliedAgentRun(rd, poolId, poolToken);
    const ws = await tfe("GET", `workspaces/${applied.workspaceId}`, { token: rd.ownerToken });
    svId = ws.json.data.relationships["current-state-version"].data.id;
    const other = await bootstrapOrg();
    Object.assign(tokens, {
      otherOrgToken: await createOrgToken(other.org),
      otherOwner: other.ownerToken,
      admin: ADMIN,
      orgToken: await createOrgToken(rd.org),
      readTeam: await createTeamToken(await createTeam(rd.org, { "read-workspaces": true })),
      readUser: (await createMember(rd.org, { "read-workspaces": true })).token,
      manageTeam: await createTeamToken(await createTeam(rd.org, { "manage-workspaces": true })),
      manageUser: (await createMember(rd.org, { "manage-workspaces": true })).token,
      owner: rd.ownerToken,
    });
  }, UPGRADE_TEST_TIMEOUT);

  /** A workspace of its own for a cell that changes things (its first run waits for an agent). */
  const freshWorkspace = async () => (await createAgentWorkspace(rd, poolId)).workspace.id as string;
  const act = (workspaceId: string, action: string, caller: RunDataCaller) =>
    tfe("POST", `workspaces/${workspaceId}/actions/${action}`, { token: tokenOf(caller), body: { reason: "matrix" } });

  /** A read row: each caller's status, and the answer's content for those permitted. */
  const reads: {
    row: string;
    level: RunDataLevel;
    path: () => string;
    status: number;
    check?: (res: TfeAnswer, caller: RunDataCaller) => Promise<void> | void;
  }[] = [
    {
      row: "GET /workspaces/:id/current-state-version (download link for manage-workspaces users and teams)",
      level: "read",
      path: () => `workspaces/${applied.workspaceId}/current-state-version`,
      status: 200,
      check: async (res, caller) => {
        const link = res.json.data.attributes["hosted-state-download-url"];
        if (!may(caller, "manage")) return expect(link, caller).toBeNull();
        const download = await followLink(link);
        expect(download.status, caller).toBe(200);
        expect(await md5Hex(new TextEncoder().encode(download.text))).toBe(res.json.data.attributes.md5);
      },
    },
    {
      row: "GET /state-versions/:id",
      level: "read",
      path: () => `state-versions/${svId}`,
      status: 200,
      check: (res, caller) => {
        expect(res.json.data.attributes.serial).toBe(1);
        expect(res.json.data.attributes["hosted-state-download-url"] !== null, caller).toBe(may(caller, "manage"));
      },
    },
    ...["state-versions/:sv/outputs", "workspaces/:ws/current-state-version-outputs"].map((template) => ({
      row: `GET /${template} (sensitive values null for everyone)`,
      level: "read" as const,
      path: () => template.replace(":sv", svId).replace(":ws", applied.workspaceId),
      status: 200,
      check: (res: TfeAnswer) => {
        const values = Object.fromEntries(
          res.json.data.map((o: { attributes: { name: string; value: unknown } }) => [
            o.attributes.name,
            o.attributes.value,
          ]),
        );
        expect(values).toEqual({ name: "pet-fluffy", secret: null, zones: ["a", "b"] });
      },
    })),
    {
      row: "GET /state-version-outputs/:id of a plain output",
      level: "read",
      path: () => `state-version-outputs/wsout-${svId.slice(3)}-0`,
      status: 200,
      check: (res) => expect(res.json.data.attributes.value).toBe("pet-fluffy"),
    },
    {
      row: "GET /state-version-outputs/:id of a sensitive output",
      level: "manage",
      path: () => `state-version-outputs/wsout-${svId.slice(3)}-1`,
      status: 200,
      check: (res) => expect(res.json.data.attributes).toMatchObject({ sensitive: true, value: "hunter2" }),
    },
    ...["plans/:plan/json-output", "runs/:run/plan/json-output"].map((template) => ({
      row: `GET /${template}`,
      level: "manage" as const,
      path: () => template.replace(":plan", applied.planId).replace(":run", applied.runId),
      status: 307,
      check: async (res: TfeAnswer) => {
        const plan = await followLink(res.headers.get("location")!);
        expect(plan.status).toBe(200);
        expect(JSON.parse(plan.text)).toEqual(applied.jsonPlan);
      },
    })),
  ];

  for (const read of reads) {
    it(read.row, async () => {
      for (const caller of RUN_DATA_CALLERS) {
        const res = await tfe("GET", read.path(), { token: tokenOf(caller) });
        const cell = `${read.row} as ${caller}: ${res.status} ${res.text.slice(0, 200)}`;
        if (!may(caller, read.level)) {
          expect(res.status, cell).toBe(refusedStatus(caller));
          continue;
        }
        expect(res.status, cell).toBe(read.status);
        await read.check?.(res, caller);
      }
    });
  }

  it("the workspace's permissions say the same (can-read-state-versions, can-read-state-outputs, locks, recovery)", async () => {
    for (const caller of RUN_DATA_CALLERS) {
      const res = await tfe("GET", `workspaces/${applied.workspaceId}`, { token: tokenOf(caller) });
      if (!may(caller, "read")) {
        expect(res.status, caller).toBe(refusedStatus(caller));
        continue;
      }
      expect(res.json.data.attributes.permissions, caller).toMatchObject({
        "can-read-state-versions": may(caller, "manage"),
        "can-read-state-outputs": true,
        "can-lock": may(caller, "manage"),
        "can-unlock": may(caller, "manage"),
        "can-force-unlock": may(caller, "owner"),
        "can-create-state-versions": may(caller, "owner"),
      });
    }
  });

  /** A refused change: 401/404 and nothing changed anywhere. */
  async function refused(caller: RunDataCaller, send: () => Promise<TfeAnswer>, row: string) {
    clearNocodeCache();
    const before = await snapshot();
    const res = await send();
    expect(res.status, `${row} as ${caller}: ${res.status} ${res.text.slice(0, 200)}`).toBe(refusedStatus(caller));
    expect(await snapshot(), `${row} as ${caller}: something changed`).toBe(before);
  }

  it("POST /workspaces/:id/actions/lock: manage-workspaces users and teams (the organization token 404)", async () => {
    const shared = await freshWorkspace();
    for (const caller of RUN_DATA_CALLERS) {
      if (!may(caller, "manage")) {
        await refused(caller, () => act(shared, "lock", caller), "lock");
        continue;
      }
      const res = await act(await freshWorkspace(), "lock", caller);
      expect(res.status, `lock as ${caller}: ${res.text}`).toBe(200);
      expect(res.json.data.attributes.locked).toBe(true);
      expect(res.json.data.relationships["locked-by"].data.type).toBe(caller === "manageTeam" ? "teams" : "users");
    }
  });

  it("POST /workspaces/:id/actions/unlock: manage-workspaces users and teams, of their own lock", async () => {
    const shared = await freshWorkspace();
    expect((await act(shared, "lock", "owner")).status).toBe(200);
    for (const caller of RUN_DATA_CALLERS) {
      if (!may(caller, "manage")) {
        await refused(caller, () => act(shared, "unlock", caller), "unlock");
        continue;
      }
      const own = await freshWorkspace();
      expect((await act(own, "lock", caller)).status).toBe(200);
      const res = await act(own, "unlock", caller);
      expect(res.status, `unlock as ${caller}: ${res.text}`).toBe(200);
      expect(res.json.data.attributes.locked).toBe(false);
    }
  });

  it("POST /workspaces/:id/actions/force-unlock: owners only (manage-workspaces 404)", async () => {
    const shared = await freshWorkspace();
    expect((await act(shared, "lock", "manageUser")).status).toBe(200);
    for (const caller of RUN_DATA_CALLERS) {
      if (!may(caller, "owner")) {
        await refused(caller, () => act(shared, "force-unlock", caller), "force-unlock");
        continue;
      }
      const res = await act(shared, "force-unlock", caller);
      expect(res.status, `force-unlock as ${caller}: ${res.text}`).toBe(200);
      expect(res.json.data.attributes.locked).toBe(false);
    }
  });

  it("POST /workspaces/:id/state-versions (recovery): owners holding the lock only", async () => {
    const shared = await freshWorkspace();
    expect((await act(shared, "lock", "owner")).status).toBe(200);
    const state = stateWith(1, "lineage-matrix", ["terraform_data.m"]);
    const bytes = new TextEncoder().encode(JSON.stringify(state));
    const body = {
      data: {
        type: "state-versions",
        attributes: {
          serial: 1,
          lineage: "lineage-matrix",
          md5: await md5Hex(bytes),
          state: btoa(JSON.stringify(state)),
        },
      },
    };
    const send = (caller: RunDataCaller) =>
      tfe("POST", `workspaces/${shared}/state-versions`, { token: tokenOf(caller), body });
    for (const caller of RUN_DATA_CALLERS) {
      if (!may(caller, "owner")) {
        await refused(caller, () => send(caller), "recovery upload");
        continue;
      }
      const res = await send(caller);
      expect(res.status, `recovery upload as ${caller}: ${res.text}`).toBe(201);
      expect(res.json.data.attributes).toMatchObject({
        serial: 1,
        lineage: "lineage-matrix",
        md5: body.data.attributes.md5,
      });
    }
    // The generic matrix's read-back is stale now.
    current = undefined;
  });
});
