/**
 * An agent run's real changes in Chromium (decision N19): the console's workspace page and
 * the plan page show the engine's JSON plan attribute by attribute — here a plan Terraform
 * 1.11.4 recorded for test/fixtures/agent/modules/plan-changes (an update in place, a
 * replacement, a changed password inside an object, outputs) — with every sensitive value
 * masked: neither recorded password nor the workspace's own sensitive variable is anywhere in
 * the HTML. Before an agent takes a run, the console says it waits for an agent of the pool,
 * and its cancel button cancels it (N19a). Every page is checked with axe-core (no serious or critical violation) and for CSP
 * violations. The agent is protocol-level (./../agent/protocol-agent.ts): the JSON plan is
 * the recorded one, not one an engine computes here.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectCleanPage, launchChromium, openPage } from "../../support/browser";
import type { Api } from "../../support/client";
import { type RunningKeyway, startKeyway } from "../../support/worker";
import {
  type AgentOrg,
  createAgentWorkspace,
  createPool,
  engineVar,
  moduleFiles,
  type Pool,
  publishModule,
  waitForRun,
} from "../agent/harness";
import { planNextJob, registerProtocolAgent } from "../agent/protocol-agent";
import { createOrg, unique } from "./seed";

const RECORDED_PLAN = readFileSync(
  path.join(import.meta.dirname, "../../fixtures/terraform-plan/terraform-1.11.4/change.json"),
  "utf8",
);
/** The passwords in the recorded plan (test/fixtures/terraform-plan/record.sh). */
const RECORDED_SECRETS = ["first-recorded-password", "second-recorded-password"];

describe("an agent run's changes in the console and on the plan page (N19)", () => {
  let keyway: RunningKeyway;
  let api: Api;
  let browser: Browser;
  let page: Page;
  let csp: string[];
  let ctx: AgentOrg;
  let pool: Pool;
  const secret = unique("workspace-secret");

  /** Check the page as every page is checked, and that it shows no secret. */
  async function checkPage(name: string): Promise<void> {
    const html = await page.content();
    for (const value of [...RECORDED_SECRETS, secret]) expect(html, `${name} shows a secret`).not.toContain(value);
    await expectCleanPage(page, csp, name);
  }

  beforeAll(async () => {
    keyway = await startKeyway();
    api = { url: keyway.url, adminToken: keyway.adminToken };
    const { org, owner } = await createOrg(api);
    ctx = { org, token: owner.token, ...(await publishModule(api, org, owner.token, moduleFiles("plan-changes"))) };
    pool = await createPool(api, ctx);
    browser = await launchChromium();
    ({ page, csp } = await openPage(browser));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await keyway?.stop();
  });

  const vars = () => [engineVar("name", "alpha"), engineVar("password", secret, { sensitive: true })];

  it("shows a queued run waiting for an agent of the pool, and cancels it (N19a)", async () => {
    const workspace = await createAgentWorkspace(api, ctx, pool, { autoApply: false, vars: vars() });
    await page.goto(`${keyway.url}/app`);
    await page.getByLabel("API token").fill(ctx.token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${keyway.url}/app`);

    await page.goto(`${keyway.url}/app/${ctx.org}/workspaces/${workspace.name}`);
    await expect
      .poll(() => page.locator("#runs .waiting").textContent())
      .toContain(`waiting for an agent of pool ${pool.name}`);
    await checkPage("agent-plan-01-waiting");
    await page.getByRole("button", { name: `Cancel run ${workspace.runId}` }).click();
    await expect.poll(() => page.locator(".notice").textContent()).toBe("Run canceled.");
    expect(await page.locator("#runs .status").first().textContent()).toBe("canceled");
    expect(await page.getByRole("button", { name: /Cancel run/ }).count()).toBe(0);
    await waitForRun(api, ctx.token, workspace.runId, ["canceled"]);
  });

  it("shows the planned changes with sensitive values masked", async () => {
    expect(RECORDED_PLAN).toContain(RECORDED_SECRETS[0]);
    const workspace = await createAgentWorkspace(api, ctx, pool, { autoApply: false, vars: vars() });
    const workspaceUrl = `${keyway.url}/app/${ctx.org}/workspaces/${workspace.name}`;
    const agent = await registerProtocolAgent(api, pool.token, unique("agent"));
    await planNextJob(api, agent, RECORDED_PLAN);
    await waitForRun(api, ctx.token, workspace.runId, ["planned"]);

    await page.goto(workspaceUrl);
    const plan = page.locator("#plan");
    await expect.poll(() => plan.locator("h2").textContent()).toBe("Latest plan");
    expect(await plan.textContent()).toContain("Plan: 1 to add, 2 to change, 1 to destroy.");
    const credentials = plan.getByRole("table", { name: "Attributes of terraform_data.credentials that change" });
    expect(await credentials.getByRole("row", { name: /input\.password/ }).textContent()).toBe(
      "input.password(sensitive value)(sensitive value)",
    );
    const server = plan.getByRole("table", { name: "Attributes of terraform_data.server that change" });
    expect(await server.getByRole("row", { name: /input\.size/ }).textContent()).toBe("input.size12");
    expect(await plan.textContent()).toContain("triggers_replace[0] forces replacement");
    const outputs = plan.locator("table.outputs");
    expect(await outputs.getByRole("row", { name: /password/ }).textContent()).toBe(
      "passwordchanged(sensitive value)(sensitive value)",
    );
    await checkPage("agent-plan-02-workspace");

    await plan.getByRole("link", { name: /Open the plan page/ }).click();
    await page.waitForURL(new RegExp(`/runs/${workspace.runId}$`));
    expect(await page.locator("h1").textContent()).toBe(`Plan for workspace ${workspace.name}`);
    expect(
      await page
        .getByRole("table", { name: "Attributes of terraform_data.credentials that change" })
        .getByRole("row", { name: /input\.password/ })
        .textContent(),
    ).toBe("input.password(sensitive value)(sensitive value)");
    expect(await page.locator("main").textContent()).toContain("must be replaced");
    expect(await page.locator("footer").textContent()).toContain(`of pool ${pool.name}`);
    await checkPage("agent-plan-03-plan-page");
  });
});
