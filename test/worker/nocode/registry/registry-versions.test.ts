/**
 * Registry module versions (N3, N9; HCP Terraform's private registry API): create (201 with the single-use
 * `links.upload`), read with `module_version`, and the upload link itself: single use,
 * valid one hour, 413 over B5's 10 MiB (the version then fails at once).
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { tfe } from "../../../helpers/nocode";
import { buildTarball } from "../../../support/tarball";
import {
  createModule,
  createVersion,
  modulePath,
  type RegistryOrg,
  readVersion,
  recordedTarballKey,
  registryOrg,
  storedObjects,
  upload,
  versionDoc,
} from "./registry-fixtures";

let ctx: RegistryOrg;
beforeAll(async () => {
  ctx = await registryOrg();
});

const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const MiB = 1024 * 1024;

const versionRow = (id: string) =>
  env.DB.prepare("SELECT status, error, tarball_key, summary FROM registry_module_versions WHERE id = ?")
    .bind(id)
    .first<{ status: string; error: string | null; tarball_key: string | null; summary: string | null }>();

/** A tarball that ingests fine. */
const goodTarball = () => buildTarball({ "main.tf": 'resource "null_resource" "x" {}\n' });

describe("POST …/private/:org/:name/:provider/versions", () => {
  it("creates a pending version: 201, registry-module-versions, absolute single-use links.upload", async () => {
    const mod = await createModule(ctx.org, ctx.tokens.manager);
    const res = await tfe("POST", `${modulePath(ctx.org, mod.name)}/versions`, {
      token: ctx.tokens.manager,
      body: versionDoc("1.2.3", { "commit-sha": "abc123" }),
    });
    expect(res.status).toBe(201);
    const data = res.json.data;
    expect(data.id).toMatch(/^modver-[A-Za-z0-9]{16}$/);
    expect(data.type).toBe("registry-module-versions");
    expect(data.attributes).toMatchObject({
      source: "tfe-api",
      status: "pending",
      version: "1.2.3",
      error: null,
      "commit-sha": "abc123",
      variables: null,
      outputs: null,
      providers: null,
      resources: null,
    });
    expect(data.attributes["created-at"]).toMatch(ISO_Z);
    expect(data.relationships["registry-module"]).toEqual({
      data: { id: mod.id, type: "registry-modules" },
      links: { related: `/api/v2/registry-modules/${mod.id}` },
    });
    expect(data.links.self).toBe(`/api/v2/${modulePath(ctx.org, mod.name)}/version?module_version=1.2.3`);
    // N9: absolute, on the request's origin, under the tokenless prefix (N2a).
    expect(data.links.upload).toMatch(/^http:\/\/keyway\.test\/api\/v2\/uploads\/[A-Za-z0-9_-]{43}$/);
    // B2: only a keyed hash of the link's token is stored.
    const token = data.links.upload.split("/").pop();
    const stored = await env.DB.prepare(
      "SELECT token_hash, expires_at, used_at, created_at FROM registry_upload_links WHERE version_id = ?",
    )
      .bind(data.id)
      .first<{ token_hash: string; expires_at: number; used_at: number | null; created_at: number }>();
    expect(stored?.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(stored?.token_hash).not.toContain(token);
    expect(stored?.used_at).toBeNull();
    expect(stored!.expires_at - stored!.created_at).toBe(60 * 60 * 1000);
  });

  it("issues a different link for each version, and links.upload only on create", async () => {
    const mod = await createModule(ctx.org, ctx.tokens.manager);
    const a = await createVersion(ctx.org, mod.name, "1.0.0", ctx.tokens.manager);
    const b = await createVersion(ctx.org, mod.name, "1.0.1", ctx.tokens.manager);
    expect(a.upload).not.toBe(b.upload);
    const read = await readVersion(ctx.org, mod.name, "1.0.0", ctx.tokens.member);
    expect(read.json.data.links.upload).toBeUndefined();
  });

  it("accepts pre-releases and build metadata, and the singular type (N1)", async () => {
    const mod = await createModule(ctx.org, ctx.tokens.manager);
    for (const version of ["0.0.1", "1.0.0-rc.1", "1.0.0-alpha.beta+exp.sha.5114f85", "10.20.30"]) {
      const res = await tfe("POST", `${modulePath(ctx.org, mod.name)}/versions`, {
        token: ctx.tokens.manager,
        body: { data: { type: "registry-module-version", attributes: { version } } },
      });
      expect(res.status, version).toBe(201);
    }
  });

  it.each([
    ["missing", {}],
    ["empty", { version: "" }],
    ["not semver", { version: "1.0" }],
    ["a leading v", { version: "v1.0.0" }],
    ["leading zeros", { version: "01.0.0" }],
    ["a number", { version: 1 }],
    ["spaces", { version: "1.0.0 " }],
  ])("answers 422 for a version that is %s", async (_what, attributes) => {
    const mod = await createModule(ctx.org, ctx.tokens.manager);
    const res = await tfe("POST", `${modulePath(ctx.org, mod.name)}/versions`, {
      token: ctx.tokens.manager,
      body: { data: { type: "registry-module-versions", attributes } },
    });
    expect(res.status).toBe(422);
    expect(res.json.errors[0]).toMatchObject({
      status: "422",
      title: "invalid attribute",
      source: { pointer: "/data/attributes/version" },
    });
    const statuses = (await tfe("GET", modulePath(ctx.org, mod.name), { token: ctx.tokens.owner })).json.data
      .attributes["version-statuses"];
    expect(statuses).toEqual([]);
  });

  it("answers 422 for a non-string commit-sha and for a wrong type", async () => {
    const mod = await createModule(ctx.org, ctx.tokens.manager);
    const sha = await tfe("POST", `${modulePath(ctx.org, mod.name)}/versions`, {
      token: ctx.tokens.manager,
      body: versionDoc("1.0.0", { "commit-sha": 42 }),
    });
    expect(sha.status).toBe(422);
    expect(sha.json.errors[0].source.pointer).toBe("/data/attributes/commit-sha");
    const type = await tfe("POST", `${modulePath(ctx.org, mod.name)}/versions`, {
      token: ctx.tokens.manager,
      body: { data: { type: "registry-modules", attributes: { version: "1.0.0" } } },
    });
    expect(type.status).toBe(422);
    expect(type.json.errors[0].source.pointer).toBe("/data/type");
  });

  it("answers 422 for a version that exists already", async () => {
    const mod = await createModule(ctx.org, ctx.tokens.manager);
    await createVersion(ctx.org, mod.name, "1.0.0", ctx.tokens.manager);
    const res = await tfe("POST", `${modulePath(ctx.org, mod.name)}/versions`, {
      token: ctx.tokens.manager,
      body: versionDoc("1.0.0"),
    });
    expect(res.status).toBe(422);
    expect(res.json.errors[0]).toEqual({
      status: "422",
      title: "invalid attribute",
      detail: "Version has already been taken",
      source: { pointer: "/data/attributes/version" },
    });
  });

  it("answers 404 for an unknown module", async () => {
    const res = await tfe("POST", `${modulePath(ctx.org, "no-such-module")}/versions`, {
      token: ctx.tokens.owner,
      body: versionDoc("1.0.0"),
    });
    expect(res.status).toBe(404);
  });
});

describe("GET …/private/:org/:name/:provider/version?module_version=X", () => {
  it("answers 404 for an unknown version and 400 without module_version", async () => {
    const mod = await createModule(ctx.org, ctx.tokens.manager);
    await createVersion(ctx.org, mod.name, "1.0.0", ctx.tokens.manager);
    expect((await readVersion(ctx.org, mod.name, "1.0.1", ctx.tokens.member)).status).toBe(404);
    const missing = await tfe("GET", `${modulePath(ctx.org, mod.name)}/version`, { token: ctx.tokens.member });
    expect(missing.status).toBe(400);
    expect(missing.json.errors[0].detail).toContain("module_version");
  });
});

describe("PUT <links.upload> (N9, B5)", () => {
  it("stores the tarball in R2, answers 200 with no body, and queues ingestion", async () => {
    const mod = await createModule(ctx.org, ctx.tokens.manager);
    const v = await createVersion(ctx.org, mod.name, "1.0.0", ctx.tokens.manager);
    const tarball = await goodTarball();
    const res = await upload(v.upload, tarball);
    expect(res).toEqual({ status: 200, text: "" });
    // B16: the attempt's own key, recorded on the version, the only object of the version.
    const key = await recordedTarballKey(v.id);
    expect(key).toMatch(new RegExp(`^registry-modules/${mod.id}/${v.id}/[A-Za-z0-9_-]{22}\\.tar\\.gz$`));
    expect(await storedObjects(mod.id, v.id)).toEqual([key]);
    const object = await env.MODULES.get(key!);
    expect(object).not.toBeNull();
    expect(new Uint8Array(await object!.arrayBuffer())).toEqual(tarball);
    const row = await versionRow(v.id);
    expect(["reg_ingressing", "ok"]).toContain(row?.status);
  });

  it("is single-use: a second PUT is 404 and changes nothing", async () => {
    const mod = await createModule(ctx.org, ctx.tokens.manager);
    const v = await createVersion(ctx.org, mod.name, "1.0.0", ctx.tokens.manager);
    expect((await upload(v.upload, await goodTarball())).status).toBe(200);
    const key = (await recordedTarballKey(v.id))!;
    const first = await env.MODULES.head(key);
    const again = await upload(v.upload, await buildTarball({ "other.tf": "" }));
    expect(again.status).toBe(404);
    expect(JSON.parse(again.text)).toEqual({ errors: [{ status: "404", title: "not found" }] });
    expect((await env.MODULES.head(key))?.etag).toBe(first?.etag);
    expect(await storedObjects(mod.id, v.id)).toEqual([key]);
  });

  it("has exactly one winner when two PUTs race on one link", async () => {
    const mod = await createModule(ctx.org, ctx.tokens.manager);
    const v = await createVersion(ctx.org, mod.name, "1.0.0", ctx.tokens.manager);
    const tarball = await goodTarball();
    const results = await Promise.all([
      upload(v.upload, tarball),
      upload(v.upload, tarball),
      upload(v.upload, tarball),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 404, 404]);
    // B16: the losers deleted their own objects; only the recorded one is left.
    expect(await storedObjects(mod.id, v.id)).toEqual([await recordedTarballKey(v.id)]);
  });

  it("expires after one hour: then 404, and the version stays pending", async () => {
    const mod = await createModule(ctx.org, ctx.tokens.manager);
    const v = await createVersion(ctx.org, mod.name, "1.0.0", ctx.tokens.manager);
    // Move the link's expiry into the past rather than waiting an hour.
    await env.DB.prepare("UPDATE registry_upload_links SET expires_at = ? WHERE version_id = ?")
      .bind(Date.now() - 1, v.id)
      .run();
    const res = await upload(v.upload, await goodTarball());
    expect(res.status).toBe(404);
    expect(await versionRow(v.id)).toEqual({ status: "pending", error: null, tarball_key: null, summary: null });
    expect(await storedObjects(mod.id, v.id)).toEqual([]);
  });

  it("answers 404 for made-up and malformed links", async () => {
    for (const token of ["A".repeat(43), "short", "A".repeat(44), `${"A".repeat(42)}!`]) {
      const res = await upload(`http://keyway.test/api/v2/uploads/${encodeURIComponent(token)}`, await goodTarball());
      expect(res.status, token).toBe(404);
    }
  });

  it("refuses over 10 MiB with 413; the version becomes reg_ingress_failed and nothing is stored (B5)", async () => {
    const mod = await createModule(ctx.org, ctx.tokens.manager);
    const v = await createVersion(ctx.org, mod.name, "1.0.0", ctx.tokens.manager);
    const other = await createVersion(ctx.org, mod.name, "2.0.0", ctx.tokens.manager);
    const res = await upload(v.upload, new Uint8Array(10 * MiB + 1));
    expect(res.status).toBe(413);
    expect(JSON.parse(res.text).errors[0]).toMatchObject({ status: "413", title: "payload too large" });
    const read = await readVersion(ctx.org, mod.name, "1.0.0", ctx.tokens.member);
    expect(read.json.data.attributes).toMatchObject({
      status: "reg_ingress_failed",
      error: "module tarball is larger than the limit of 10 MiB (compressed)",
      variables: null,
    });
    expect(await storedObjects(mod.id, v.id)).toEqual([]);
    // The link is spent, and the module's other version is untouched.
    expect((await upload(v.upload, await goodTarball())).status).toBe(404);
    expect((await versionRow(other.id))?.status).toBe("pending");
  });

  it("refuses a streamed body over 10 MiB that declares no length", async () => {
    const mod = await createModule(ctx.org, ctx.tokens.manager);
    const v = await createVersion(ctx.org, mod.name, "1.0.0", ctx.tokens.manager);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > 11 * MiB) return controller.close();
        sent += MiB;
        controller.enqueue(new Uint8Array(MiB));
      },
    });
    const res = await upload(v.upload, body);
    expect(res.status).toBe(413);
    expect((await versionRow(v.id))?.status).toBe("reg_ingress_failed");
  });

  it("accepts exactly 10 MiB; a body that is not gzip is refused later, by ingestion", async () => {
    const mod = await createModule(ctx.org, ctx.tokens.manager);
    const v = await createVersion(ctx.org, mod.name, "1.0.0", ctx.tokens.manager);
    const res = await upload(v.upload, new Uint8Array(10 * MiB));
    expect(res.status).toBe(200);
  });
});
