/**
 * Organization single sign-on in the console (decision N16) in a real browser: Chromium
 * driven by playwright-core against the real Worker, and a real OpenID Provider on loopback
 * (panva's oidc-provider, test/support/oidc-provider.ts). The console is reached as
 * `localhost` and the provider as `127.0.0.1`, so the provider's redirect to the callback is
 * a cross-site navigation, as with a real provider. Every Keyway page shown is checked with
 * axe-core (no serious or critical violation) and for CSP violations.
 *
 * The tests run in order against one world; each sign-in uses a fresh browser context.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectCleanPage, launchChromium, recordCspViolations } from "../../support/browser";
import { type Api, tfe } from "../../support/client";
import { type RunningOidcProvider, startOidcProvider, type TestAccount } from "../../support/oidc-provider";
import { type RunningKeyway, startKeyway } from "../../support/worker";
import { createOrg, createUser, unique } from "./seed";

describe("organization single sign-on in Chromium (N16)", () => {
  let keyway: RunningKeyway;
  /** The console's origin as the browser sees it: `localhost`, another site than the provider's `127.0.0.1`. */
  let origin: string;
  let api: Api;
  let op: RunningOidcProvider;
  let browser: Browser;
  let orgA: string;
  let orgB: string;
  let ownerA: string;
  let teams: Record<"owners" | "devs" | "ops", string>;
  let alice: { id: string; username: string; token: string };
  let callbackOfAlice = "";
  let newcomerId = "";
  let aliceContext: BrowserContext;
  let alicePage: Page;
  const accounts: Record<string, TestAccount> = {};

  const patchSso = (attributes: Record<string, unknown>) =>
    tfe(api, "PATCH", `organizations/${orgA}/sso-configuration`, ownerA, {
      data: { type: "sso-configurations", attributes },
    });

  /** Team names of `userId` in organization A, sorted. */
  async function teamsOf(userId: string): Promise<string[]> {
    const list = await tfe(api, "GET", `organizations/${orgA}/teams`, ownerA);
    return (list.json.data as { attributes: { name: string }; relationships: { users: { data: { id: string }[] } } }[])
      .filter((t) => t.relationships.users.data.some((u) => u.id === userId))
      .map((t) => t.attributes.name)
      .sort();
  }

  /**
   * Sign in to `org` as provider account `account` in a fresh context: the console's sign-in
   * page, its "Sign in with …" button, the provider's login page, back to the callback.
   * Returns where the browser ended, the callback's URL and status.
   */
  async function ssoSignIn(account: string, org = orgA) {
    const context = await browser.newContext();
    const page = await context.newPage();
    const csp = recordCspViolations(page);
    let callback = "";
    let callbackStatus = 0;
    page.on("response", (res) => {
      if (res.url().includes(`/app/~/sso/${org}/callback`)) {
        callback = res.url();
        callbackStatus = res.status();
      }
    });
    await page.goto(`${origin}/app/${org}`);
    expect(new URL(page.url()).pathname).toBe("/app/~/sign-in");
    await page.getByRole("button", { name: /^Sign in with / }).click();
    await page.waitForURL((u) => u.href.startsWith(op.issuer));
    const ssoCookie = (await context.cookies()).find((c) => c.name === "keyway_sso");
    expect(ssoCookie).toMatchObject({ httpOnly: true, sameSite: "Lax", path: "/" });
    await page.locator('input[name="login"]').fill(account);
    await page.locator('input[name="password"]').fill("any");
    await page.locator('button[type="submit"]').click();
    await page.waitForURL((u) => u.href.startsWith(origin) && !u.pathname.endsWith("/start"));
    await page.waitForLoadState("load");
    // A successful callback moves on to the organization by itself.
    if (callbackStatus === 200) await page.waitForURL(`${origin}/app/${org}`);
    return { context, page, csp, callback, callbackStatus };
  }

  beforeAll(async () => {
    keyway = await startKeyway();
    origin = keyway.url.replace("127.0.0.1", "localhost");
    api = { url: keyway.url, adminToken: keyway.adminToken };
    const a = await createOrg(api);
    orgA = a.org;
    ownerA = a.owner.token;
    orgB = (await createOrg(api)).org;
    const list = await tfe(api, "GET", `organizations/${orgA}/teams`, ownerA);
    const ownersId = (list.json.data as { id: string; attributes: { name: string } }[]).find(
      (t) => t.attributes.name === "owners",
    )!.id;
    const team = async (name: string, org = orgA) => {
      const created = await tfe(api, "POST", `organizations/${org}/teams`, api.adminToken, {
        data: { type: "teams", attributes: { name, "organization-access": { "read-workspaces": true } } },
      });
      if (created.status !== 201) throw new Error(`team ${name}: ${created.status}`);
      return created.json.data.id as string;
    };
    teams = { owners: ownersId, devs: await team("devs"), ops: await team("ops") };
    const bTeam = await team("devs", orgB);
    alice = await createUser(api, unique("alice"));
    const join = async (teamId: string, username: string) => {
      const res = await tfe(api, "POST", `teams/${teamId}/relationships/users`, api.adminToken, {
        data: [{ type: "users", id: username }],
      });
      if (res.status !== 204) throw new Error(`membership: ${res.status}`);
    };
    await join(teams.devs, alice.username);
    await join(bTeam, alice.username);
    // Provider accounts: alice (her Keyway email, upper-cased: emails match case-insensitively),
    // a newcomer nobody knows, and someone whose provider never verified the email.
    accounts["alice-sub"] = { email: `${alice.username}@EXAMPLE.test`, groups: [] };
    accounts["newcomer-sub"] = { email: "new.comer+sso@corp.example", groups: ["ops", "owners"] };
    accounts["unverified-sub"] = { email: `${alice.username}@example.test`, groups: [], emailVerified: false };
    op = await startOidcProvider({
      accounts,
      redirectUris: [`${origin}/app/~/sso/${orgA}/callback`],
      autoConsent: true,
    });
    const enabled = await patchSso({
      enabled: true,
      issuer: op.issuer,
      "client-id": op.clientId,
      "client-secret": op.clientSecret,
      "groups-claim": "groups",
    });
    if (enabled.status !== 200) throw new Error(`SSO configuration: ${enabled.status} ${JSON.stringify(enabled.json)}`);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await op?.stop();
    await keyway?.stop();
  });

  it("signs an existing member in: the first page after the callback is signed in", async () => {
    const { context, page, csp, callback, callbackStatus } = await ssoSignIn("alice-sub");
    expect(callbackStatus).toBe(200);
    callbackOfAlice = callback;
    expect(new URL(page.url()).pathname).toBe(`/app/${orgA}`);
    expect(await page.locator("h1").textContent()).toBe(orgA);
    expect(await page.locator(".who").textContent()).toContain(alice.username);
    const cookies = await context.cookies();
    expect(cookies.find((c) => c.name === "keyway_sso")).toBeUndefined();
    expect(cookies.find((c) => c.name === "keyway_console")).toMatchObject({ httpOnly: true, sameSite: "Strict" });
    await expectCleanPage(page, csp, "sso-01-signed-in");
    aliceContext = context;
    alicePage = page;
  });

  it("offers single sign-on on the organization's sign-in page (axe)", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const csp = recordCspViolations(page);
    await page.goto(`${origin}/app/${orgA}`);
    expect(await page.getByRole("button", { name: /^Sign in with 127\.0\.0\.1/ }).count()).toBe(1);
    await expectCleanPage(page, csp, "sso-00-sign-in");
    // Another organization without SSO offers only the token form.
    await page.goto(`${origin}/app/${orgB}`);
    expect(await page.getByRole("button", { name: /^Sign in with / }).count()).toBe(0);
    await context.close();
  });

  it("takes `terraform login` through SSO by organization name and back to the tokens page", async () => {
    const tokensPage = "/app/settings/tokens?source=terraform-login";
    const context = await browser.newContext();
    const page = await context.newPage();
    const csp = recordCspViolations(page);
    await page.goto(`${origin}${tokensPage}`);
    expect(new URL(page.url()).pathname).toBe("/app/~/sign-in");
    // The return path names no organization: no organization's button, the form by name instead.
    expect(await page.getByRole("button", { name: /^Sign in with / }).count()).toBe(0);
    await expect.poll(() => page.locator(".notice").textContent()).toContain("terraform login is waiting");
    await expectCleanPage(page, csp, "sso-02-sign-in-by-name");
    await page.getByLabel("Organization name").fill(orgA);
    await page.getByRole("button", { name: "Continue with SSO" }).click();
    await page.waitForURL((u) => u.href.startsWith(op.issuer));
    await page.locator('input[name="login"]').fill("alice-sub");
    await page.locator('input[name="password"]').fill("any");
    await page.locator('button[type="submit"]').click();
    await page.waitForURL(`${origin}${tokensPage}`);
    expect(await page.locator("h1").textContent()).toBe("API tokens");
    expect(await page.getByRole("region", { name: "terraform login" }).textContent()).toContain(
      "paste it into the terminal",
    );
    expect(await page.getByLabel("Description").inputValue()).toBe("terraform login");
    await expectCleanPage(page, csp, "sso-03-tokens-terraform-login");
    // The sign-in is seconds old: a token can be made at once.
    await page.getByRole("button", { name: "Create API token" }).click();
    await expect.poll(() => page.locator("h1").textContent()).toBe("Token created");
    const created = await page.getByLabel("Your new API token").inputValue();
    const account = await tfe(api, "GET", "account/details", created);
    expect(account.status).toBe(200);
    expect(account.json.data.id).toBe(alice.id);
    await context.close();
  });

  it("scopes the session to its organization: organization B answers 404 although alice belongs to it", async () => {
    const res = await alicePage.goto(`${origin}/app/${orgB}`);
    expect(res?.status()).toBe(404);
    const list = await alicePage.goto(`${origin}/app`);
    expect(list?.status()).toBe(200);
    expect(await alicePage.locator("main").textContent()).toContain(orgA);
    expect(await alicePage.locator("main").textContent()).not.toContain(orgB);
    const home = await alicePage.goto(`${origin}/app/${orgA}`);
    expect(home?.status()).toBe(200);
  });

  it("lets an SSO user create a token (an expiry required), use it on /api/v2 and revoke it (N13)", async () => {
    await alicePage.goto(`${origin}/app/settings/tokens`);
    expect(await alicePage.locator("h1").textContent()).toBe("API tokens");
    // From an SSO session a token always expires: no "No expiration".
    expect(await alicePage.locator("select#expiry option").allTextContents()).toEqual([
      "1 day",
      "7 days",
      "30 days",
      "90 days",
    ]);
    expect(await alicePage.getByLabel("Expiration").inputValue()).toBe("30");
    await alicePage.getByLabel("Description").fill("sso laptop");
    await alicePage.getByRole("button", { name: "Create API token" }).click();
    await expect.poll(() => alicePage.locator("h1").textContent()).toBe("Token created");
    const created = await alicePage.getByLabel("Your new API token").inputValue();
    const account = await tfe(api, "GET", "account/details", created);
    expect(account.status).toBe(200);
    expect(account.json.data.id).toBe(alice.id);
    const tokens = await tfe(api, "GET", `users/${alice.id}/authentication-tokens`, created);
    const row = tokens.json.data.find(
      (t: { attributes: { description: string } }) => t.attributes.description === "sso laptop",
    );
    const days = (Date.parse(row.attributes["expired-at"]) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.99);
    expect(days).toBeLessThanOrEqual(30);

    await alicePage.goto(`${origin}/app/settings/tokens`);
    await alicePage.getByRole("button", { name: "Revoke sso laptop" }).click();
    const revokedAt = Date.now();
    let status = 0;
    do {
      status = (await tfe(api, "GET", "account/details", created)).status;
    } while (status === 200 && Date.now() - revokedAt < 5_000);
    expect(status).toBe(401);
    expect(Date.now() - revokedAt).toBeLessThan(1_500);
    await alicePage.waitForURL(`${origin}/app/settings/tokens?notice=revoked`);
  });

  it("refuses the callback URL replayed in another browser context, and a state used twice", async () => {
    expect(callbackOfAlice).toContain("state=");
    const replayUrl = callbackOfAlice.replace("127.0.0.1", "localhost");
    const other = await browser.newContext();
    const page = await other.newPage();
    const csp = recordCspViolations(page);
    const res = await page.goto(replayUrl);
    expect(res?.status()).toBe(400);
    expect(await page.locator("h1").textContent()).toBe("Sign-in not started in this browser");
    await expectCleanPage(page, csp, "sso-02-replay-refused");
    expect((await other.cookies()).find((c) => c.name === "keyway_console")).toBeUndefined();
    // With a cookie of its own (a sign-in started in that context), the old state is spent.
    await page.goto(`${origin}/app/${orgA}`);
    await page.getByRole("button", { name: /^Sign in with / }).click();
    await page.waitForURL((u) => u.href.startsWith(op.issuer));
    const again = await page.goto(replayUrl);
    expect(again?.status()).toBe(400);
    expect(await page.locator("h1").textContent()).toBe("Sign-in link already used");
    await other.close();
  });

  it("refuses an unknown email, then provisions it into default-team with auto-provision", async () => {
    const refused = await ssoSignIn("newcomer-sub");
    expect(refused.callbackStatus).toBe(403);
    expect(await refused.page.locator("h1").textContent()).toBe("No Keyway user for this email");
    await expectCleanPage(refused.page, refused.csp, "sso-03-unknown-refused");
    await refused.context.close();

    expect((await patchSso({ "auto-provision": true, "default-team": "devs" })).status).toBe(200);
    const admitted = await ssoSignIn("newcomer-sub");
    expect(admitted.callbackStatus).toBe(200);
    expect(await admitted.page.locator(".who").textContent()).toContain("newcomersso");
    // The provisioned user: the one member of devs besides alice, named from the email's local part.
    const tokens = await tfe(api, "GET", "users/newcomersso/authentication-tokens", api.adminToken);
    expect(tokens.status).toBe(200);
    const list = await tfe(api, "GET", `organizations/${orgA}/teams`, ownerA);
    const devs = (list.json.data as { id: string; relationships: { users: { data: { id: string }[] } } }[]).find(
      (t) => t.id === teams.devs,
    )!;
    const ids = devs.relationships.users.data.map((u) => u.id).filter((id) => id !== alice.id);
    expect(ids).toHaveLength(1);
    newcomerId = ids[0]!;
    expect(await teamsOf(newcomerId)).toEqual(["devs"]);
    await admitted.context.close();
  });

  it("refuses an email the provider did not verify", async () => {
    const { context, page, csp, callbackStatus } = await ssoSignIn("unverified-sub");
    expect(callbackStatus).toBe(403);
    expect(await page.locator("h1").textContent()).toBe("Email address not verified");
    await expectCleanPage(page, csp, "sso-04-unverified-refused");
    await context.close();
  });

  it("team-sync adds and removes memberships by the groups claim and leaves owners alone", async () => {
    expect((await patchSso({ "team-sync": true })).status).toBe(200);
    // alice: an owner and in devs; her provider groups say ops only.
    const join = await tfe(api, "POST", `teams/${teams.owners}/relationships/users`, api.adminToken, {
      data: [{ type: "users", id: alice.username }],
    });
    expect(join.status).toBe(204);
    accounts["alice-sub"]!.groups = ["ops", "not-a-team"];
    const first = await ssoSignIn("alice-sub");
    expect(first.callbackStatus).toBe(200);
    expect(await teamsOf(alice.id)).toEqual(["ops", "owners"]);
    await first.context.close();
    // The newcomer's groups name owners: sign-in never adds anyone to owners.
    const second = await ssoSignIn("newcomer-sub");
    expect(second.callbackStatus).toBe(200);
    expect(await teamsOf(newcomerId)).toEqual(["ops"]);
    await second.context.close();
    // N16's bounds: more than 1,000 values, or one over 256 characters, refuse the sign-in and change nothing.
    for (const groups of [Array.from({ length: 1001 }, (_, i) => `g${i}`), ["devs", "x".repeat(257)]]) {
      accounts["alice-sub"]!.groups = groups;
      const crowded = await ssoSignIn("alice-sub");
      expect(crowded.callbackStatus).toBe(403);
      expect(await crowded.page.locator("h1").textContent()).toBe("Sign-in refused");
      expect(await teamsOf(alice.id)).toEqual(["ops", "owners"]);
      await crowded.context.close();
    }
    // Groups naming no team leave alice in owners only, which still makes her a member.
    accounts["alice-sub"]!.groups = [];
    const third = await ssoSignIn("alice-sub");
    expect(third.callbackStatus).toBe(200);
    expect(await teamsOf(alice.id)).toEqual(["owners"]);
    await third.context.close();
  });

  it("ends open sessions when the issuer changes, and sign-out ends a session", async () => {
    const open = await ssoSignIn("alice-sub");
    expect(open.callbackStatus).toBe(200);
    // The same provider, its issuer written with a trailing slash: another issuer value.
    expect((await patchSso({ issuer: `${op.issuer}/` })).status).toBe(200);
    await open.page.goto(`${origin}/app/${orgA}`);
    expect(new URL(open.page.url()).pathname).toBe("/app/~/sign-in");
    await open.context.close();

    const again = await ssoSignIn("alice-sub");
    expect(again.callbackStatus).toBe(200);
    await again.page.getByRole("button", { name: "Sign out" }).click();
    await again.page.waitForURL(`${origin}/app/~/sign-in`);
    await again.page.goto(`${origin}/app/${orgA}`);
    expect(new URL(again.page.url()).pathname).toBe("/app/~/sign-in");
    await again.context.close();
    await aliceContext.close();
  });
});
