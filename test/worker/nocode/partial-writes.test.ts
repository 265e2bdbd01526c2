/**
 * A failure leaves nothing half-done and is retryable. E1, E2 and
 * DELETE change the no-code module and the registry module's legacy `no-code` flag in one
 * D1 batch; an upload spends its link in the same batch that records the stored tarball.
 * Failures are injected by the test-time D1 guard around the real binding (B8).
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { injectD1Failure } from "../../../src/db/d1-guard";
import { fixtureFiles } from "../../fixtures/terraform";
import { bootstrapOrg, tfe } from "../../helpers/nocode";
import {
  createPendingVersion,
  createRegistryModule,
  enableNoCode,
  noCodeModuleDoc,
  noCodeOrg,
  publishVersion,
} from "../../helpers/nocode-modules";
import { workerRequest } from "../../helpers/worker-request";
import { buildTarball } from "../../support/tarball";
import { storedObjects, upload } from "./registry/registry-fixtures";

/** The registry module's legacy flag, as stored. */
async function noCodeFlag(registryModuleId: string): Promise<number | undefined> {
  const row = await env.DB.prepare("SELECT no_code FROM registry_modules WHERE id = ?")
    .bind(registryModuleId)
    .first<{ no_code: number }>();
  return row?.no_code;
}

async function noCodeModulesOf(registryModuleId: string): Promise<{ id: string; enabled: number }[]> {
  const { results } = await env.DB.prepare("SELECT id, enabled FROM no_code_modules WHERE registry_module_id = ?")
    .bind(registryModuleId)
    .all<{
      id: string;
      enabled: number;
    }>();
  return results;
}

/** The statement that writes the legacy flag. */
const FLAG_UPDATE = /^update "registry_modules" set "no_code"/;

describe("E1, E2 and DELETE write the legacy no-code flag in their batch", () => {
  it("E1: a failed flag write leaves no no-code module behind; the retry succeeds", async () => {
    const org = await bootstrapOrg();
    const mod = await createRegistryModule(org.org, org.ownerToken);
    expect((await publishVersion(org.org, mod, "1.0.0", org.ownerToken)).status).toBe("ok");
    injectD1Failure(FLAG_UPDATE);
    const failed = await enableNoCode(org.org, org.ownerToken, noCodeModuleDoc(mod.id, { enabled: true }));
    expect(failed.status).toBe(500);
    expect(await noCodeModulesOf(mod.id)).toEqual([]);
    expect(await noCodeFlag(mod.id)).toBe(0);

    const retried = await enableNoCode(org.org, org.ownerToken, noCodeModuleDoc(mod.id, { enabled: true }));
    expect(retried.status).toBe(200);
    expect(await noCodeFlag(mod.id)).toBe(1);
  });

  it("E2: enabling fails whole when the flag write fails; the retry succeeds", async () => {
    const ctx = await noCodeOrg({ enabled: false });
    expect(await noCodeFlag(ctx.registryModule.id)).toBe(0);
    const patch = () =>
      tfe("PATCH", `no-code-modules/${ctx.noCodeModuleId}`, {
        token: ctx.ownerToken,
        body: { data: { type: "no-code-modules", attributes: { enabled: true } } },
      });
    injectD1Failure(FLAG_UPDATE);
    expect((await patch()).status).toBe(500);
    expect(await noCodeModulesOf(ctx.registryModule.id)).toEqual([{ id: ctx.noCodeModuleId, enabled: 0 }]);
    expect(await noCodeFlag(ctx.registryModule.id)).toBe(0);
    expect((await patch()).status).toBe(200);
    expect(await noCodeModulesOf(ctx.registryModule.id)).toEqual([{ id: ctx.noCodeModuleId, enabled: 1 }]);
    expect(await noCodeFlag(ctx.registryModule.id)).toBe(1);
  });

  it("DELETE: a failed flag write keeps the module; the retry deletes it", async () => {
    const ctx = await noCodeOrg();
    expect(await noCodeFlag(ctx.registryModule.id)).toBe(1);
    injectD1Failure(FLAG_UPDATE);
    expect((await tfe("DELETE", `no-code-modules/${ctx.noCodeModuleId}`, { token: ctx.ownerToken })).status).toBe(500);
    expect(await noCodeModulesOf(ctx.registryModule.id)).toHaveLength(1);
    expect(await noCodeFlag(ctx.registryModule.id)).toBe(1);
    expect((await tfe("DELETE", `no-code-modules/${ctx.noCodeModuleId}`, { token: ctx.ownerToken })).status).toBe(204);
    expect(await noCodeModulesOf(ctx.registryModule.id)).toEqual([]);
    expect(await noCodeFlag(ctx.registryModule.id)).toBe(0);
  });
});

describe("an upload spends its link only with the stored tarball", () => {
  async function pendingVersion() {
    const org = await bootstrapOrg();
    const mod = await createRegistryModule(org.org, org.ownerToken);
    const version = await createPendingVersion(org.org, mod, "1.0.0", org.ownerToken);
    return { mod, version };
  }
  const versionRow = (id: string) =>
    env.DB.prepare("SELECT status, tarball_key FROM registry_module_versions WHERE id = ?")
      .bind(id)
      .first<{ status: string; tarball_key: string | null }>();

  it("a failed D1 write leaves the version pending, no object in R2 and the link usable", async () => {
    const { mod, version } = await pendingVersion();
    const tarball = await buildTarball(fixtureFiles("random-pet"));
    injectD1Failure(/^update "registry_module_versions" set "status"/);
    expect((await upload(version.upload, tarball)).status).toBe(500);
    expect(await versionRow(version.id)).toEqual({ status: "pending", tarball_key: null });
    expect(await storedObjects(mod.id, version.id)).toEqual([]);

    expect((await upload(version.upload, tarball)).status).toBe(200);
    const key = (await versionRow(version.id))?.tarball_key;
    expect(await storedObjects(mod.id, version.id)).toEqual([key]);
    expect((await upload(version.upload, tarball)).status).toBe(404);
  });

  it("an interrupted body is 400 and changes nothing; the link still works", async () => {
    const { mod, version } = await pendingVersion();
    const broken = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(1024));
        controller.error(new Error("client went away"));
      },
    });
    // Straight to the Worker's fetch handler: a client-side stream error must reach the
    // handler as a failed body read (through exports.default.fetch it only ends the body).
    const res = await workerRequest(version.upload, { method: "PUT", body: broken, duplex: "half" } as RequestInit);
    expect(res.status).toBe(400);
    expect(await versionRow(version.id)).toEqual({ status: "pending", tarball_key: null });
    expect(await storedObjects(mod.id, version.id)).toEqual([]);
    expect((await upload(version.upload, await buildTarball(fixtureFiles("random-pet")))).status).toBe(200);
  });
});
