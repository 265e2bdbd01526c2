/**
 * B16: a slow second PUT on an upload link can never change what `terraform init` or a
 * run receives. Each attempt writes its own R2 object; the one D1 batch that spends the
 * link records the winner's key; the loser answers 404 and deletes its own object; the
 * hourly cron deletes objects of attempts that never finished, after one hour.
 *
 * The race: PUT B presents the link and starts sending its body, then stalls; PUT A
 * uploads, wins and is ingested (`ok`); only then does B finish its body (a module with a
 * resource nobody ingested). Before B16 both wrote the same per-version key, so B's bytes
 * replaced A's after ingestion had checked A's.
 */
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { createDb } from "../../../../src/db/client";
import worker, { handleFetch } from "../../../../src/index";
import { sweepAbandonedUploads } from "../../../../src/nocode/registry/uploads";
import { summaryOfVersion } from "../../../../src/nocode/runs/configuration";
import { workerRequest } from "../../../helpers/worker-request";
import { buildTarball } from "../../../support/tarball";
import {
  createModule,
  createVersion,
  type RegistryOrg,
  readVersion,
  recordedTarballKey,
  registryOrg,
  storedObjects,
  upload,
} from "./registry-fixtures";

let ctx: RegistryOrg;
beforeAll(async () => {
  ctx = await registryOrg();
});

const honest = () => buildTarball({ "main.tf": 'resource "random_pet" "honest" {}\n' });
const attemptsOf = async (versionId: string) =>
  (
    await env.DB.prepare("SELECT object_key FROM registry_upload_attempts WHERE version_id = ? ORDER BY object_key")
      .bind(versionId)
      .all<{ object_key: string }>()
  ).results.map((r) => r.object_key);
const injected = () => buildTarball({ "main.tf": 'resource "null_resource" "injected" {}\n' });

/** A request body that sends nothing until `release()`, then `bytes`; `started` settles once it is first read. */
function stalledBody(bytes: Promise<Uint8Array>) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => {
    markStarted = resolve;
  });
  let sent = false;
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      markStarted();
      if (sent) return controller.close();
      await released;
      controller.enqueue(await bytes);
      sent = true;
    },
  });
  return { stream, started, release };
}

async function waitForOk(name: string, version: string): Promise<void> {
  await vi.waitFor(
    async () => {
      const read = await readVersion(ctx.org, name, version, ctx.tokens.manager);
      const status = read.json?.data?.attributes?.status;
      if (status !== "ok") throw new Error(`version is ${status}`);
    },
    { timeout: 25_000, interval: 50 },
  );
}

/** What `terraform init` downloads: the registry protocol's download, then its signed link (no token). */
async function registryDownload(name: string, version: string): Promise<Uint8Array> {
  const where = await workerRequest(
    `http://keyway.test/api/registry/v1/modules/${ctx.org}/${name}/aws/${version}/download`,
    { method: "GET", headers: { Authorization: `Bearer ${ctx.tokens.manager}` } },
  );
  expect(where.status).toBe(204);
  const execution = createExecutionContext();
  const res = await handleFetch(new Request(where.headers.get("X-Terraform-Get")!), env, execution);
  const bytes = new Uint8Array(await res.arrayBuffer());
  await waitOnExecutionContext(execution);
  expect(res.status).toBe(200);
  return bytes;
}

describe("B16: two PUTs on one upload link, the second slow", () => {
  it("serves the first upload's bytes to terraform init and a run; the slow PUT answers 404 and leaves nothing", async () => {
    const mod = await createModule(ctx.org, ctx.tokens.manager);
    const v = await createVersion(ctx.org, mod.name, "1.0.0", ctx.tokens.manager);
    const first = await honest();
    const slow = stalledBody(injected());
    const slowPut = upload(v.upload, slow.stream);
    // B has presented the link and is reading its body (give its link check time to finish).
    await slow.started;
    await new Promise((resolve) => setTimeout(resolve, 200));

    expect((await upload(v.upload, first)).status).toBe(200);
    await waitForOk(mod.name, "1.0.0");
    slow.release();
    expect((await slowPut).status).toBe(404);

    // terraform init's path: download → signed link → the bytes of the recorded key.
    const download = await registryDownload(mod.name, "1.0.0");
    expect(download).toEqual(first);
    // What a run reads: the ingested summary of the version, and its recorded tarball.
    const summary = await summaryOfVersion(createDb(env.DB), v.id);
    expect(summary.resources.map((r) => `${r.type}.${r.name}`)).toEqual(["random_pet.honest"]);
    const key = (await recordedTarballKey(v.id))!;
    const stored = await env.MODULES.get(key);
    expect(new Uint8Array(await stored!.arrayBuffer())).toEqual(first);
    // The loser deleted its object and its attempt: only the recorded object is left.
    expect(await storedObjects(mod.id, v.id)).toEqual([key]);
    expect(await attemptsOf(v.id)).toEqual([]);
  });

  it("a version recorded before B16 keeps its per-version key: ingested, downloaded and read from it", async () => {
    const mod = await createModule(ctx.org, ctx.tokens.manager);
    const v = await createVersion(ctx.org, mod.name, "1.0.0", ctx.tokens.manager);
    expect((await upload(v.upload, await honest())).status).toBe(200);
    await waitForOk(mod.name, "1.0.0");
    // Move the object to the key every upload wrote before B16, and record that key.
    const legacy = `registry-modules/${mod.id}/${v.id}.tar.gz`;
    const current = (await recordedTarballKey(v.id))!;
    const bytes = new Uint8Array(await (await env.MODULES.get(current))!.arrayBuffer());
    await env.MODULES.put(legacy, bytes);
    await env.MODULES.delete(current);
    await env.DB.prepare("UPDATE registry_module_versions SET tarball_key = ? WHERE id = ?").bind(legacy, v.id).run();
    expect(await registryDownload(mod.name, "1.0.0")).toEqual(bytes);
  });
});

describe("B16: the hourly cron deletes the objects of attempts that never finished", () => {
  it("deletes unrecorded objects older than an hour and their rows; keeps younger ones and recorded keys", async () => {
    const mod = await createModule(ctx.org, ctx.tokens.manager);
    const v = await createVersion(ctx.org, mod.name, "1.0.0", ctx.tokens.manager);
    expect((await upload(v.upload, await honest())).status).toBe(200);
    const recorded = (await recordedTarballKey(v.id))!;
    const now = Date.now();
    const attempt = async (name: string, age: number) => {
      const key = `registry-modules/${mod.id}/${v.id}/${name}.tar.gz`;
      if (key !== recorded) await env.MODULES.put(key, await injected());
      await env.DB.prepare("INSERT INTO registry_upload_attempts (object_key, version_id, created_at) VALUES (?, ?, ?)")
        .bind(key, v.id, now - age)
        .run();
      return key;
    };
    const abandoned = await attempt("abandoned", 61 * 60 * 1000);
    const young = await attempt("young", 10 * 60 * 1000);
    // A row left for a recorded key (cannot happen through the batch; the sweep still spares the object).
    await env.DB.prepare("INSERT INTO registry_upload_attempts (object_key, version_id, created_at) VALUES (?, ?, ?)")
      .bind(recorded, v.id, now - 2 * 60 * 60 * 1000)
      .run();

    expect(await sweepAbandonedUploads(env, now)).toBeGreaterThanOrEqual(2);
    expect(await env.MODULES.head(abandoned)).toBeNull();
    expect(await env.MODULES.head(young)).not.toBeNull();
    expect(await env.MODULES.head(recorded)).not.toBeNull();
    expect(await attemptsOf(v.id)).toEqual([young]);
  });

  it("runs in the Worker's scheduled handler (the hourly cron trigger)", async () => {
    const mod = await createModule(ctx.org, ctx.tokens.manager);
    const v = await createVersion(ctx.org, mod.name, "1.0.0", ctx.tokens.manager);
    const key = `registry-modules/${mod.id}/${v.id}/abandoned.tar.gz`;
    await env.MODULES.put(key, await injected());
    await env.DB.prepare("INSERT INTO registry_upload_attempts (object_key, version_id, created_at) VALUES (?, ?, ?)")
      .bind(key, v.id, Date.now() - 2 * 60 * 60 * 1000)
      .run();
    const execution = createExecutionContext();
    await worker.scheduled!(createScheduledController({ cron: "17 * * * *" }), env, execution);
    await waitOnExecutionContext(execution);
    expect(await env.MODULES.head(key)).toBeNull();
    expect(await attemptsOf(v.id)).toEqual([]);
  });
});
