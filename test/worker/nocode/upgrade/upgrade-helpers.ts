/**
 * Set-up of the upgrade tests (E5–E7, N7, N8): a no-code module whose version 1.0.0 is
 * the upgrade-v1 fixture and 1.1.0 the upgrade-v2 fixture, both `ok` through the real
 * upload link and Queue ingestion; a workspace provisioned at 1.0.0 whose first run was
 * applied through the real Queue consumer (the baseline of an upgrade plan); then the
 * pin moved to 1.1.0 with E2. Everything goes through the public API.
 *
 * The fixtures (test/fixtures/terraform-upgrade): variables `prefix` (default "app"),
 * `length` (8), `region` ("eu-west-1"), `db_password` (sensitive, required); v1 → v2 adds
 * `random_uuid.added`, removes `random_id.legacy`, changes the body of
 * `random_string.suffix` and only comments of `random_pet.name`, which `region` reaches
 * through `local.suffix` → `local.name_prefix`.
 */
import { exports } from "cloudflare:workers";
import { vi } from "vitest";
import { upgradeFixtureFiles } from "../../../fixtures/terraform-upgrade";
import { type BootstrappedOrg, type TfeAnswer, tfe } from "../../../helpers/nocode";
import {
  createNoCodeWorkspace,
  type NoCodeOrg,
  noCodeModuleDoc,
  noCodeOrg,
  type optionEntry,
  publishVersion,
  varEntry,
  waitForRun,
} from "../../../helpers/nocode-modules";

/** The first password of every workspace (sensitive; must never be shown). */
export const FIRST_PASSWORD = "correct-horse-battery-staple-1";

/** A module with 1.0.0 (v1) and 1.1.0 (v2) `ok`, pinned at 1.0.0. */
export interface UpgradeModule extends NoCodeOrg {
  /** Id of registry version 1.1.0. */
  v2VersionId: string;
}

/** Publish the two fixture versions and enable the module pinned at 1.0.0. */
export async function upgradeModule(
  options: { org?: BootstrappedOrg; options?: ReturnType<typeof optionEntry>[] } = {},
): Promise<UpgradeModule> {
  const ctx = await noCodeOrg({
    files: upgradeFixtureFiles("upgrade-v1"),
    version: "1.0.0",
    org: options.org,
    options: options.options,
  });
  const v2 = await publishVersion(
    ctx.org,
    ctx.registryModule,
    "1.1.0",
    ctx.ownerToken,
    upgradeFixtureFiles("upgrade-v2"),
  );
  if (v2.status !== "ok") throw new Error(`1.1.0 failed ingestion: ${v2.error}`);
  return { ...ctx, v2VersionId: v2.id };
}

/** E2: move the pin (and optionally other attributes or the option sets). */
export async function patchModule(
  ctx: UpgradeModule,
  attributes: Record<string, unknown>,
  options?: ReturnType<typeof optionEntry>[],
): Promise<TfeAnswer> {
  const res = await tfe("PATCH", `no-code-modules/${ctx.noCodeModuleId}`, {
    token: ctx.ownerToken,
    body: noCodeModuleDoc(ctx.registryModule.id, attributes, options),
  });
  if (res.status !== 200) throw new Error(`E2: ${res.status} ${res.text}`);
  return res;
}

/**
 * A workspace at the module's current pin. With `applied` (default) it has auto-apply and
 * its first run is waited for until `applied`; otherwise the first run waits at `planned`.
 */
export async function upgradeWorkspace(
  ctx: UpgradeModule,
  options: { applied?: boolean; vars?: ReturnType<typeof varEntry>[] } = {},
  // biome-ignore lint/suspicious/noExplicitAny: test helpers return arbitrary JSON
): Promise<{ workspace: any; firstRunId: string }> {
  const applied = options.applied ?? true;
  const vars = options.vars ?? [varEntry("db_password", FIRST_PASSWORD, { sensitive: true })];
  const { workspace, runId } = await createNoCodeWorkspace(
    ctx.noCodeModuleId,
    ctx.ownerToken,
    { "auto-apply": applied },
    vars,
  );
  await waitForRun(runId, ctx.ownerToken, [applied ? "applied" : "planned"]);
  return { workspace, firstRunId: runId };
}

/** A module pinned at 1.0.0 with an applied workspace, then the pin moved to 1.1.0. */
export async function upgradeReady(
  options: { org?: BootstrappedOrg } = {},
  // biome-ignore lint/suspicious/noExplicitAny: test helpers return arbitrary JSON
): Promise<UpgradeModule & { workspace: any; workspaceId: string; firstRunId: string }> {
  const ctx = await upgradeModule(options);
  const { workspace, firstRunId } = await upgradeWorkspace(ctx);
  await patchModule(ctx, { "version-pin": "1.1.0" });
  return { ...ctx, workspace, workspaceId: workspace.id as string, firstRunId };
}

/**
 * A module with `count` workspaces applied at 1.0.0, then the pin moved to 1.1.0: each
 * test takes workspaces of its own from the pool, so tests that leave the module alone
 * share one ingestion of the two versions.
 */
export async function upgradePool(count: number, options: { org?: BootstrappedOrg } = {}) {
  const ctx = await upgradeModule(options);
  // biome-ignore lint/suspicious/noExplicitAny: test helpers return arbitrary JSON
  const workspaces: { workspace: any; firstRunId: string }[] = await Promise.all(
    Array.from({ length: count }, () => upgradeWorkspace(ctx)),
  );
  await patchModule(ctx, { "version-pin": "1.1.0" });
  let next = 0;
  return {
    ...ctx,
    /** The next unused workspace of the pool. */
    take() {
      const taken = workspaces[next++];
      if (!taken) throw new Error("the upgrade pool is empty: raise its size");
      return { ...taken, workspaceId: taken.workspace.id as string };
    },
  };
}

/** Generous per-test timeout: each set-up ingests two module versions through the real Queue. */
export const UPGRADE_TEST_TIMEOUT = 120_000;

/** `/no-code-modules/:id/workspaces/:ws/upgrade[/:run]`. */
export const upgradePath = (moduleId: string, workspaceId: string, runId?: string) =>
  `no-code-modules/${moduleId}/workspaces/${workspaceId}/upgrade${runId === undefined ? "" : `/${runId}`}`;

/** E5 with `vars` (default none) and `data.type` `workspaces`. */
export function e5(
  moduleId: string,
  workspaceId: string,
  token: string,
  vars: ReturnType<typeof varEntry>[] = [],
  type = "workspaces",
): Promise<TfeAnswer> {
  return tfe("POST", upgradePath(moduleId, workspaceId), {
    token,
    body: { data: { type, relationships: { vars: { data: vars } } } },
  });
}

/** E6. */
export function e6(moduleId: string, workspaceId: string, runId: string, token: string): Promise<TfeAnswer> {
  return tfe("GET", upgradePath(moduleId, workspaceId, runId), { token });
}

/** E7 (no body). */
export function e7(moduleId: string, workspaceId: string, runId: string, token: string): Promise<TfeAnswer> {
  return tfe("POST", upgradePath(moduleId, workspaceId, runId), { token });
}

/** Poll E6 until the status is one of `statuses`. */
export async function waitForUpgrade(
  moduleId: string,
  workspaceId: string,
  runId: string,
  token: string,
  statuses: readonly string[],
  // biome-ignore lint/suspicious/noExplicitAny: test helpers return arbitrary JSON
): Promise<any> {
  return vi.waitFor(
    async () => {
      const res = await e6(moduleId, workspaceId, runId, token);
      const status = res.json?.data?.attributes?.status;
      if (!statuses.includes(status))
        throw new Error(`upgrade ${runId} is ${status}, waiting for ${statuses.join("|")}`);
      return res.json.data;
    },
    { timeout: 20_000, interval: 50 },
  );
}

/** GET a workspace's attributes. */
// biome-ignore lint/suspicious/noExplicitAny: test helpers return arbitrary JSON
export async function workspaceAttributes(workspaceId: string, token: string): Promise<any> {
  const res = await tfe("GET", `workspaces/${workspaceId}`, { token });
  if (res.status !== 200) throw new Error(`GET workspace: ${res.status} ${res.text}`);
  return res.json.data;
}

/** GET the plan page (path from a plan-url or built), returning status, text and headers. */
export async function getPage(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string; headers: Headers }> {
  const res = await exports.default.fetch(url.startsWith("http") ? url : `http://keyway.test${url}`, { headers });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

/** `{address: "actions"}` of a json-output. */
export function actionsByAddress(
  resourceChanges: { address: string; change: { actions: string[] } }[],
): Record<string, string> {
  return Object.fromEntries(resourceChanges.map((c) => [c.address, c.change.actions.join(",")]));
}
