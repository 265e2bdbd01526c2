/**
 * The self-service console (N14) in a real browser: Debian's Chromium driven by
 * playwright-core against the real Worker (wrangler's unstable_startWorker on 127.0.0.1,
 * real local D1, Queue and R2; runs are planned and applied by the real Queue consumer).
 * Every page visited is checked with axe-core (no serious or critical violation) and for
 * CSP violations, and each test saves a screenshot into .tmp/screenshots/.
 *
 * The tests run in order and share one signed-in browser context, as a person would.
 */
import type { Browser, BrowserContext, Page, Response } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { expectCleanPage, launchChromium, openPage, screenshot } from "../../support/browser";
import { type Api, tfe } from "../../support/client";
import { type RunningKeyway, startKeyway } from "../../support/worker";
import { createOrg, createUser, movePin, noCodeModule, publish, unique } from "./seed";

const PASSWORD = "correct-horse-battery-staple";

describe("the console in Chromium (N14)", () => {
  let keyway: RunningKeyway;
  let api: Api;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let csp: string[];
  let org: string;
  let ownerToken: string;
  let otherOrg: string;
  let module: { id: string; name: string; registryModuleId: string };
  const workspace = unique("web");

  /** Check the page as it is: axe (no serious/critical violation), no CSP violation. */
  const checkPage = (name: string) => expectCleanPage(page, csp, name);

  async function goto(path: string): Promise<Response> {
    const res = await page.goto(`${keyway.url}${path}`);
    if (!res) throw new Error(`no response for ${path}`);
    return res;
  }

  beforeAll(async () => {
    keyway = await startKeyway();
    api = { url: keyway.url, adminToken: keyway.adminToken };
    const a = await createOrg(api);
    org = a.org;
    ownerToken = a.owner.token;
    module = await noCodeModule(api, org, ownerToken);
    // Another organization with a workspace the signed-in user may not see.
    const b = await createOrg(api);
    otherOrg = b.org;
    browser = await launchChromium();
    ({ context, page, csp } = await openPage(browser));
  });

  afterAll(async () => {
    await browser?.close();
    await keyway?.stop();
  });

  it("signs in with a user token and shows the organization's catalog", async () => {
    const assets: Response[] = [];
    page.on("response", (res) => {
      if (new URL(res.url()).pathname.startsWith("/app/~/console.")) assets.push(res);
    });
    await goto("/app");
    expect(new URL(page.url()).pathname).toBe("/app/~/sign-in");
    await checkPage("01-sign-in");
    // The stylesheet and script load from their hashed URLs under the CSP, and the style applies.
    await expect.poll(() => assets.length).toBe(2);
    expect(assets.map((res) => [new URL(res.url()).pathname, res.status()])).toEqual(
      expect.arrayContaining([
        [expect.stringMatching(/^\/app\/~\/console\.[0-9a-f]{16}\.css$/), 200],
        [expect.stringMatching(/^\/app\/~\/console\.[0-9a-f]{16}\.js$/), 200],
      ]),
    );
    expect(await page.evaluate(() => getComputedStyle(document.querySelector("header.top")!).backgroundColor)).toBe(
      "rgb(17, 24, 39)",
    );

    await page.getByLabel("API token").fill("not-a-token.atlasv1.nope");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.locator(".error").textContent()).toContain("not valid");

    await page.getByLabel("API token").fill(ownerToken);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${keyway.url}/app`);
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === "keyway_console");
    expect(session).toMatchObject({ httpOnly: true, sameSite: "Strict", secure: false }); // loopback: not Secure
    await checkPage("02-organizations");

    await page.getByRole("link", { name: org }).click();
    await expect.poll(() => page.locator("h1").textContent()).toBe(org);
    const card = page.locator(".grid .card").first();
    await expect.poll(() => card.textContent()).toContain(module.name);
    expect(await card.textContent()).toContain("1.0.0");
    expect(await card.textContent()).toContain("hashicorp/random");
    await checkPage("03-catalog");
  });

  it("shows a wrong value beside its field, in words a person understands", async () => {
    await page.getByRole("link", { name: `Provision workspace from ${module.name}` }).click();
    await expect.poll(() => page.locator("h1").textContent()).toContain("Provision a workspace");
    // The form generated from the pinned version: a select for the option, a password field
    // for the sensitive variable, defaults filled in, required marked.
    expect(await page.locator("select#var\\.region option").allTextContents()).toEqual([
      "eu-west-1",
      "us-east-1",
      "ap-south-1",
    ]);
    expect(await page.locator("input#var\\.db_password").getAttribute("type")).toBe("password");
    expect(await page.locator("input#var\\.length").inputValue()).toBe("8");
    expect(await page.locator("label[for='var.db_password']").textContent()).toContain("required");
    await screenshot(page, "04-provision-form");

    await page.getByLabel("Workspace name").fill("has spaces!");
    await page.getByRole("button", { name: "Create workspace" }).click();
    await expect.poll(() => page.locator("#name-error").textContent()).toContain("letters, numbers, dashes");
    expect(await page.locator("input#name").getAttribute("aria-invalid")).toBe("true");

    await page.getByLabel("Workspace name").fill(workspace);
    await page.getByRole("button", { name: "Create workspace" }).click();
    // db_password is required and was left empty: E4 refuses; the message sits beside it.
    await expect
      .poll(() => page.locator("[id='var.db_password-error']").textContent())
      .toContain("A value is required");
    await checkPage("05-provision-error");
  });

  it("provisions a workspace with a drop-down choice and a sensitive value and shows its first run applied", async () => {
    await page.getByLabel("Workspace name").fill(workspace);
    await page.locator("select#var\\.region").selectOption("us-east-1");
    await page.locator("input#var\\.db_password").fill(PASSWORD);
    await page.getByRole("button", { name: "Create workspace" }).click();
    await page.waitForURL(/\/workspaces\//);
    await expect.poll(() => page.locator("h1").textContent()).toBe(`Workspace ${workspace}`);
    // The progressive script refreshes the runs until the first run is applied.
    await expect.poll(() => page.locator("#runs .status").first().textContent(), { timeout: 30_000 }).toBe("applied");
    const html = await page.content();
    expect(html).not.toContain(PASSWORD);
    expect(await page.locator("tr", { hasText: "db_password" }).textContent()).toContain("Sensitive (hidden)");
    expect(await page.locator("tr", { hasText: "region" }).textContent()).toContain("us-east-1");
    await checkPage("06-workspace-applied");

    // The plan page opens with the session (no view token, no Bearer token).
    await page
      .getByRole("link", { name: /View plan/ })
      .first()
      .click();
    await expect.poll(() => page.locator("h1").textContent()).toContain(`Plan for workspace ${workspace}`);
    expect(await page.content()).not.toContain(PASSWORD);
    await screenshot(page, "07-plan-page");
  });

  it("offers the upgrade after a new version is pinned, reviews its plan and confirms it", async () => {
    await publish(api, org, ownerToken, module.name, "1.1.0", "upgrade-v2");
    await movePin(api, ownerToken, module, "1.1.0");

    await goto(`/app/${org}/workspaces/${workspace}`);
    const banner = page.getByRole("region", { name: "Upgrade available" });
    await expect.poll(() => banner.textContent()).toContain("Version 1.1.0");
    await checkPage("08-upgrade-banner");

    await banner.getByRole("button", { name: "Plan the upgrade" }).click();
    await page.waitForURL(/\/upgrade\/run-/);
    await expect.poll(() => page.locator("h1").textContent()).toBe(`Review the upgrade of ${workspace}`);
    expect(await page.locator(".plan-summary").textContent()).toBe("Plan: 1 to add, 1 to change, 1 to destroy.");
    expect(await page.content()).toContain("random_uuid.added");
    await checkPage("09-upgrade-review");

    await page.getByRole("button", { name: "Confirm upgrade" }).click();
    await page.waitForURL(/\/workspaces\/[^/]+\?notice=upgraded$/);
    await expect.poll(() => page.locator("#runs .status").first().textContent(), { timeout: 30_000 }).toBe("applied");
    expect(await page.locator("dl.facts").textContent()).toContain("1.1.0");
    expect(await page.getByRole("region", { name: "Upgrade available" }).count()).toBe(0);
    await checkPage("10-workspace-upgraded");
  });

  it("shows the module's workspaces and versions to a manage-workspaces caller", async () => {
    await goto(`/app/${org}/modules/${module.id}`);
    await expect.poll(() => page.locator("h1").textContent()).toBe(`Module ${module.name}`);
    const row = page.locator("tr", { hasText: workspace });
    expect(await row.textContent()).toContain("1.1.0");
    expect(await page.locator("tr", { hasText: "1.1.0 (pinned)" }).count()).toBe(1);
    await checkPage("11-module");
  });

  it("works at phone width without sideways scrolling", async () => {
    const phone = await context.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    for (const path of [
      `/app/${org}`,
      `/app/${org}/modules/${module.id}/provision`,
      `/app/${org}/workspaces/${workspace}`,
    ]) {
      await phone.goto(`${keyway.url}${path}`);
      const overflow = await phone.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      );
      expect(overflow, path).toBeLessThanOrEqual(0);
    }
    await screenshot(phone, "12-phone-workspace");
    await phone.close();
  });

  it("works without JavaScript: sign in, read the workspace, plan an upgrade's review", async () => {
    const plain = await browser.newContext({ javaScriptEnabled: false });
    const noJs = await plain.newPage();
    await noJs.goto(`${keyway.url}/app/${org}/workspaces/${workspace}`);
    expect(new URL(noJs.url()).pathname).toBe("/app/~/sign-in");
    await noJs.getByLabel("API token").fill(ownerToken);
    await noJs.getByRole("button", { name: "Sign in" }).click();
    await noJs.waitForURL(`${keyway.url}/app/${org}/workspaces/${workspace}`); // back where the person started
    expect(await noJs.locator("h1").textContent()).toBe(`Workspace ${workspace}`);
    expect(await noJs.locator("#runs .status").first().textContent()).toBe("applied");
    await noJs
      .getByRole("link", { name: /View plan/ })
      .first()
      .click();
    expect(await noJs.locator("h1").textContent()).toMatch(/plan for workspace/i);
    await screenshot(noJs, "12b-no-javascript-plan");
    await plain.close();
  });

  it("refuses a POST without the CSRF token and creates nothing", async () => {
    await goto(`/app/${org}`);
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === "POST"),
      page.evaluate(
        ({ action }) => {
          const form = document.createElement("form");
          form.method = "post";
          form.action = action;
          const name = document.createElement("input");
          name.name = "name";
          name.value = "forged";
          form.append(name);
          document.body.append(form);
          form.submit();
        },
        { action: `/app/${org}/modules/${module.id}/provision` },
      ),
    ]);
    expect(response.status()).toBe(403);
    await page.waitForLoadState();
    await expect.poll(() => page.locator("h1").textContent()).toBe("Refused");
    await screenshot(page, "13-csrf-refused");
    const forged = await tfe(api, "GET", `organizations/${org}/workspaces/forged`, ownerToken);
    expect(forged.status).toBe(404);
  });

  it("answers 404 for another organization's pages", async () => {
    const other = await goto(`/app/${otherOrg}`);
    expect(other.status()).toBe(404);
    await expect.poll(() => page.locator("h1").textContent()).toBe("Not found");
    expect((await goto(`/app/${otherOrg}/workspaces/${workspace}`)).status()).toBe(404);
    expect((await goto(`/app/${otherOrg}/modules/${module.id}`)).status()).toBe(404);
    await checkPage("14-not-found");
  });

  it("ends the session on sign-out: the old cookie opens nothing", async () => {
    const cookie = (await context.cookies()).find((c) => c.name === "keyway_console")!;
    await goto(`/app/${org}`);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/app\/~\/sign-in$/);
    await goto(`/app/${org}`);
    expect(new URL(page.url()).pathname).toBe("/app/~/sign-in");
    // The cookie value itself, replayed, no longer opens a page.
    const replay = await fetch(`${keyway.url}/app/${org}`, {
      headers: { Cookie: `keyway_console=${cookie.value}` },
      redirect: "manual",
    });
    expect(replay.status).toBe(303);
    expect(replay.headers.get("location")).toMatch(/^\/app\/~\/sign-in/);
    await screenshot(page, "15-signed-out");
  });

  it("ends the session when its token is replaced (team token)", async () => {
    const member = await createUser(api);
    const team = await tfe(api, "POST", `organizations/${org}/teams`, ownerToken, {
      data: { type: "teams", attributes: { name: unique("ops"), "organization-access": { "read-workspaces": true } } },
    });
    const first = await tfe(api, "POST", `teams/${team.json.data.id}/authentication-token`, ownerToken);
    expect(member.token).toBeTruthy();
    await goto("/app/~/sign-in");
    await page.getByLabel("API token").fill(first.json.data.attributes.token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${keyway.url}/app`);
    expect(await page.locator(".who").textContent()).toContain("team ops-");
    // A read-only team sees the workspace but no module page and no provision button.
    expect((await goto(`/app/${org}/workspaces/${workspace}`)).status()).toBe(200);
    expect((await goto(`/app/${org}/modules/${module.id}`)).status()).toBe(404);
    // Minting a new team token replaces (revokes) the old one: the session ends (N13, N14).
    await tfe(api, "POST", `teams/${team.json.data.id}/authentication-token`, ownerToken);
    await vi.waitFor(
      async () => {
        await goto(`/app/${org}/workspaces/${workspace}`);
        expect(new URL(page.url()).pathname).toBe("/app/~/sign-in");
      },
      { timeout: 5_000, interval: 300 },
    );
  });
});
