/**
 * Rollouts on the console's module page (N14, N15): start one with the form, follow it on
 * its page, confirm the waiting batch, pause/resume/cancel through CSRF-protected forms;
 * a form without its CSRF token changes nothing.
 */
import { beforeAll, describe, expect, it, vi } from "vitest";
import { ConsoleBrowser } from "../../../helpers/console-browser";
import { createMember, tfe } from "../../../helpers/nocode";
import { UPGRADE_TEST_TIMEOUT, upgradePool } from "../upgrade/upgrade-helpers";

let pool: Awaited<ReturnType<typeof upgradePool>>;
beforeAll(async () => {
  pool = await upgradePool(3);
}, UPGRADE_TEST_TIMEOUT);

describe("rollouts in the console (N15)", { timeout: UPGRADE_TEST_TIMEOUT }, () => {
  it("starts a rollout from the module page, shows its items, confirms the waiting batch, and refuses forms without CSRF", async () => {
    const b = new ConsoleBrowser();
    expect((await b.signIn(pool.ownerToken)).status).toBe(303);
    const modulePage = `/app/${pool.org}/modules/${pool.noCodeModuleId}`;
    const page = await b.request("GET", modulePage);
    expect(page.status).toBe(200);
    expect(page.text).toContain("<h2>Rollouts</h2>");
    expect(page.text).toContain('<label for="batch-size">');
    const csrf = ConsoleBrowser.csrf(page.text);

    // Without the CSRF token: refused, nothing created.
    const refused = await b.request("POST", `${modulePage}/rollouts`, {
      "batch-size": "3",
      "auto-confirm": "never",
      "max-failures": "0",
    });
    expect(refused.status).toBe(403);
    expect(page.text).not.toContain("/rollouts/rollout-");

    const started = await b.request("POST", `${modulePage}/rollouts`, {
      csrf,
      "batch-size": "3",
      "auto-confirm": "never",
      "max-failures": "0",
    });
    expect(started.status, started.text).toBe(303);
    const location = started.headers.get("location")!;
    expect(location).toMatch(new RegExp(`^/app/${pool.org}/rollouts/rollout-[A-Za-z0-9]{16}$`));
    const rolloutId = location.split("/").pop()!;

    // The module page lists it and offers no second start while it is active.
    const listed = await b.request("GET", modulePage);
    expect(listed.text).toContain(`href="${location}"`);
    expect(listed.text).not.toContain('<label for="batch-size">');

    const waiting = await vi.waitFor(
      async () => {
        const res = await b.request("GET", location);
        if (!res.text.includes("Confirm waiting plans")) throw new Error("not waiting yet");
        return res;
      },
      { timeout: 30_000, interval: 100 },
    );
    expect(waiting.text.match(/status waiting-confirmation/g)?.length).toBe(4); // the rollout and its 3 items
    expect(waiting.text).toMatch(/\+1 ~1 −1/);

    // Pause and resume through the forms, then confirm.
    const pageCsrf = ConsoleBrowser.csrf(waiting.text);
    expect((await b.request("POST", `${location}/actions/pause`, { csrf: pageCsrf })).status).toBe(303);
    expect((await b.request("GET", location)).text).toContain("Resume");
    expect((await b.request("POST", `${location}/actions/confirm`, { csrf: pageCsrf })).status).toBe(409);
    expect((await b.request("POST", `${location}/actions/resume`, { csrf: pageCsrf })).status).toBe(303);
    await vi.waitFor(
      async () => {
        if (!(await b.request("GET", location)).text.includes("Confirm waiting plans"))
          throw new Error("not waiting yet");
      },
      { timeout: 30_000, interval: 100 },
    );
    expect((await b.request("POST", `${location}/actions/confirm`, { csrf: pageCsrf })).status).toBe(303);
    await vi.waitFor(
      async () => {
        const res = await tfe("GET", `upgrade-rollouts/${rolloutId}`, { token: pool.ownerToken });
        if (res.json.data.attributes.status !== "completed") throw new Error(res.json.data.attributes.status);
      },
      { timeout: 30_000, interval: 100 },
    );
    const done = await b.request("GET", location);
    expect(done.text.match(/status applied/g)?.length).toBe(3);
    expect(done.text).not.toContain("Cancel rollout");

    // N10: without manage-workspaces the rollout page and its forms are 404.
    const reader = await createMember(pool.org, { "read-workspaces": true });
    const r = new ConsoleBrowser();
    expect((await r.signIn(reader.token)).status).toBe(303);
    expect((await r.request("GET", location)).status).toBe(404);
    const readerCsrf = ConsoleBrowser.csrf((await r.request("GET", "/app")).text);
    expect((await r.request("POST", `${location}/actions/cancel`, { csrf: readerCsrf })).status).toBe(404);
    expect((await r.request("POST", `${modulePage}/rollouts`, { csrf: readerCsrf, "batch-size": "1" })).status).toBe(
      404,
    );
  });
});
