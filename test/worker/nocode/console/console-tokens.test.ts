/**
 * Personal tokens in the console (N16) against the Worker with its real bindings: the
 * `return` path of sign-in (followed only for a same-origin path under /app/, across the
 * spellings open redirects are made of), `/app/settings/tokens` (list, create shown once
 * with `no-store`, revoke; only the user's own tokens; a team session told to sign in as
 * a user), and the `terraform login` wording. The browser flow is in
 * test/interop/console/console-tokens-browser.test.ts; the SSO rules are unit-tested in
 * test/unit/nocode/console/tokens.test.ts.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { ConsoleBrowser, REFUSED_RETURNS } from "../../../helpers/console-browser";
import {
  type BootstrappedOrg,
  bootstrapOrg,
  createTeam,
  createTeamToken,
  createUser,
  tfe,
} from "../../../helpers/nocode";

const TOKENS = "/app/settings/tokens";
const TERRAFORM_LOGIN = `${TOKENS}?source=terraform-login`;

let org: BootstrappedOrg;
beforeAll(async () => {
  org = await bootstrapOrg();
});

/** Sign in through the form of `/app/~/sign-in?return=<raw>`; the Location sign-in answers. */
async function signInReturningTo(raw: string, token: string): Promise<string | null> {
  const b = new ConsoleBrowser();
  const form = await b.get(`/app/~/sign-in?return=${encodeURIComponent(raw)}`);
  expect(form.status).toBe(200);
  const res = await b.request("POST", ConsoleBrowser.formAction(form.text), {
    csrf: ConsoleBrowser.csrf(form.text),
    token,
  });
  expect(res.status, raw).toBe(303);
  return res.headers.get("location");
}

describe("the return path after sign-in (N16)", () => {
  it("follows a same-origin path under /app/, query included", async () => {
    for (const path of [
      "/app",
      "/app/",
      `/app/${org.org}`,
      `/app/${org.org}/workspaces/web-1`,
      TOKENS,
      TERRAFORM_LOGIN,
      `${TOKENS}?page=2&source=terraform-login`,
      "/app/a.b~c_d-e/f?x=%41+b",
    ]) {
      expect(await signInReturningTo(path, org.ownerToken), path).toBe(path);
    }
  });

  it("ignores anything else, in every spelling, and lands on /app", async () => {
    for (const raw of REFUSED_RETURNS)
      expect(await signInReturningTo(raw, org.ownerToken), JSON.stringify(raw)).toBe("/app");
  });

  it("sends a signed-out person to sign-in with the page they asked for, query included", async () => {
    const b = new ConsoleBrowser();
    const page = await b.get(TERRAFORM_LOGIN);
    expect(page.status).toBe(303);
    const location = page.headers.get("location")!;
    expect(location).toBe(`/app/~/sign-in?return=${encodeURIComponent(TERRAFORM_LOGIN)}`);
    // The sign-in page itself tells a `terraform login` user what comes next.
    const form = await b.get(location);
    expect(form.text).toContain("<strong>terraform login</strong> is waiting in your terminal");
    const res = await b.request("POST", ConsoleBrowser.formAction(form.text), {
      csrf: ConsoleBrowser.csrf(form.text),
      token: org.ownerToken,
    });
    expect(res.headers.get("location")).toBe(TERRAFORM_LOGIN);
    // Already signed in: the sign-in page forwards to the return path at once.
    const again = await b.get(location);
    expect(again.status).toBe(303);
    expect(again.headers.get("location")).toBe(TERRAFORM_LOGIN);
    // Sign-out can name where the next sign-in returns to; anything else is dropped.
    const out = await b.request("POST", `/app/~/sign-out?return=${encodeURIComponent(TOKENS)}`, {
      csrf: await b.csrf(),
    });
    expect(out.headers.get("location")).toBe(`/app/~/sign-in?return=${encodeURIComponent(TOKENS)}`);
    await b.signIn(org.ownerToken);
    const evil = await b.request("POST", "/app/~/sign-out?return=%2F%2Fevil.example", { csrf: await b.csrf() });
    expect(evil.headers.get("location")).toBe("/app/~/sign-in");
  });
});

/** The secret on the created-token page. */
function shownToken(text: string): string {
  const m = /id="new-token" class="secret" type="text" readonly value="([^"]+)"/.exec(text);
  if (!m) throw new Error("no token on the page");
  return m[1]!;
}

describe("/app/settings/tokens (N16)", () => {
  it("lists, creates (shown once, no-store) and revokes the user's own tokens", async () => {
    const user = await createUser();
    const b = new ConsoleBrowser();
    expect((await b.signIn(user.token)).status).toBe(303);

    const list = await b.get(TOKENS);
    expect(list.status).toBe(200);
    expect(list.headers.get("cache-control")).toBe("no-store");
    expect(list.text).toContain("<h1>API tokens</h1>");
    expect(list.text).not.toContain(user.token);
    // A token session may choose no expiration; 30 days is preselected.
    expect(list.text).toContain('<option value="30" selected>30 days</option>');
    expect(list.text).toContain('<option value="never">No expiration</option>');

    const before = Date.now();
    const created = await b.request("POST", TOKENS, {
      csrf: ConsoleBrowser.csrf(list.text),
      description: "  laptop  ",
      expiry: "30",
    });
    expect(created.status).toBe(200);
    expect(created.headers.get("cache-control")).toBe("no-store");
    const token = shownToken(created.text);
    expect(token).toMatch(/^[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9]{67}$/);
    expect(created.text).toContain("Copy this token now");
    expect(created.text).not.toContain("paste it into your terminal");

    // The token is the user's, works on /api/v2, and expires in 30 days.
    const account = await tfe("GET", "account/details", { token });
    expect(account.status).toBe(200);
    expect(account.json.data.id).toBe(user.id);
    const listed = await tfe("GET", `users/${user.id}/authentication-tokens`, { token });
    const row = listed.json.data.find(
      (t: { attributes: { description: string } }) => t.attributes.description === "laptop",
    );
    expect(row).toBeDefined();
    const expiredAt = Date.parse(row.attributes["expired-at"]);
    expect(expiredAt).toBeGreaterThanOrEqual(before + 30 * 86_400_000);
    expect(expiredAt).toBeLessThanOrEqual(Date.now() + 30 * 86_400_000);

    // Shown once: the list names it but never shows the secret again.
    const after = await b.get(TOKENS);
    expect(after.text).toContain("laptop");
    expect(after.text).toContain(row.id);
    expect(after.text).not.toContain(token);
    const stored = await env.DB.prepare("SELECT * FROM nocode_tokens WHERE id = ?").bind(row.id).first();
    expect(JSON.stringify(stored)).not.toContain(token);

    // No expiration, when chosen.
    const forever = await b.request("POST", TOKENS, {
      csrf: ConsoleBrowser.csrf(after.text),
      description: "ci",
      expiry: "never",
    });
    expect(forever.status).toBe(200);
    const foreverToken = shownToken(forever.text);
    const foreverRow = (await tfe("GET", `users/${user.id}/authentication-tokens`, { token })).json.data.find(
      (t: { attributes: { description: string } }) => t.attributes.description === "ci",
    );
    expect(foreverRow.attributes["expired-at"]).toBeNull();

    // Revoke: 303 back to the list with a notice; the token stops at once (N13).
    const revoked = await b.request("POST", `${TOKENS}/${row.id}/revoke`, { csrf: ConsoleBrowser.csrf(after.text) });
    expect(revoked.status).toBe(303);
    expect(revoked.headers.get("location")).toBe(`${TOKENS}?notice=revoked`);
    expect((await tfe("GET", "account/details", { token })).status).toBe(401);
    expect((await tfe("GET", "account/details", { token: foreverToken })).status).toBe(200);
    const notice = await b.get(`${TOKENS}?notice=revoked`);
    expect(notice.text).toContain("Token revoked.");
    expect(notice.text).not.toContain(row.id);
    // Revoking it again: 404.
    expect(
      (await b.request("POST", `${TOKENS}/${row.id}/revoke`, { csrf: ConsoleBrowser.csrf(notice.text) })).status,
    ).toBe(404);
  });

  it("never shows, revokes or touches another user's token (404), nor a team token", async () => {
    const alice = await createUser();
    const bob = await createUser();
    const bobToken = (
      await tfe("POST", `users/${bob.id}/authentication-tokens`, {
        token: bob.token,
        body: { data: { type: "authentication-tokens", attributes: { description: "bob's laptop" } } },
      })
    ).json.data;
    const teamId = await createTeam(org.org, {});
    await createTeamToken(teamId);
    const teamTokenId = await env.DB.prepare("SELECT id FROM nocode_tokens WHERE kind = 'team' AND subject_id = ?")
      .bind(teamId)
      .first<string>("id");

    const b = new ConsoleBrowser();
    await b.signIn(alice.token);
    const list = await b.get(TOKENS);
    expect(list.text).not.toContain("bob&#39;s laptop");
    expect(list.text).not.toContain(bobToken.id);
    for (const id of [bobToken.id, teamTokenId!, "at-doesnotexist0000", "..", "%2e%2e"]) {
      const res = await b.request("POST", `${TOKENS}/${id}/revoke`, { csrf: ConsoleBrowser.csrf(list.text) });
      expect(res.status, id).toBe(404);
    }
    expect((await tfe("GET", `authentication-tokens/${bobToken.id}`, { token: bob.token })).status).toBe(200);
    expect(
      await env.DB.prepare("SELECT count(*) AS n FROM nocode_tokens WHERE id = ?").bind(teamTokenId).first("n"),
    ).toBe(1);
  });

  it("refuses forms without the CSRF token (403) and bad input (422) and creates nothing", async () => {
    const user = await createUser();
    const b = new ConsoleBrowser();
    await b.signIn(user.token);
    const count = () =>
      env.DB.prepare("SELECT count(*) AS n FROM nocode_tokens WHERE kind = 'user' AND subject_id = ?")
        .bind(user.id)
        .first<number>("n");
    const start = await count();
    expect((await b.request("POST", TOKENS, { description: "x", expiry: "30" })).status).toBe(403);
    expect((await b.request("POST", TOKENS, { csrf: "nope", description: "x", expiry: "30" })).status).toBe(403);
    // Another site's form, even with the right CSRF token.
    const csrf = await b.csrf();
    expect(
      (await b.request("POST", TOKENS, { csrf, description: "x", expiry: "30" }, { Origin: "https://evil.example" }))
        .status,
    ).toBe(403);
    const empty = await b.request("POST", TOKENS, { csrf, description: "   ", expiry: "30" });
    expect(empty.status).toBe(422);
    expect(empty.text).toContain("Give the token a description.");
    expect(empty.text).toContain('aria-invalid="true"');
    const long = await b.request("POST", TOKENS, { csrf, description: "d".repeat(257), expiry: "7" });
    expect(long.status).toBe(422);
    expect(long.text).toContain("at most 256 characters");
    expect(long.text).toContain('<option value="7" selected>7 days</option>'); // the choice is kept
    for (const expiry of ["0", "2", "365", "-1", "30.5", "", "NEVER", "1e3"]) {
      const res = await b.request("POST", TOKENS, { csrf, description: "x", expiry });
      expect(res.status, expiry).toBe(422);
    }
    expect(await count()).toBe(start);
  });

  it("tells a team-token session to sign in as a user (403), and lets nothing through", async () => {
    const teamId = await createTeam(org.org, { "read-workspaces": true });
    const b = new ConsoleBrowser();
    expect((await b.signIn(await createTeamToken(teamId))).status).toBe(303);
    const page = await b.get(TOKENS);
    expect(page.status).toBe(403);
    expect(page.text).toContain("<h1>Sign in as a user</h1>");
    expect(page.text).toContain(`action="/app/~/sign-out?return=${encodeURIComponent(TOKENS)}"`);
    expect(page.text).not.toContain('href="/app/settings/tokens"'); // no "API tokens" link for a team
    const csrf = ConsoleBrowser.csrf(page.text);
    const before = await env.DB.prepare("SELECT count(*) AS n FROM nocode_tokens").first("n");
    expect((await b.request("POST", TOKENS, { csrf, description: "x", expiry: "30" })).status).toBe(403);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM nocode_tokens").first("n")).toBe(before);
  });

  it("with source=terraform-login: suggests the description and says to paste the token into the terminal", async () => {
    const user = await createUser();
    const b = new ConsoleBrowser();
    await b.signIn(user.token);
    const page = await b.get(TERRAFORM_LOGIN);
    expect(page.status).toBe(200);
    expect(page.text).toContain("<strong>terraform login</strong> is waiting in your terminal");
    expect(page.text).toContain('value="terraform login"');
    expect(page.text).toContain('<input type="hidden" name="source" value="terraform-login">');
    const created = await b.request("POST", TOKENS, {
      csrf: ConsoleBrowser.csrf(page.text),
      source: "terraform-login",
      description: "terraform login",
      expiry: "30",
    });
    expect(created.status).toBe(200);
    expect(created.text).toContain("Copy this token and paste it into your terminal");
    expect(created.text).toContain("<code>keyway.test</code>");
    expect((await tfe("GET", "account/details", { token: shownToken(created.text) })).status).toBe(200);
    // Any other source is ignored.
    const other = await b.get(`${TOKENS}?source=%3Cscript%3E`);
    expect(other.text).not.toContain('name="source"');
    expect(other.text).not.toContain("<script>");
  });

  it("/app/settings goes to the tokens page; a revoked session token ends the session", async () => {
    const user = await createUser();
    const b = new ConsoleBrowser();
    await b.signIn(user.token);
    const settings = await b.get("/app/settings");
    expect(settings.status).toBe(303);
    expect(settings.headers.get("location")).toBe(TOKENS);
    const sessionTokenId = (await tfe("GET", `users/${user.id}/authentication-tokens`, { token: user.token })).json
      .data[0].id;
    const list = await b.get(TOKENS);
    const res = await b.request("POST", `${TOKENS}/${sessionTokenId}/revoke`, { csrf: ConsoleBrowser.csrf(list.text) });
    expect(res.status).toBe(303);
    const next = await b.get(res.headers.get("location")!);
    expect(next.status).toBe(303);
    expect(next.headers.get("location")).toMatch(/^\/app\/~\/sign-in\?return=/);
  });
});
