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
 * src/nocode/permissions.ts, so a change of the permission model has to change this too.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { nocodeApp } from "../../../src/nocode/app";
import { clearNocodeCache } from "../../../src/nocode/cache";
import { type RouteRule, ruleOf } from "../../../src/nocode/route-rights";
import { isUnauthenticatedRoute, UNAUTHENTICATED_ROUTES } from "../../../src/nocode/unauthenticated";
import {
  ADMIN,
  bootstrapOrg,
  createOrgToken,
  createTeam,
  createTeamToken,
  createUser,
  tfe,
  uniqueName,
} from "../../helpers/nocode";
import { createRegistryModule, enableNoCode, noCodeModuleDoc } from "../../helpers/nocode-modules";
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
