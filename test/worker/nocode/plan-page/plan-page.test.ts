/**
 * The plan page of decision N8, `GET /app/:org/workspaces/:name/runs/:run_id`: opened by
 * the view token of `plan-url` or by a Bearer token able to read the workspace; refused
 * without (401 for a missing or bad credential, 404 for no right or no such run); never
 * shows a sensitive value. Its JSON form (`?format=json`) carries the same plan.
 * Expectations are written by hand from test/fixtures/terraform-upgrade.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { signViewToken } from "../../../../src/nocode/plan-page/view-token";
import { bootstrapOrg, createMember, createOrgToken, tfe } from "../../../helpers/nocode";
import { varEntry } from "../../../helpers/nocode-modules";
import {
  e5,
  e6,
  e7,
  FIRST_PASSWORD,
  getPage,
  UPGRADE_TEST_TIMEOUT,
  upgradePool,
  waitForUpgrade,
} from "../upgrade/upgrade-helpers";

const NEW_PASSWORD = "brand-new-password-42";

let pool: Awaited<ReturnType<typeof upgradePool>>;
beforeAll(async () => {
  pool = await upgradePool(10);
}, UPGRADE_TEST_TIMEOUT);

/** A pool workspace with an upgrade planned with region and db_password changed. */
async function plannedUpgrade() {
  const ctx = { ...pool, ...pool.take() };
  const res = await e5(ctx.noCodeModuleId, ctx.workspaceId, ctx.ownerToken, [
    varEntry("region", "us-east-1"),
    varEntry("db_password", NEW_PASSWORD, { sensitive: true }),
  ]);
  expect(res.status, res.text).toBe(200);
  const planUrl = res.json.data.attributes["plan-url"] as string;
  const url = new URL(planUrl);
  return {
    ...ctx,
    name: ctx.workspace.attributes.name as string,
    runId: res.json.data.id as string,
    planUrl,
    path: url.pathname,
    view: url.searchParams.get("view")!,
  };
}

/** Every keyed hash the run's configuration (and the workspace's vars) hold: none may appear on a page. */
async function sensitiveHashes(runId: string, workspaceId: string): Promise<string[]> {
  const run = await env.DB.prepare("SELECT configuration FROM runs WHERE id = ?")
    .bind(runId)
    .first<{ configuration: string }>();
  const hashes = [...run!.configuration.matchAll(/"sensitiveHash":"([0-9a-f]+)"/g)].map((m) => m[1]!);
  const vars = await env.DB.prepare(
    "SELECT sensitive_hash FROM workspace_vars WHERE workspace_id = ? AND sensitive_hash IS NOT NULL",
  )
    .bind(workspaceId)
    .all<{ sensitive_hash: string }>();
  return [...hashes, ...vars.results.map((v) => v.sensitive_hash)];
}

function expectNoSecrets(text: string, hashes: string[]) {
  expect(text).not.toContain(FIRST_PASSWORD);
  expect(text).not.toContain(NEW_PASSWORD);
  expect(hashes.length).toBeGreaterThan(0);
  for (const hash of hashes) expect(text).not.toContain(hash);
}

/** `<tr class="…">…<td class="action">ACTION</td><td><code>ADDRESS</code>REASONS</td></tr>` rows of the page. */
function rows(page: string): Record<string, { action: string; reasons: string[] }> {
  const out: Record<string, { action: string; reasons: string[] }> = {};
  for (const m of page.matchAll(/<td class="action">([^<]+)<\/td><td><code>([^<]+)<\/code>(.*?)<\/td><\/tr>/g)) {
    out[m[2]!] = { action: m[1]!, reasons: [...m[3]!.matchAll(/<li>(.*?)<\/li>/g)].map((r) => r[1]!) };
  }
  return out;
}

/** Every answer of the plan page, 200 or refusal, HTML or JSON: nothing cached, framed, sniffed or leaked through a Referer. */
function expectPageSecurityHeaders(headers: Headers): void {
  expect(headers.get("cache-control")).toBe("no-store");
  expect(headers.get("referrer-policy")).toBe("no-referrer");
  expect(headers.get("x-frame-options")).toBe("DENY");
  expect(headers.get("x-content-type-options")).toBe("nosniff");
  expect(headers.get("content-security-policy")).toBe(
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  );
  expect(headers.get("strict-transport-security")).toBeNull();
}

describe("the plan page with its view token", { timeout: UPGRADE_TEST_TIMEOUT }, () => {
  it("opens from plan-url without any other credential and shows the plan a person can review", async () => {
    const ctx = await plannedUpgrade();
    const page = await getPage(ctx.planUrl);
    expect(page.status, page.text).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expectPageSecurityHeaders(page.headers);
    const html = page.text;
    expect(html).toContain(`<title>Upgrade plan ${ctx.runId} · ${ctx.name} · ${ctx.org}</title>`);
    expect(html).toContain(`<h1>Upgrade plan for workspace ${ctx.name}</h1>`);
    expect(html).toContain(`<dt>Organization</dt><dd>${ctx.org}</dd>`);
    expect(html).toContain(`<code>private/${ctx.org}/${pool.registryModule.name}/random</code>`);
    expect(html).toContain("<dt>Version</dt><dd>1.0.0 → 1.1.0</dd>");
    expect(html).toContain("<dt>Status</dt><dd>planned</dd>");
    // v1 → v2 plus region and db_password: one added, three changed, one destroyed
    expect(html).toContain("Plan: 1 to add, 3 to change, 1 to destroy.");
    expect(rows(html)).toEqual({
      "random_uuid.added": { action: "create", reasons: [] },
      "random_id.legacy": { action: "destroy", reasons: [] },
      "random_password.db": { action: "update in-place", reasons: ["variable &quot;db_password&quot; changed"] },
      "random_pet.name": { action: "update in-place", reasons: ["variable &quot;region&quot; changed"] },
      "random_string.suffix": { action: "update in-place", reasons: ["configuration changed"] },
      "module.labels.random_integer.n": { action: "no changes", reasons: [] },
      "module.labels.random_pet.label": { action: "no changes", reasons: [] },
      "module.remote": { action: "no changes", reasons: [] },
    });
    expect(html).toContain(
      '<tr><td><code>db_password</code></td><td class="sensitive" colspan="2">(sensitive)</td></tr>',
    );
    expect(html).toContain(
      "<tr><td><code>region</code></td><td><code>&quot;eu-west-1&quot; (default)</code></td><td><code>&quot;us-east-1&quot;</code></td></tr>",
    );
    expect(html).toContain(`<a href="?view=${ctx.view}&amp;format=json">JSON</a>`);
    expectNoSecrets(html, await sensitiveHashes(ctx.runId, ctx.workspaceId));
  });

  it("?format=json gives the same plan in N7's json-output shape, without sensitive values", async () => {
    const ctx = await plannedUpgrade();
    const res = await getPage(`${ctx.planUrl}&format=json`);
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const json = JSON.parse(res.text);
    expect(json).toMatchObject({
      run_id: ctx.runId,
      kind: "upgrade",
      status: "planned",
      organization: ctx.org,
      workspace: ctx.name,
      from_version: "1.0.0",
      to_version: "1.1.0",
      summary: { add: 1, change: 3, destroy: 1 },
    });
    expect(
      Object.fromEntries(
        json.resource_changes.map((c: { address: string; change: { actions: string[] } }) => [
          c.address,
          c.change.actions,
        ]),
      ),
    ).toEqual({
      "module.labels.random_integer.n": ["no-op"],
      "module.labels.random_pet.label": ["no-op"],
      "module.remote": ["no-op"],
      "random_id.legacy": ["delete"],
      "random_password.db": ["update"],
      "random_pet.name": ["update"],
      "random_string.suffix": ["update"],
      "random_uuid.added": ["create"],
    });
    expect(json.changed_variables).toEqual([
      { name: "db_password", sensitive: true },
      {
        name: "region",
        sensitive: false,
        before: { set: true, value: "eu-west-1", is_default: true },
        after: { set: true, value: "us-east-1", is_default: false },
      },
    ]);
    expectNoSecrets(res.text, await sensitiveHashes(ctx.runId, ctx.workspaceId));
  });

  it("E6's plan-url opens the same page; after E7 and the apply the page shows the same plan, now applied", async () => {
    const ctx = await plannedUpgrade();
    const polled = await e6(ctx.noCodeModuleId, ctx.workspaceId, ctx.runId, ctx.ownerToken);
    expect((await getPage(polled.json.data.attributes["plan-url"])).status).toBe(200);
    expect((await e7(ctx.noCodeModuleId, ctx.workspaceId, ctx.runId, ctx.ownerToken)).status).toBe(200);
    await waitForUpgrade(ctx.noCodeModuleId, ctx.workspaceId, ctx.runId, ctx.ownerToken, ["applied"]);
    const page = await getPage(ctx.planUrl);
    expect(page.status).toBe(200);
    expect(page.text).toContain("<dt>Version</dt><dd>1.0.0 → 1.1.0</dd>");
    expect(page.text).toContain("<dt>Status</dt><dd>applied</dd>");
    expect(page.text).toContain("Plan: 1 to add, 3 to change, 1 to destroy.");
    expectNoSecrets(page.text, await sensitiveHashes(ctx.runId, ctx.workspaceId));
  });
});

describe("the plan page with a Bearer token (N10 read-workspaces)", { timeout: UPGRADE_TEST_TIMEOUT }, () => {
  it("opens for owners, read-workspaces members and the organization token; 404 for callers who may not read the workspace", async () => {
    const ctx = await plannedUpgrade();
    const reader = await createMember(ctx.org, { "read-workspaces": true });
    const orgToken = await createOrgToken(ctx.org);
    for (const token of [ctx.ownerToken, reader.token, orgToken]) {
      const page = await getPage(ctx.path, { Authorization: `Bearer ${token}` });
      expect(page.status, page.text).toBe(200);
      expect(page.text).toContain("Plan: 1 to add, 3 to change, 1 to destroy.");
      // with a Bearer token the JSON link carries no view token
      expect(page.text).toContain('<a href="?format=json">JSON</a>');
    }
    const modules = await createMember(ctx.org, { "manage-modules": true });
    const outsider = await bootstrapOrg();
    for (const token of [modules.token, outsider.ownerToken, env.ADMIN_TOKEN]) {
      const page = await getPage(ctx.path, { Authorization: `Bearer ${token}` });
      expect(page.status).toBe(404);
      expect(page.text).not.toContain(ctx.runId);
    }
    const json = await getPage(`${ctx.path}?format=json`, { Authorization: `Bearer ${reader.token}` });
    expect(json.status).toBe(200);
    expect(JSON.parse(json.text).run_id).toBe(ctx.runId);
  });

  it("shows any run of the workspace: the first run plans every v1 node from nothing", async () => {
    const ctx = { ...pool, ...pool.take() };
    const page = await getPage(`/app/${ctx.org}/workspaces/${ctx.workspace.attributes.name}/runs/${ctx.firstRunId}`, {
      Authorization: `Bearer ${ctx.ownerToken}`,
    });
    expect(page.status, page.text).toBe(200);
    expect(page.text).toContain(`<h1>Plan for workspace ${ctx.workspace.attributes.name}</h1>`);
    expect(page.text).toContain("<dt>Version</dt><dd>(nothing applied) → 1.0.0</dd>");
    expect(page.text).toContain("Plan: 7 to add, 0 to change, 0 to destroy.");
    expect(page.text).toContain(
      '<tr><td><code>db_password</code></td><td class="sensitive" colspan="2">(sensitive)</td></tr>',
    );
    expect(page.text).not.toContain(FIRST_PASSWORD);
  });
});

describe("the plan page refuses without a valid credential", { timeout: UPGRADE_TEST_TIMEOUT }, () => {
  it("404 (B23) for a bad, foreign or expired view token, with no-store and no-referrer, before any lookup", async () => {
    const ctx = await plannedUpgrade();
    const other = await plannedUpgrade();
    const [expiry, mac] = ctx.view.split(".");
    const expired = await signViewToken(env.KEYWAY_HASH_KEY, ctx.runId, Date.now() - 25 * 3600_000);
    const missingRun = `/app/${ctx.org}/workspaces/${ctx.name}/runs/run-AAAAAAAAAAAAAAAA`;
    for (const path of [
      `${ctx.path}?view=`,
      `${ctx.path}?view=${Number(expiry) + 60}.${mac}`,
      `${ctx.path}?view=${expiry}.${mac!.slice(0, -2)}AA`,
      `${ctx.path}?view=${other.view}`,
      `${ctx.path}?view=${expired}`,
      `${ctx.path}?view=${ctx.view}%0A`,
      `${missingRun}?view=${ctx.view}`,
    ]) {
      const page = await getPage(path);
      expect(page.status, path).toBe(404);
      expect(page.headers.get("www-authenticate")).toBeNull();
      expect(page.headers.get("cache-control")).toBe("no-store");
      expectPageSecurityHeaders(page.headers);
      expect(page.text).toContain("This plan link is invalid or has expired.");
      expect(page.text).not.toContain("random_uuid.added");
    }
    const json = await getPage(`${ctx.path}?view=${expired}&format=json`);
    expect(json.status).toBe(404);
    expect(JSON.parse(json.text)).toMatchObject({ errors: [{ status: "404", title: "not found" }] });
  });

  it("401 without any credential, or with an unknown Bearer token", async () => {
    const ctx = await plannedUpgrade();
    const cases: [string, Record<string, string>][] = [
      [ctx.path, {}],
      [ctx.path, { Authorization: "Bearer abcdefghijklmn.atlasv1.nope" }],
      [ctx.path, { Authorization: "Basic dXNlcjpwYXNz" }],
    ];
    for (const [path, headers] of cases) {
      const page = await getPage(path, headers);
      expect(page.status, path).toBe(401);
      expect(page.headers.get("www-authenticate")).toBe('Bearer realm="keyway"');
      expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expectPageSecurityHeaders(page.headers);
      expect(page.text).toContain("This plan link is invalid or has expired.");
      expect(page.text).not.toContain("random_uuid.added");
    }
    // the same answer for a run that does not exist: a 401 never tells whether the run exists
    const missing = await getPage(`/app/${ctx.org}/workspaces/${ctx.name}/runs/run-AAAAAAAAAAAAAAAA`);
    expect(missing.status).toBe(401);
    const json = await getPage(`${ctx.path}?format=json`);
    expect(json.status).toBe(401);
    expectPageSecurityHeaders(json.headers);
    expect(JSON.parse(json.text)).toMatchObject({ errors: [{ status: "401", title: "unauthorized" }] });
  });

  it("404 when a valid view token meets another organization or workspace in the path", async () => {
    const ctx = await plannedUpgrade();
    for (const path of [
      `/app/${ctx.org}/workspaces/${ctx.name}-other/runs/${ctx.runId}`,
      `/app/${ctx.org}-other/workspaces/${ctx.name}/runs/${ctx.runId}`,
    ]) {
      const page = await getPage(`${path}?view=${ctx.view}`);
      expect(page.status, path).toBe(404);
      expectPageSecurityHeaders(page.headers);
      expect(page.text).not.toContain("random_uuid.added");
    }
  });

  it("lives outside /api/v2: the API's token check does not apply, and the API does not serve the page", async () => {
    const ctx = await plannedUpgrade();
    const api = await tfe("GET", `${ctx.path}?view=${ctx.view}`, { token: null });
    expect(api.status).toBe(401);
  });
});
