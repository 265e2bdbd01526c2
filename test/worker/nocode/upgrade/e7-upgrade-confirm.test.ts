/**
 * E7 `POST /no-code-modules/:id/workspaces/:workspace_id/upgrade/:run_id` (seed E7;
 * decisions N5, N7, N8, N10, N11; HCP Terraform's no-code provisioning API (E7), go-tfe's
 * and the tfe provider's no-code tests): confirm a planned, fresh upgrade run; the workspace
 * switches to the new version and vars before the answer, and the apply of that same run is
 * queued.
 */
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { createDb } from "../../../../src/db/client";
import { workspaceVars } from "../../../../src/db/schema/nocode";
import { NocodeError } from "../../../../src/nocode/errors";
import type { ProvisionMessage } from "../../../../src/nocode/messages/provision";
import { confirmUpgrade } from "../../../../src/nocode/upgrade/confirm";
import { V2_ADDRESSES } from "../../../fixtures/terraform-upgrade";
import { createMember, createOrgToken, tfe } from "../../../helpers/nocode";
import { optionEntry, varEntry } from "../../../helpers/nocode-modules";
import {
  e5,
  e6,
  e7,
  FIRST_PASSWORD,
  patchModule,
  UPGRADE_TEST_TIMEOUT,
  upgradePool,
  upgradeReady,
  waitForUpgrade,
  workspaceAttributes,
} from "./upgrade-helpers";

const db = createDb(env.DB);

let pool: Awaited<ReturnType<typeof upgradePool>>;
beforeAll(async () => {
  pool = await upgradePool(12);
}, UPGRADE_TEST_TIMEOUT);

/** A pool workspace with a fresh upgrade plan made with `vars`. */
async function planned(
  vars: ReturnType<typeof varEntry>[] = [],
  ctx: { noCodeModuleId: string; ownerToken: string; workspaceId: string; org: string; firstRunId: string } = {
    ...pool,
    ...pool.take(),
  },
) {
  const res = await e5(ctx.noCodeModuleId, ctx.workspaceId, ctx.ownerToken, vars);
  expect(res.status, res.text).toBe(200);
  return { ...ctx, runId: res.json.data.id as string };
}

// biome-ignore lint/suspicious/noExplicitAny: JSON:API documents
const varsOf = async (workspaceId: string, token: string): Promise<any[]> =>
  (await tfe("GET", `workspaces/${workspaceId}/vars`, { token })).json.data;

describe("E7 confirm and apply", { timeout: UPGRADE_TEST_TIMEOUT }, () => {
  it("answers the plain text `Workspace update completed`; the workspace then shows the new source-module-id, no upgrade available, and after the apply the new state and resource-count", async () => {
    const ctx = await planned();
    const before = await workspaceAttributes(ctx.workspaceId, ctx.ownerToken);
    expect(before.attributes["source-module-id"]).toBe(`private/${ctx.org}/${pool.registryModule.name}/random/1.0.0`);
    expect(before.attributes["no-code-upgrade-available"]).toBe(true);

    const res = await e7(ctx.noCodeModuleId, ctx.workspaceId, ctx.runId, ctx.ownerToken);
    expect(res.status, res.text).toBe(200);
    expect(res.text).toBe("Workspace update completed");
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);

    // N8: switched before answering
    const switched = await workspaceAttributes(ctx.workspaceId, ctx.ownerToken);
    expect(switched.attributes["source-module-id"]).toBe(`private/${ctx.org}/${pool.registryModule.name}/random/1.1.0`);
    expect(switched.attributes["no-code-upgrade-available"]).toBe(false);
    expect(switched.relationships["no-code-module-version"].data.id).not.toBe(
      before.relationships["no-code-module-version"].data.id,
    );
    expect(switched.relationships["latest-run"].data.id).toBe(ctx.runId);

    // the apply of that same run, through the real Queue consumer
    await waitForUpgrade(ctx.noCodeModuleId, ctx.workspaceId, ctx.runId, ctx.ownerToken, ["applied"]);
    const after = await workspaceAttributes(ctx.workspaceId, ctx.ownerToken);
    expect(after.attributes["source-module-id"]).toBe(`private/${ctx.org}/${pool.registryModule.name}/random/1.1.0`);
    expect(after.attributes["no-code-upgrade-available"]).toBe(false);
    expect(after.attributes["resource-count"]).toBe(V2_ADDRESSES.length);
    const svId = after.relationships["current-state-version"].data.id;
    expect(svId).not.toBe(before.relationships["current-state-version"].data.id);
    const sv = await tfe("GET", `state-versions/${svId}`, { token: ctx.ownerToken });
    expect(sv.json.data.attributes.resources.map((r: { address: string }) => r.address)).toEqual(V2_ADDRESSES);
    expect(sv.json.data.relationships.run.data.id).toBe(ctx.runId);
    expect(sv.json.data.attributes.serial).toBe(2);
    const run = await tfe("GET", `runs/${ctx.runId}`, { token: ctx.ownerToken });
    expect(Object.keys(run.json.data.attributes["status-timestamps"])).toEqual(
      expect.arrayContaining(["planned-at", "confirmed-at", "apply-queued-at", "applying-at", "applied-at"]),
    );
    // and nothing is left to upgrade: E5 now answers a message (the applied run is the new baseline)
    const again = await e5(ctx.noCodeModuleId, ctx.workspaceId, ctx.ownerToken);
    expect(again.json.data.attributes.message).toContain("No upgrade available");
  });

  it("writes the vars given to E5: new ones created, replaced ones keep their id and stay sensitive (write-only)", async () => {
    const ctx = await planned([
      varEntry("region", "us-east-1"),
      varEntry("db_password", "second-password-2", { sensitive: false }),
    ]);
    const varsBefore = await varsOf(ctx.workspaceId, ctx.ownerToken);
    // E5 writes nothing
    expect(varsBefore.map((v) => v.attributes.key)).toEqual(["db_password"]);
    expect((await e7(ctx.noCodeModuleId, ctx.workspaceId, ctx.runId, ctx.ownerToken)).status).toBe(200);
    const varsAfter = await varsOf(ctx.workspaceId, ctx.ownerToken);
    expect(varsAfter.map((v) => [v.attributes.key, v.attributes.value, v.attributes.sensitive])).toEqual([
      ["db_password", null, true],
      ["region", "us-east-1", false],
    ]);
    expect(varsAfter[0].id).toBe(varsBefore[0].id);
    expect(varsAfter[0].attributes["version-id"]).not.toBe(varsBefore[0].attributes["version-id"]);
    // at rest: encrypted, no plaintext, and the hash of the new value
    const row = await db.select().from(workspaceVars).where(eq(workspaceVars.id, varsBefore[0].id)).get();
    expect(row?.value).toBeNull();
    expect(row?.valueEncrypted).toBeTruthy();
    expect(JSON.stringify(row)).not.toContain("second-password-2");
    // the pending vars are gone from the run once written (no ciphertext left behind)
    const runRow = await env.DB.prepare("SELECT configuration FROM runs WHERE id = ?")
      .bind(ctx.runId)
      .first<{ configuration: string }>();
    expect(runRow?.configuration).not.toContain("varChanges");
    await waitForUpgrade(ctx.noCodeModuleId, ctx.workspaceId, ctx.runId, ctx.ownerToken, ["applied"]);
    // the new baseline holds the new values: the same plain values again plan nothing
    const same = await e5(ctx.noCodeModuleId, ctx.workspaceId, ctx.ownerToken, [varEntry("region", "us-east-1")]);
    expect(same.json.data.attributes.message).toContain("No upgrade available");
    // N8a: the same secret again always counts as changed (a guess is never confirmed)
    const secret = await e5(ctx.noCodeModuleId, ctx.workspaceId, ctx.ownerToken, [
      varEntry("db_password", "second-password-2", { sensitive: true }),
    ]);
    expect(secret.json.data.attributes.status).toBe("planned");
    void FIRST_PASSWORD;
  });

  it("a second E7 → 409; E7 of a non-upgrade run or an unknown run → 404", async () => {
    const ctx = await planned();
    expect((await e7(ctx.noCodeModuleId, ctx.workspaceId, ctx.runId, ctx.ownerToken)).status).toBe(200);
    const second = await e7(ctx.noCodeModuleId, ctx.workspaceId, ctx.runId, ctx.ownerToken);
    expect(second.status).toBe(409);
    expect(second.json.errors[0]).toMatchObject({ status: "409", title: "conflict" });
    expect(second.json.errors[0].detail).toMatch(/not awaiting confirmation/);
    expect((await e7(ctx.noCodeModuleId, ctx.workspaceId, ctx.firstRunId, ctx.ownerToken)).status).toBe(404);
    expect((await e7(ctx.noCodeModuleId, ctx.workspaceId, "run-AAAAAAAAAAAAAAAA", ctx.ownerToken)).status).toBe(404);
    const other = await planned();
    expect((await e7(ctx.noCodeModuleId, ctx.workspaceId, other.runId, ctx.ownerToken)).status).toBe(404);
    expect(
      (await e6(other.noCodeModuleId, other.workspaceId, other.runId, ctx.ownerToken)).json.data.attributes.status,
    ).toBe("planned");
  });

  it("concurrent E7s: exactly one confirms, and the run is applied once", async () => {
    const ctx = await planned();
    const answers = await Promise.all(
      [0, 1, 2].map(() => e7(ctx.noCodeModuleId, ctx.workspaceId, ctx.runId, ctx.ownerToken)),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409]);
    await waitForUpgrade(ctx.noCodeModuleId, ctx.workspaceId, ctx.runId, ctx.ownerToken, ["applied"]);
    const svs = await env.DB.prepare("SELECT COUNT(*) AS n FROM state_versions WHERE run_id = ?")
      .bind(ctx.runId)
      .first<{ n: number }>();
    expect(svs?.n).toBe(1);
  });

  it.each([
    ["without var changes", []],
    ["with a new var", [varEntry("region", "eu-north-1")]],
  ])(
    "concurrent E7s that read the same clock (workerd's Date.now() can be equal across requests), %s: exactly one confirms and queues the apply; the others are told the run is no longer awaiting confirmation",
    async (_, vars) => {
      const ctx = await planned(vars);
      const sameTime = Date.now();
      const sent: ProvisionMessage[] = [];
      const confirmAt = () =>
        confirmUpgrade(createDb(env.DB), ctx.noCodeModuleId, ctx.workspaceId, ctx.runId, {
          now: () => sameTime,
          send: async (m) => void sent.push(m),
        }).then(
          () => "confirmed",
          (err: unknown) => (err instanceof NocodeError ? `${err.code}: ${err.detail}` : String(err)),
        );
      const answers = await Promise.all([confirmAt(), confirmAt(), confirmAt()]);
      const lost = "conflict: The upgrade run is apply_queued, not awaiting confirmation";
      expect(answers.sort()).toEqual(["confirmed", lost, lost]);
      expect(sent).toEqual([{ v: 1, kind: "apply-run", runId: ctx.runId }]);
      // the pool's workspaces start with db_password only; the winner wrote the new var once
      expect((await varsOf(ctx.workspaceId, ctx.ownerToken)).map((v) => v.attributes.key)).toEqual([
        "db_password",
        ...vars.map((v) => v.attributes.key),
      ]);
    },
  );

  it("a discarded upgrade run → 409, and its pending var changes are dropped", async () => {
    const ctx = await planned([varEntry("region", "us-west-2")]);
    const pending = await env.DB.prepare("SELECT configuration FROM runs WHERE id = ?")
      .bind(ctx.runId)
      .first<{ configuration: string }>();
    expect(pending?.configuration).toContain("varChanges");
    expect((await tfe("POST", `runs/${ctx.runId}/actions/discard`, { token: ctx.ownerToken })).status).toBe(202);
    const discarded = await env.DB.prepare("SELECT configuration FROM runs WHERE id = ?")
      .bind(ctx.runId)
      .first<{ configuration: string }>();
    expect(discarded?.configuration).not.toContain("varChanges");
    const res = await e7(ctx.noCodeModuleId, ctx.workspaceId, ctx.runId, ctx.ownerToken);
    expect(res.status).toBe(409);
    expect(res.json.errors[0].detail).toContain("discarded");
  });

  it("N10: the organization token and read-only members get 404 and change nothing; manage-workspaces members confirm", async () => {
    const ctx = await planned();
    const orgToken = await createOrgToken(ctx.org);
    const reader = await createMember(ctx.org, { "read-workspaces": true });
    for (const token of [orgToken, reader.token])
      expect((await e7(ctx.noCodeModuleId, ctx.workspaceId, ctx.runId, token)).status).toBe(404);
    expect(
      (
        await tfe("POST", `no-code-modules/${ctx.noCodeModuleId}/workspaces/${ctx.workspaceId}/upgrade/${ctx.runId}`, {
          token: null,
        })
      ).status,
    ).toBe(401);
    expect((await e6(ctx.noCodeModuleId, ctx.workspaceId, ctx.runId, ctx.ownerToken)).json.data.attributes.status).toBe(
      "planned",
    );
    const manager = await createMember(ctx.org, { "manage-workspaces": true });
    expect((await e7(ctx.noCodeModuleId, ctx.workspaceId, ctx.runId, manager.token)).status).toBe(200);
  });
});

describe("E7 refuses a stale plan with 409 (N8) and changes nothing", { timeout: UPGRADE_TEST_TIMEOUT }, () => {
  /** E7 must answer 409 naming `reason`; the run stays planned and the workspace at 1.0.0. */
  async function expectStale(
    ctx: { noCodeModuleId: string; workspaceId: string; runId: string; ownerToken: string },
    reason: RegExp,
  ) {
    const res = await e7(ctx.noCodeModuleId, ctx.workspaceId, ctx.runId, ctx.ownerToken);
    expect(res.status, res.text).toBe(409);
    expect(res.json.errors[0].detail).toMatch(/^The upgrade plan is stale: /);
    expect(res.json.errors[0].detail).toMatch(reason);
    expect((await e6(ctx.noCodeModuleId, ctx.workspaceId, ctx.runId, ctx.ownerToken)).json.data.attributes.status).toBe(
      "planned",
    );
    expect((await workspaceAttributes(ctx.workspaceId, ctx.ownerToken)).attributes["source-module-id"]).toMatch(
      /\/1\.0\.0$/,
    );
  }

  it("a workspace var written after the plan (created, or updated even to the same value)", async () => {
    const created = await planned();
    const post = await tfe("POST", `workspaces/${created.workspaceId}/vars`, {
      token: created.ownerToken,
      body: { data: { type: "vars", attributes: { key: "APP_LOG_LEVEL", value: "debug", category: "env" } } },
    });
    expect(post.status).toBe(201);
    await expectStale(created, /a workspace variable changed/);

    const updated = await planned();
    const [password] = await varsOf(updated.workspaceId, updated.ownerToken);
    // the same value again still makes a new version of the var: stale
    const patch = await tfe("PATCH", `workspaces/${updated.workspaceId}/vars/${password.id}`, {
      token: updated.ownerToken,
      body: { data: { type: "vars", attributes: { value: FIRST_PASSWORD } } },
    });
    expect(patch.status).toBe(200);
    await expectStale(updated, /a workspace variable changed/);
  });

  it("the module's pin moved, it was disabled, or its option sets changed", async () => {
    const pin = await upgradeReady({ org: pool });
    const pinRun = await planned([], pin);
    await patchModule(pin, { "version-pin": "1.0.0" });
    await expectStale(pinRun, /version pin changed from 1\.1\.0 to 1\.0\.0/);

    const disabled = await upgradeReady({ org: pool });
    const disabledRun = await planned([], disabled);
    await patchModule(disabled, { enabled: false });
    await expectStale(disabledRun, /the module was disabled/);

    const options = await upgradeReady({ org: pool });
    const optionsRun = await planned([], options);
    await patchModule(options, {}, [optionEntry("region", ["eu-west-1"])]);
    await expectStale(optionsRun, /variable options changed/);
    // writing back the same settings is no change: the plan is fresh again
    await patchModule(options, {}, []);
    expect((await e7(options.noCodeModuleId, options.workspaceId, optionsRun.runId, options.ownerToken)).status).toBe(
      200,
    );
  });
});

describe("E7 when the apply cannot be queued (N11)", { timeout: UPGRADE_TEST_TIMEOUT }, () => {
  it("puts back the run, the workspace and its vars, so E7 can be retried", async () => {
    const ctx = await planned([
      varEntry("region", "us-east-1"),
      varEntry("db_password", "third-password-3", { sensitive: true }),
    ]);
    const varsBefore = await db
      .select()
      .from(workspaceVars)
      .where(eq(workspaceVars.workspaceId, ctx.workspaceId))
      .all();
    const wsBefore = await workspaceAttributes(ctx.workspaceId, ctx.ownerToken);
    const sent: ProvisionMessage[] = [];
    await expect(
      confirmUpgrade(createDb(env.DB), ctx.noCodeModuleId, ctx.workspaceId, ctx.runId, {
        now: Date.now,
        send: async (message) => {
          sent.push(message);
          throw new Error("queue unavailable");
        },
      }),
    ).rejects.toThrow("queue unavailable");
    expect(sent).toEqual([{ v: 1, kind: "apply-run", runId: ctx.runId }]);
    expect((await e6(ctx.noCodeModuleId, ctx.workspaceId, ctx.runId, ctx.ownerToken)).json.data.attributes.status).toBe(
      "planned",
    );
    const wsAfter = await workspaceAttributes(ctx.workspaceId, ctx.ownerToken);
    expect(wsAfter.attributes["source-module-id"]).toBe(wsBefore.attributes["source-module-id"]);
    expect(wsAfter.attributes["no-code-upgrade-available"]).toBe(true);
    const varsAfter = await db.select().from(workspaceVars).where(eq(workspaceVars.workspaceId, ctx.workspaceId)).all();
    expect(varsAfter).toEqual(varsBefore);
    // the plan is fresh again: E7 through the API now succeeds and writes the vars
    expect((await e7(ctx.noCodeModuleId, ctx.workspaceId, ctx.runId, ctx.ownerToken)).status).toBe(200);
    expect((await varsOf(ctx.workspaceId, ctx.ownerToken)).map((v) => v.attributes.key)).toEqual([
      "db_password",
      "region",
    ]);
    await waitForUpgrade(ctx.noCodeModuleId, ctx.workspaceId, ctx.runId, ctx.ownerToken, ["applied"]);
  });
});
