/**
 * Personal tokens in the console (N16) in a real browser: Debian's Chromium driven by
 * playwright-core against the real Worker (wrangler's unstable_startWorker on 127.0.0.1,
 * real local D1). `terraform login` opens `/app/settings/tokens?source=terraform-login`;
 * the person signs in, lands back there, creates a token (shown once, with the terminal
 * wording), uses it on /api/v2, revokes it, and it stops working within N13's second.
 * Every new page is checked with axe-core (no serious or critical violation) and for CSP
 * violations; screenshots go to .tmp/screenshots/.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectCleanPage, launchChromium, openPage, screenshot } from "../../support/browser";
import { type Api, tfe } from "../../support/client";
import { type RunningKeyway, startKeyway } from "../../support/worker";
import { createOrg, unique } from "./seed";

const TOKENS = "/app/settings/tokens";

describe("personal tokens in Chromium (N16)", () => {
  let keyway: RunningKeyway;
  let api: Api;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let csp: string[];
  let org: string;
  let ownerToken: string;
  let ownerId: string;
  let created: string;

  const checkPage = (name: string) => expectCleanPage(page, csp, name);

  beforeAll(async () => {
    keyway = await startKeyway();
    api = { url: keyway.url, adminToken: keyway.adminToken };
    const a = await createOrg(api);
    org = a.org;
    ownerToken = a.owner.token;
    ownerId = a.owner.id;
    browser = await launchChromium();
    ({ context, page, csp } = await openPage(browser));
  });

  afterAll(async () => {
    await browser?.close();
    await keyway?.stop();
  });

  it("terraform login's page sends a signed-out person to sign in and back", async () => {
    await page.goto(`${keyway.url}${TOKENS}?source=terraform-login`);
    expect(new URL(page.url()).pathname).toBe("/app/~/sign-in");
    expect(new URL(page.url()).searchParams.get("return")).toBe(`${TOKENS}?source=terraform-login`);
    await expect.poll(() => page.locator(".notice").textContent()).toContain("terraform login is waiting");
    await checkPage("t01-sign-in-terraform-login");

    await page.getByLabel("API token").fill(ownerToken);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${keyway.url}${TOKENS}?source=terraform-login`);
    expect(await page.locator("h1").textContent()).toBe("API tokens");
    expect(await page.getByRole("region", { name: "terraform login" }).textContent()).toContain(
      "paste it into the terminal",
    );
    // The description is suggested; the expiration defaults to 30 days, "never" is offered to a token session.
    expect(await page.getByLabel("Description").inputValue()).toBe("terraform login");
    expect(await page.getByLabel("Expiration").inputValue()).toBe("30");
    expect(await page.locator("select#expiry option").allTextContents()).toEqual([
      "1 day",
      "7 days",
      "30 days",
      "90 days",
      "No expiration",
    ]);
    await checkPage("t02-tokens");
  });

  it("shows a refused description beside its field", async () => {
    await page.getByLabel("Description").fill("   ");
    await page.getByRole("button", { name: "Create API token" }).click();
    await expect.poll(() => page.locator("#description-error").textContent()).toContain("Give the token a description");
    expect(await page.getByLabel("Description").getAttribute("aria-invalid")).toBe("true");
    await checkPage("t03-tokens-refused");
  });

  it("creates a token, shown once with the terminal wording on a page the browser may not store", async () => {
    await page.getByLabel("Description").fill("laptop terraform login");
    await page.getByLabel("Expiration").selectOption("7");
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname === TOKENS),
      page.getByRole("button", { name: "Create API token" }).click(),
    ]);
    expect(response.status()).toBe(200);
    expect(response.headers()["cache-control"]).toBe("no-store");
    await expect.poll(() => page.locator("h1").textContent()).toBe("Token created");
    expect(await page.locator(".card p").first().textContent()).toContain(
      "Copy this token and paste it into your terminal",
    );
    created = await page.getByLabel("Your new API token").inputValue();
    expect(created).toMatch(/^[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9]{67}$/);
    await checkPage("t04-token-created");

    // It is the user's token on /api/v2, and it expires in 7 days.
    const account = await tfe(api, "GET", "account/details", created);
    expect(account.status).toBe(200);
    expect(account.json.data.id).toBe(ownerId);
    const tokens = await tfe(api, "GET", `users/${ownerId}/authentication-tokens`, created);
    const row = tokens.json.data.find(
      (t: { attributes: { description: string } }) => t.attributes.description === "laptop terraform login",
    );
    const days = (Date.parse(row.attributes["expired-at"]) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.99);
    expect(days).toBeLessThanOrEqual(7);

    // Shown once: the list names it, never shows it again.
    await page.getByRole("link", { name: "Back to your tokens" }).click();
    await page.waitForURL(`${keyway.url}${TOKENS}`);
    expect(await page.locator("table").textContent()).toContain("laptop terraform login");
    expect(await page.content()).not.toContain(created);
  });

  it("revokes the token, which stops working within a second (N13)", async () => {
    await page.goto(`${keyway.url}${TOKENS}`);
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === "POST" && r.url().endsWith("/revoke")),
      page.getByRole("button", { name: "Revoke laptop terraform login" }).click(),
    ]);
    const revokedAt = Date.now();
    expect(answer.status()).toBe(303);
    let status = 0;
    do {
      status = (await tfe(api, "GET", "account/details", created)).status;
    } while (status === 200 && Date.now() - revokedAt < 5_000);
    expect(status).toBe(401);
    expect(Date.now() - revokedAt).toBeLessThan(1_500);
    await page.waitForURL(`${keyway.url}${TOKENS}?notice=revoked`);
    expect(await page.locator(".notice").textContent()).toContain("Token revoked");
    expect(await page.locator("table").textContent()).not.toContain("laptop terraform login");
    // The session's own token still works.
    expect((await tfe(api, "GET", "account/details", ownerToken)).status).toBe(200);
    await checkPage("t05-token-revoked");
  });

  it("works at phone width without sideways scrolling", async () => {
    const phone = await context.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto(`${keyway.url}${TOKENS}?source=terraform-login`);
    const overflow = await phone.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(phone, "t05b-tokens-phone");
    await phone.close();
  });

  it("returns where sign-in was asked for, and never off the console", async () => {
    const fresh = await browser.newContext();
    const p = await fresh.newPage();
    await p.goto(`${keyway.url}/app/${org}`);
    await p.getByLabel("API token").fill(ownerToken);
    await p.getByRole("button", { name: "Sign in" }).click();
    await p.waitForURL(`${keyway.url}/app/${org}`);
    await fresh.clearCookies();
    for (const evil of ["//example.com/app/", "https://example.com/", "/app/%2e%2e/api/v2/account/details"]) {
      await p.goto(`${keyway.url}/app/~/sign-in?return=${encodeURIComponent(evil)}`);
      await p.getByLabel("API token").fill(ownerToken);
      await p.getByRole("button", { name: "Sign in" }).click();
      await p.waitForURL(`${keyway.url}/app`);
      await fresh.clearCookies();
    }
    await fresh.close();
  });

  it("tells a team-token session to sign in as a user", async () => {
    const team = await tfe(api, "POST", `organizations/${org}/teams`, ownerToken, {
      data: { type: "teams", attributes: { name: unique("ops"), "organization-access": { "read-workspaces": true } } },
    });
    const teamToken = await tfe(api, "POST", `teams/${team.json.data.id}/authentication-token`, ownerToken);
    await page.goto(`${keyway.url}/app`);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/app\/~\/sign-in$/);
    await page.getByLabel("API token").fill(teamToken.json.data.attributes.token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${keyway.url}/app`);
    expect(await page.getByRole("link", { name: "API tokens" }).count()).toBe(0);
    const res = await page.goto(`${keyway.url}${TOKENS}`);
    expect(res?.status()).toBe(403);
    expect(await page.locator("h1").textContent()).toBe("Sign in as a user");
    await checkPage("t06-team-session");
    // Its button signs out and comes back to the tokens page after the next sign-in.
    await page.getByRole("button", { name: "Sign out and sign in as a user" }).click();
    await page.waitForURL(/\/app\/~\/sign-in\?return=/);
    await page.getByLabel("API token").fill(ownerToken);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${keyway.url}${TOKENS}`);
    expect(await page.locator("h1").textContent()).toBe("API tokens");
  });
});
