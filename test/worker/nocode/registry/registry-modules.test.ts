/**
 * Private registry modules (N9; HCP Terraform's private registry API): create, read by id and by address, list,
 * delete, and their validation. Permissions per token kind are in
 * registry-permissions.test.ts.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { tfe } from "../../../helpers/nocode";
import { buildTarball } from "../../../support/tarball";
import {
  createModule,
  createVersion,
  moduleDoc,
  modulePath,
  type RegistryOrg,
  recordedTarballKey,
  registryOrg,
  uniqueName,
  upload,
} from "./registry-fixtures";

let ctx: RegistryOrg;
beforeAll(async () => {
  ctx = await registryOrg();
});

const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe("POST /organizations/:org/registry-modules", () => {
  it("creates a private module: 201, HCP's registry-modules shape (N1, N2)", async () => {
    const name = uniqueName("vpc");
    const res = await tfe("POST", `organizations/${ctx.org}/registry-modules`, {
      token: ctx.tokens.manager,
      body: moduleDoc(name),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("content-type")).toBe("application/vnd.api+json");
    const data = res.json.data;
    expect(data.id).toMatch(/^mod-[A-Za-z0-9]{16}$/);
    expect(data.type).toBe("registry-modules");
    expect(data.attributes).toMatchObject({
      name,
      namespace: ctx.org,
      provider: "aws",
      "registry-name": "private",
      "no-code": false,
      status: "pending",
      "version-statuses": [],
      permissions: { "can-delete": true, "can-resync": true, "can-retry": true },
    });
    expect(data.attributes["created-at"]).toMatch(ISO_Z);
    expect(data.attributes["updated-at"]).toMatch(ISO_Z);
    expect(data.relationships.organization).toEqual({
      data: { id: ctx.org, type: "organizations" },
      links: { related: `/api/v2/organizations/${ctx.org}` },
    });
    expect(data.relationships["no-code-modules"]).toEqual({ data: [] });
    // HCP Terraform's private registry API: links.self is the by-name path.
    expect(data.links.self).toBe(`/api/v2/organizations/${ctx.org}/registry-modules/private/${ctx.org}/${name}/aws`);
  });

  it("accepts the singular type, a missing registry-name and the organization as namespace (N1)", async () => {
    const name = uniqueName("m");
    const res = await tfe("POST", `organizations/${ctx.org}/registry-modules`, {
      token: ctx.tokens.owner,
      body: { data: { type: "registry-module", attributes: { name, provider: "google", namespace: ctx.org } } },
      headers: { "Content-Type": "application/json" },
    });
    expect(res.status).toBe(201);
    expect(res.json.data.attributes["registry-name"]).toBe("private");
  });

  it("records the legacy no-code flag and creates an enabled no-code module with it (N9)", async () => {
    const name = uniqueName("nc");
    const res = await tfe("POST", `organizations/${ctx.org}/registry-modules`, {
      token: ctx.tokens.manager,
      body: moduleDoc(name, "aws", { "no-code": true }),
    });
    expect(res.status).toBe(201);
    expect(res.json.data.attributes["no-code"]).toBe(true);
    const read = await tfe("GET", modulePath(ctx.org, name), { token: ctx.tokens.member });
    expect(read.json.data.attributes["no-code"]).toBe(true);
    const refs = read.json.data.relationships["no-code-modules"].data;
    expect(refs).toHaveLength(1);
    const noCode = await tfe("GET", `no-code-modules/${refs[0].id}`, { token: ctx.tokens.member });
    expect(noCode.status).toBe(200);
    expect(noCode.json.data.attributes.enabled).toBe(true);
    expect(noCode.json.data.relationships["registry-module"].data.id).toBe(res.json.data.id);
  });

  it("refuses a second module with the same name and provider (422), but not another provider", async () => {
    const { name } = await createModule(ctx.org, ctx.tokens.manager);
    const again = await tfe("POST", `organizations/${ctx.org}/registry-modules`, {
      token: ctx.tokens.manager,
      body: moduleDoc(name),
    });
    expect(again.status).toBe(422);
    expect(again.json.errors).toEqual([
      {
        status: "422",
        title: "invalid attribute",
        detail: "Name has already been taken for this provider",
        source: { pointer: "/data/attributes/name" },
      },
    ]);
    const other = await tfe("POST", `organizations/${ctx.org}/registry-modules`, {
      token: ctx.tokens.manager,
      body: moduleDoc(name, "azurerm"),
    });
    expect(other.status).toBe(201);
  });

  it.each([
    ["no name", { data: { type: "registry-modules", attributes: { provider: "aws" } } }, ["/data/attributes/name"]],
    ["a bad name", moduleDoc("-bad name-"), ["/data/attributes/name"]],
    ["a name over 64 characters", moduleDoc("a".repeat(65)), ["/data/attributes/name"]],
    ["an upper-case provider", moduleDoc("ok", "AWS"), ["/data/attributes/provider"]],
    ["no provider", { data: { type: "registry-modules", attributes: { name: "ok" } } }, ["/data/attributes/provider"]],
    ["the public registry", moduleDoc("ok", "aws", { "registry-name": "public" }), ["/data/attributes/registry-name"]],
    ["a foreign namespace", moduleDoc("ok", "aws", { namespace: "someone-else" }), ["/data/attributes/namespace"]],
    ["a non-boolean no-code", moduleDoc("ok", "aws", { "no-code": "yes" }), ["/data/attributes/no-code"]],
    ["a VCS repository", moduleDoc("ok", "aws", { "vcs-repo": { identifier: "a/b" } }), ["/data/attributes/vcs-repo"]],
    [
      "several mistakes at once",
      { data: { type: "registry-modules", attributes: { name: "", provider: "A B" } } },
      ["/data/attributes/name", "/data/attributes/provider"],
    ],
    ["a wrong type", { data: { type: "workspaces", attributes: { name: "ok", provider: "aws" } } }, ["/data/type"]],
    ["no data", { name: "ok" }, ["/data"]],
    ["non-object attributes", { data: { type: "registry-modules", attributes: [] } }, ["/data/attributes"]],
  ])("answers 422 with pointers for %s and creates nothing", async (_what, body, pointers) => {
    const before = await tfe("GET", `organizations/${ctx.org}/registry-modules?page[size]=100`, {
      token: ctx.tokens.owner,
    });
    const res = await tfe("POST", `organizations/${ctx.org}/registry-modules`, { token: ctx.tokens.manager, body });
    expect(res.status).toBe(422);
    expect(res.json.errors.map((e: { source: { pointer: string } }) => e.source.pointer)).toEqual(pointers);
    for (const e of res.json.errors) {
      expect(e.status).toBe("422");
      expect(e.title).toBe("invalid attribute");
      expect(typeof e.detail).toBe("string");
    }
    const after = await tfe("GET", `organizations/${ctx.org}/registry-modules?page[size]=100`, {
      token: ctx.tokens.owner,
    });
    expect(after.json.meta.pagination["total-count"]).toBe(before.json.meta.pagination["total-count"]);
  });

  it("answers 400 for malformed JSON and 413 over B5's 1 MiB", async () => {
    const bad = await tfe("POST", `organizations/${ctx.org}/registry-modules`, {
      token: ctx.tokens.manager,
      rawBody: "{nope",
    });
    expect(bad.status).toBe(400);
    expect(bad.json.errors[0].title).toBe("bad request");
    const big = JSON.stringify(moduleDoc("big", "aws", { padding: "x".repeat(1024 * 1024) }));
    const large = await tfe("POST", `organizations/${ctx.org}/registry-modules`, {
      token: ctx.tokens.manager,
      rawBody: big,
    });
    expect(large.status).toBe(413);
    expect(large.json.errors[0].status).toBe("413");
  });

  it("answers 404 for an unknown organization", async () => {
    const res = await tfe("POST", `organizations/${uniqueName("nope")}/registry-modules`, {
      token: ctx.tokens.owner,
      body: moduleDoc("x"),
    });
    expect(res.status).toBe(404);
  });
});

describe("GET /registry-modules/:id and by address", () => {
  it("returns the same document both ways; 404 for unknown ids and addresses", async () => {
    const { id, name } = await createModule(ctx.org, ctx.tokens.manager);
    const byId = await tfe("GET", `registry-modules/${id}`, { token: ctx.tokens.member });
    const byName = await tfe("GET", modulePath(ctx.org, name), { token: ctx.tokens.member });
    expect(byId.status).toBe(200);
    expect(byName.status).toBe(200);
    expect(byId.json).toEqual(byName.json);
    expect(byId.json.data.id).toBe(id);
    // A plain member may read but not delete.
    expect(byId.json.data.attributes.permissions["can-delete"]).toBe(false);

    const notFound = { errors: [{ status: "404", title: "not found" }] };
    for (const path of [
      "registry-modules/mod-AAAAAAAAAAAAAAAA",
      "registry-modules/nonsense",
      modulePath(ctx.org, uniqueName("none")),
      modulePath(ctx.org, name, "gcp"),
      `organizations/${ctx.org}/registry-modules/public/${ctx.org}/${name}/aws`,
      `organizations/${ctx.org}/registry-modules/private/other-namespace/${name}/aws`,
    ]) {
      const res = await tfe("GET", path, { token: ctx.tokens.owner });
      expect(res.status, path).toBe(404);
      expect(res.json, path).toEqual(notFound);
    }
  });

  it("lists version statuses, highest version first, with status and error (N9)", async () => {
    const { name } = await createModule(ctx.org, ctx.tokens.manager);
    await createVersion(ctx.org, name, "1.0.0", ctx.tokens.manager);
    await createVersion(ctx.org, name, "1.10.0", ctx.tokens.manager);
    const { upload: link } = await createVersion(ctx.org, name, "1.2.0-beta.1", ctx.tokens.manager);
    // Over 10 MiB: 413, and the version is failed at once (B5).
    expect((await upload(link, new Uint8Array(10 * 1024 * 1024 + 1))).status).toBe(413);
    const res = await tfe("GET", modulePath(ctx.org, name), { token: ctx.tokens.member });
    expect(res.json.data.attributes.status).toBe("pending");
    expect(res.json.data.attributes["version-statuses"]).toEqual([
      { version: "1.10.0", status: "pending", error: null },
      {
        version: "1.2.0-beta.1",
        status: "reg_ingress_failed",
        error: "module tarball is larger than the limit of 10 MiB (compressed)",
      },
      { version: "1.0.0", status: "pending", error: null },
    ]);
  });
});

describe("GET /organizations/:org/registry-modules", () => {
  it("lists the organization's modules with JSON:API pagination", async () => {
    const { org, tokens } = await registryOrg();
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await createModule(org, tokens.manager));
    const all = await tfe("GET", `organizations/${org}/registry-modules`, { token: tokens.member });
    expect(all.status).toBe(200);
    expect(all.json.data.map((m: { id: string }) => m.id).sort()).toEqual(made.map((m) => m.id).sort());
    expect(all.json.meta.pagination).toEqual({
      "current-page": 1,
      "page-size": 20,
      "prev-page": null,
      "next-page": null,
      "total-pages": 1,
      "total-count": 3,
    });
    const page2 = await tfe("GET", `organizations/${org}/registry-modules?page%5Bnumber%5D=2&page%5Bsize%5D=2`, {
      token: tokens.member,
    });
    expect(page2.json.data).toHaveLength(1);
    expect(page2.json.meta.pagination).toMatchObject({
      "current-page": 2,
      "page-size": 2,
      "prev-page": 1,
      "next-page": null,
      "total-pages": 2,
    });
    expect(page2.json.links.first).toMatch(
      /^http:\/\/keyway\.test\/api\/v2\/organizations\/.+page%5Bnumber%5D=1&page%5Bsize%5D=2$/,
    );
    expect(page2.json.links.next).toBeNull();
    // Names are ordered; the second page continues the first.
    const page1 = await tfe("GET", `organizations/${org}/registry-modules?page[number]=1&page[size]=2`, {
      token: tokens.member,
    });
    const names = [...page1.json.data, ...page2.json.data].map(
      (m: { attributes: { name: string } }) => m.attributes.name,
    );
    expect(names).toEqual([...made.map((m) => m.name)].sort());
  });

  it("filters by provider and name; never shows another organization's modules", async () => {
    const { org, tokens } = await registryOrg();
    const a = await createModule(org, tokens.manager, "aws");
    const b = await createModule(org, tokens.manager, "google");
    await createModule(ctx.org, ctx.tokens.manager, "aws");
    const byProvider = await tfe("GET", `organizations/${org}/registry-modules?filter[provider]=google`, {
      token: tokens.member,
    });
    expect(byProvider.json.data.map((m: { id: string }) => m.id)).toEqual([b.id]);
    const byName = await tfe("GET", `organizations/${org}/registry-modules?q=${a.name.slice(-6).toUpperCase()}`, {
      token: tokens.member,
    });
    expect(byName.json.data.map((m: { id: string }) => m.id)).toEqual([a.id]);
    const all = await tfe("GET", `organizations/${org}/registry-modules`, { token: tokens.member });
    expect(all.json.meta.pagination["total-count"]).toBe(2);
  });

  it("includes no-code modules with include=no-code-modules and answers 400 for any other include", async () => {
    const { org, tokens } = await registryOrg();
    const legacy = uniqueName("nc");
    const created = await tfe("POST", `organizations/${org}/registry-modules`, {
      token: tokens.manager,
      body: moduleDoc(legacy, "aws", { "no-code": true }),
    });
    expect(created.status).toBe(201);
    const plain = await createModule(org, tokens.manager);

    const without = await tfe("GET", `organizations/${org}/registry-modules`, { token: tokens.member });
    expect(without.json.included).toBeUndefined();
    const ok = await tfe("GET", `organizations/${org}/registry-modules?include=no-code-modules`, {
      token: tokens.member,
    });
    expect(ok.status).toBe(200);
    type ModuleDoc = {
      id: string;
      attributes: Record<string, unknown>;
      relationships: Record<string, { data: { id: string; type: string }[] }>;
    };
    const docs = ok.json.data as ModuleDoc[];
    const legacyDoc = docs.find((m) => m.id === created.json.data.id)!;
    const plainDoc = docs.find((m) => m.id === plain.id)!;
    expect(legacyDoc.attributes["no-code"]).toBe(true);
    expect(legacyDoc.relationships["no-code-modules"]!.data).toHaveLength(1);
    const ref = legacyDoc.relationships["no-code-modules"]!.data[0]!;
    expect(ref.type).toBe("no-code-modules");
    expect(plainDoc.relationships["no-code-modules"]!.data).toEqual([]);
    expect(ok.json.included.map((r: { id: string; type: string }) => [r.id, r.type])).toEqual([
      [ref.id, "no-code-modules"],
    ]);

    const bad = await tfe("GET", `organizations/${org}/registry-modules?include=workspaces`, { token: tokens.member });
    expect(bad.status).toBe(400);
    expect(bad.json.errors).toEqual([
      { status: "400", title: "bad request", detail: "Invalid include parameter", source: { parameter: "include" } },
    ]);
  });
});

describe("DELETE …/registry-modules/private/:org/:name/:provider", () => {
  it("deletes the module, its versions, upload links and stored tarballs (204)", async () => {
    const { id, name } = await createModule(ctx.org, ctx.tokens.manager);
    const v1 = await createVersion(ctx.org, name, "1.0.0", ctx.tokens.manager);
    const v2 = await createVersion(ctx.org, name, "2.0.0", ctx.tokens.manager);
    expect((await upload(v1.upload, await buildTarball({ "main.tf": "" }))).status).toBe(200);
    const key = (await recordedTarballKey(v1.id))!;
    expect(await env.MODULES.head(key)).not.toBeNull();

    const res = await tfe("DELETE", modulePath(ctx.org, name), { token: ctx.tokens.manager });
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    expect((await tfe("GET", modulePath(ctx.org, name), { token: ctx.tokens.owner })).status).toBe(404);
    expect((await tfe("GET", `registry-modules/${id}`, { token: ctx.tokens.owner })).status).toBe(404);
    expect(await env.MODULES.head(key)).toBeNull();
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM registry_module_versions WHERE module_id = ?")
      .bind(id)
      .first<{ n: number }>();
    expect(rows?.n).toBe(0);
    const links = await env.DB.prepare("SELECT count(*) AS n FROM registry_upload_links WHERE version_id IN (?, ?)")
      .bind(v1.id, v2.id)
      .first<{ n: number }>();
    expect(links?.n).toBe(0);
    // The unused link of the deleted version is dead.
    expect((await upload(v2.upload, await buildTarball({ "main.tf": "" }))).status).toBe(404);
    // The name is free again.
    const again = await tfe("POST", `organizations/${ctx.org}/registry-modules`, {
      token: ctx.tokens.manager,
      body: moduleDoc(name),
    });
    expect(again.status).toBe(201);
    expect(again.json.data.attributes["version-statuses"]).toEqual([]);
  });

  it("answers 404 for a module that does not exist", async () => {
    const res = await tfe("DELETE", modulePath(ctx.org, uniqueName("gone")), { token: ctx.tokens.owner });
    expect(res.status).toBe(404);
  });
});
