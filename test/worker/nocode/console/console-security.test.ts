/**
 * The console's security rules (N14) against the Worker with its real bindings: sessions
 * stored only as HMAC and bound to their token (replacing, i.e. revoking, the token ends
 * the session; so does expiry after 12 h and sign-out), cookie attributes off loopback,
 * CSRF on every state-changing route (refused without, nothing changes), the CSP, N10's
 * 404s, the plan page opened by the session, and no sensitive value on any page.
 * The browser flows themselves are in test/interop/console/console-browser.test.ts.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { ConsoleBrowser, parseSetCookie } from "../../../helpers/console-browser";
import { bootstrapOrg, createMember, createOrgToken, createTeam, createTeamToken, tfe } from "../../../helpers/nocode";
import { waitForRun } from "../../../helpers/nocode-modules";
import { workerRequest } from "../../../helpers/worker-request";
import { FIRST_PASSWORD, UPGRADE_TEST_TIMEOUT, upgradePool } from "../upgrade/upgrade-helpers";

let pool: Awaited<ReturnType<typeof upgradePool>>;
beforeAll(async () => {
  pool = await upgradePool(4);
}, UPGRADE_TEST_TIMEOUT);

describe("console sessions", { timeout: UPGRADE_TEST_TIMEOUT }, () => {
  it("sign in sets a Secure, HttpOnly, SameSite=Strict __Host- cookie stored only as its HMAC", async () => {
    const b = new ConsoleBrowser();
    const res = await b.signIn(pool.ownerToken);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/app");
    const set = res.headers.getSetCookie().find((c) => c.startsWith("__Host-keyway_console="))!;
    expect(parseSetCookie(set).attributes).toEqual([
      "HttpOnly",
      "Max-Age=43200",
      "Path=/",
      "SameSite=Strict",
      "Secure",
    ]);
    // The sign-in form's pre-session cookie is cleared with the same attributes.
    expect(res.headers.getSetCookie().map(parseSetCookie)).toContainEqual({
      name: "__Host-keyway_console_sign_in",
      value: "",
      attributes: ["HttpOnly", "Max-Age=0", "Path=/", "SameSite=Strict", "Secure"],
    });
    const id = b.cookies.get("__Host-keyway_console")!;
    const rows = await env.DB.prepare("SELECT * FROM console_sessions").all<Record<string, unknown>>();
    const dump = JSON.stringify(rows.results);
    expect(dump).not.toContain(id);
    expect(dump).not.toContain(pool.ownerToken);
    const page = await b.get("/app");
    expect(page.status).toBe(200);
    expect(page.text).toContain(pool.org);
    expect(page.headers.get("content-security-policy")).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    );
    expect(page.headers.get("referrer-policy")).toBe("same-origin");
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    expect(page.headers.get("cache-control")).toBe("no-store");
    expect(page.headers.get("strict-transport-security")).toBeNull();
    const unknown = await b.get("/app/~/no-such-page");
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("x-frame-options")).toBe("DENY"); // refusals too
    expect(page.text).not.toMatch(/<script(?![^>]*\ssrc=)/); // no inline script
    expect(page.text).not.toMatch(/<style|\sstyle="/); // no inline style
    // The catalog: the pinned version's facts, computed in D1 from the stored summary.
    const org = await b.get(`/app/${pool.org}`);
    expect(org.text).toContain("<dt>Version</dt><dd>1.1.0</dd>");
    expect(org.text).toContain("<dt>Providers</dt><dd>hashicorp/random</dd>");
    expect(org.text).toContain("<dt>Resources</dt><dd>4</dd>");
    expect(org.text).toContain("Provisions 4 resources with hashicorp/random; 4 settings to choose.");
  });

  // `next` is the earlier name of `return` (N16), still read; console-tokens.test.ts covers `return`.
  it("returns to the page that asked for sign-in, and never to another site", async () => {
    for (const [next, expected] of [
      [`/app/${pool.org}`, `/app/${pool.org}`],
      ["//evil.example/app", "/app"],
      ["https://evil.example/", "/app"],
      ["/app/~/sign-out", "/app"],
    ]) {
      const b = new ConsoleBrowser();
      const form = await b.get(`/app/~/sign-in?next=${encodeURIComponent(next!)}`);
      const action = ConsoleBrowser.formAction(form.text);
      const res = await b.request("POST", action, { csrf: ConsoleBrowser.csrf(form.text), token: pool.ownerToken });
      expect(res.headers.get("location"), next).toBe(expected);
    }
  });

  it("refuses sign-in without the form's CSRF token, with the organization token and with the admin token", async () => {
    const b = new ConsoleBrowser();
    await b.get("/app/~/sign-in");
    const forged = await b.request("POST", "/app/~/sign-in", { token: pool.ownerToken });
    expect(forged.status).toBe(403);
    expect(forged.headers.getSetCookie().some((c) => c.includes("keyway_console="))).toBe(false);
    const orgToken = await createOrgToken(pool.org);
    expect((await b.signIn(orgToken)).status).toBe(401);
    expect((await b.signIn(env.ADMIN_TOKEN)).status).toBe(401);
    expect((await b.signIn("nope")).status).toBe(401);
    expect(b.cookies.has("__Host-keyway_console")).toBe(false);
  });

  it("B19: a token with whitespace, control or non-ASCII characters is 'not a valid token', never a 5xx", async () => {
    const b = new ConsoleBrowser();
    for (const token of [
      `${pool.ownerToken.slice(0, 10)}\n${pool.ownerToken.slice(10)}`,
      "abc def",
      "abc\tdef",
      "abc\r\ndef",
      "abc\u0000def",
      "abc\u007fdef",
      "t\u00e9st.atlasv1.x",
      "a\u2028b",
      "x".repeat(513),
      "",
    ]) {
      const res = await b.signIn(token);
      expect(res.status, JSON.stringify(token)).toBe(401);
      expect(res.text).toContain("not a valid token");
      expect(b.cookies.has("__Host-keyway_console")).toBe(false);
    }
    // Surrounding whitespace (a pasted token with its line break) is still the token.
    expect((await b.signIn(`  ${pool.ownerToken}\n`)).status).toBe(303);
  });

  it("sends a person without a session to sign in, and refuses their POSTs", async () => {
    const b = new ConsoleBrowser();
    const page = await b.get(`/app/${pool.org}`);
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toBe(`/app/~/sign-in?return=${encodeURIComponent(`/app/${pool.org}`)}`);
    const post = await b.request("POST", `/app/${pool.org}/modules/${pool.noCodeModuleId}/provision`, { name: "x" });
    expect(post.status).toBe(401);
  });

  it("ends the session when its team token is replaced, expires or is signed out", async () => {
    const teamName = `console-team-${crypto.randomUUID().slice(0, 8)}`;
    const teamId = await createTeam(pool.org, { "read-workspaces": true }, { name: teamName });
    const b = new ConsoleBrowser();
    expect((await b.signIn(await createTeamToken(teamId))).status).toBe(303);
    const signedIn = await b.get(`/app/${pool.org}`);
    expect(signedIn.status).toBe(200);
    // The header names a team session by its team (read from D1) and organization.
    expect(signedIn.text).toContain(`Signed in as <strong>team ${teamName} of ${pool.org}</strong>`);
    await createTeamToken(teamId); // a new team token replaces (revokes) the old one
    expect((await b.get(`/app/${pool.org}`)).status).toBe(303);
    expect(
      await env.DB.prepare(
        "SELECT count(*) AS n FROM console_sessions WHERE token_hash NOT IN (SELECT hash FROM nocode_tokens)",
      ).first("n"),
    ).toBe(0);

    const c = new ConsoleBrowser();
    await c.signIn(pool.ownerToken);
    expect((await c.get("/app")).status).toBe(200);
    await env.DB.prepare("UPDATE console_sessions SET expires_at = ?")
      .bind(Date.now() - 1)
      .run();
    expect((await c.get("/app")).status).toBe(303);

    const d = new ConsoleBrowser();
    await d.signIn(pool.ownerToken);
    const id = d.cookies.get("__Host-keyway_console")!;
    const signOut = await d.request("POST", "/app/~/sign-out", { csrf: await d.csrf() });
    expect(signOut.status).toBe(303);
    expect(signOut.headers.getSetCookie().map(parseSetCookie)).toEqual([
      {
        name: "__Host-keyway_console",
        value: "",
        attributes: ["HttpOnly", "Max-Age=0", "Path=/", "SameSite=Strict", "Secure"],
      },
    ]);
    d.cookies.set("__Host-keyway_console", id); // replaying the old cookie opens nothing
    expect((await d.get("/app")).status).toBe(303);
  });
});

describe("console cookies on loopback", () => {
  it("drop `Secure` and the `__Host-` prefix (the browser talks plain HTTP there), and keep the rest", async () => {
    const res = await workerRequest("http://127.0.0.1/app/~/sign-in", { redirect: "manual" });
    expect(res.status).toBe(200);
    expect(res.headers.getSetCookie().map(parseSetCookie)).toEqual([
      {
        name: "keyway_console_sign_in",
        value: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        attributes: ["HttpOnly", "Max-Age=3600", "Path=/", "SameSite=Strict"],
      },
    ]);
  });
});

describe("console forms and pages", { timeout: UPGRADE_TEST_TIMEOUT }, () => {
  it("refuses every state-changing form without the CSRF token (403) and changes nothing", async () => {
    const { workspace, firstRunId } = pool.take();
    const name = workspace.attributes.name as string;
    const b = new ConsoleBrowser();
    await b.signIn(pool.ownerToken);
    const good = await b.csrf();
    const posts = [
      `/app/${pool.org}/modules/${pool.noCodeModuleId}/provision`,
      `/app/${pool.org}/workspaces/${name}/upgrade`,
      `/app/${pool.org}/workspaces/${name}/upgrade/${firstRunId}/confirm`,
      `/app/${pool.org}/workspaces/${name}/runs/${firstRunId}/actions/apply`,
      `/app/${pool.org}/workspaces/${name}/runs/${firstRunId}/actions/discard`,
      `/app/${pool.org}/workspaces/${name}/runs/${firstRunId}/actions/cancel`,
      "/app/~/sign-out",
    ];
    const runsBefore = await env.DB.prepare("SELECT count(*) AS n FROM runs").first("n");
    for (const path of posts) {
      expect((await b.request("POST", path, { name: "forged" })).status, path).toBe(403);
      expect((await b.request("POST", path, { name: "forged", csrf: "0".repeat(64) })).status, path).toBe(403);
      // The right token from another site (a cross-origin Origin) is refused too.
      expect((await b.request("POST", path, { csrf: good }, { Origin: "https://evil.example" })).status, path).toBe(
        403,
      );
    }
    expect(await env.DB.prepare("SELECT count(*) AS n FROM runs").first("n")).toBe(runsBefore);
    expect((await tfe("GET", `organizations/${pool.org}/workspaces/forged`, { token: pool.ownerToken })).status).toBe(
      404,
    );
    expect((await b.get("/app")).status).toBe(200); // sign-out without CSRF did not sign out
  });

  it("answers 404 for what N10 hides: another organization, a module page without manage-workspaces", async () => {
    const other = await bootstrapOrg();
    const reader = await createMember(pool.org, { "read-workspaces": true });
    const b = new ConsoleBrowser();
    await b.signIn(reader.token);
    const { workspace } = pool.take();
    const name = workspace.attributes.name as string;
    expect((await b.get(`/app/${pool.org}/workspaces/${name}`)).status).toBe(200);
    expect((await b.get(`/app/${other.org}`)).status).toBe(404);
    expect((await b.get(`/app/${other.org}/workspaces/${name}`)).status).toBe(404);
    expect((await b.get(`/app/${pool.org}/modules/${pool.noCodeModuleId}`)).status).toBe(404);
    expect((await b.get(`/app/${pool.org}/modules/${pool.noCodeModuleId}/provision`)).status).toBe(404);
    const csrf = await b.csrf();
    expect((await b.request("POST", `/app/${pool.org}/workspaces/${name}/upgrade`, { csrf })).status).toBe(404);
    expect((await b.get("/app/nope/workspaces/x")).status).toBe(404);
  });

  it("opens the plan page with the session, and never renders a sensitive value", async () => {
    const { workspace, firstRunId } = pool.take();
    const name = workspace.attributes.name as string;
    const b = new ConsoleBrowser();
    await b.signIn(pool.ownerToken);
    const plan = await b.get(`/app/${pool.org}/workspaces/${name}/runs/${firstRunId}`);
    expect(plan.status).toBe(200);
    expect(plan.text).toContain(`Plan for workspace ${name}`);
    const ws = await b.get(`/app/${pool.org}/workspaces/${name}`);
    expect(ws.status).toBe(200);
    expect(ws.text).toContain("Upgrade available");
    for (const page of [plan.text, ws.text]) expect(page).not.toContain(FIRST_PASSWORD);

    // The banner's E5 and the review page; the review shows no secret either.
    const planned = await b.request("POST", `/app/${pool.org}/workspaces/${name}/upgrade`, {
      csrf: ConsoleBrowser.csrf(ws.text),
    });
    expect(planned.status).toBe(303);
    const review = await b.get(planned.headers.get("location")!);
    expect(review.status).toBe(200);
    expect(review.text).toContain("Plan: 1 to add, 1 to change, 1 to destroy.");
    expect(review.text).not.toContain(FIRST_PASSWORD);
  });

  it("shows E4's refusals beside their fields, and never echoes a sensitive value", async () => {
    const b = new ConsoleBrowser();
    await b.signIn(pool.ownerToken);
    const form = await b.get(`/app/${pool.org}/modules/${pool.noCodeModuleId}/provision`);
    expect(form.status).toBe(200);
    const csrf = ConsoleBrowser.csrf(form.text);
    const taken = pool.take().workspace.attributes.name as string;
    const res = await b.request("POST", `/app/${pool.org}/modules/${pool.noCodeModuleId}/provision`, {
      csrf,
      name: taken,
      "var.db_password": "a-secret-typed-in",
    });
    expect(res.status).toBe(422);
    expect(res.text).toMatch(/id="name-error">A workspace with this name already exists/);
    expect(res.text).not.toContain("a-secret-typed-in");
  });

  it("provisions through E4 without auto-apply, then applies one planned run and discards another", async () => {
    const b = new ConsoleBrowser();
    await b.signIn(pool.ownerToken);
    const provision = async (name: string) => {
      const form = await b.get(`/app/${pool.org}/modules/${pool.noCodeModuleId}/provision`);
      const res = await b.request("POST", `/app/${pool.org}/modules/${pool.noCodeModuleId}/provision`, {
        csrf: ConsoleBrowser.csrf(form.text),
        name,
        "var.region": "us-east-1",
        "var.db_password": "typed-secret-1",
      });
      expect(res.status, res.text).toBe(303);
      expect(res.headers.get("location")).toBe(`/app/${pool.org}/workspaces/${name}?notice=created`);
      const ws = await tfe("GET", `organizations/${pool.org}/workspaces/${name}`, { token: pool.ownerToken });
      const runId = ws.json.data.relationships["latest-run"].data.id as string;
      await waitForRun(runId, pool.ownerToken, ["planned"]);
      return runId;
    };
    const applyName = `console-apply-${Date.now()}`;
    const discardName = `console-discard-${Date.now()}`;
    const applyRun = await provision(applyName);
    const discardRun = await provision(discardName);
    const vars = await tfe("GET", `organizations/${pool.org}/workspaces/${applyName}`, { token: pool.ownerToken });
    expect(vars.json.data.attributes["auto-apply"]).toBe(false);

    const page = await b.get(`/app/${pool.org}/workspaces/${applyName}`);
    expect(page.text).toContain("Sensitive (hidden)");
    expect(page.text).not.toContain("typed-secret-1");
    const csrf = ConsoleBrowser.csrf(page.text);
    expect(
      (await b.request("POST", `/app/${pool.org}/workspaces/${applyName}/runs/${applyRun}/actions/apply`, { csrf }))
        .status,
    ).toBe(303);
    await waitForRun(applyRun, pool.ownerToken, ["applied"]);
    expect(
      (
        await b.request("POST", `/app/${pool.org}/workspaces/${discardName}/runs/${discardRun}/actions/discard`, {
          csrf,
        })
      ).status,
    ).toBe(303);
    await waitForRun(discardRun, pool.ownerToken, ["discarded"]);
    // A run of another workspace through this workspace's path: 404.
    expect(
      (await b.request("POST", `/app/${pool.org}/workspaces/${applyName}/runs/${discardRun}/actions/apply`, { csrf }))
        .status,
    ).toBe(404);
    // Applying again: 409, said in words.
    const again = await b.request("POST", `/app/${pool.org}/workspaces/${applyName}/runs/${applyRun}/actions/apply`, {
      csrf,
    });
    expect(again.status).toBe(409);
    expect(again.text).toContain("not waiting for confirmation");
  });
});
