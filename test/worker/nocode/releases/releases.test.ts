/**
 * The release-list admin API of decision N6 (`/api/v2/admin/terraform-versions`,
 * ADMIN_TOKEN only, N10) and how its changes steer the resolver. Changes here use 7.x
 * versions so the seeded 1.x list stays recognisable.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDb } from "../../../../src/db/client";
import { resolveEngineVersion } from "../../../../src/nocode/releases/resolve";
import { ADMIN, bootstrapOrg, createMember, createOrgToken, createTeamToken, tfe } from "../../../helpers/nocode";

const db = () => createDb(env.DB);
const body = (attributes: Record<string, unknown>) => ({ data: { type: "terraform-versions", attributes } });

async function createRelease(attributes: Record<string, unknown>): Promise<string> {
  const res = await tfe("POST", "admin/terraform-versions", { body: body(attributes) });
  if (res.status !== 201) throw new Error(`create release: ${res.status} ${res.text}`);
  return res.json.data.id as string;
}

describe("GET /admin/terraform-versions", () => {
  it("lists the seeded releases newest first, paged (default 20, max 100)", async () => {
    const res = await tfe("GET", "admin/terraform-versions");
    expect(res.status).toBe(200);
    expect(res.json.data).toHaveLength(20);
    expect(res.json.meta.pagination["total-count"]).toBeGreaterThanOrEqual(132);
    const first = res.json.data.find((r: { attributes: { version: string } }) => r.attributes.version.startsWith("1."));
    expect(first.attributes).toMatchObject({
      version: "1.16.5",
      enabled: true,
      beta: false,
      deprecated: false,
      official: true,
    });
    expect(first.id).toMatch(/^tool-[A-Za-z0-9]{16}$/);
    expect(first.type).toBe("terraform-versions");
    const big = await tfe("GET", "admin/terraform-versions?page[size]=500");
    expect(big.json.data).toHaveLength(100);
    expect(big.json.meta.pagination["page-size"]).toBe(100);
  });

  it("filter[version] matches exactly, search[version] by substring", async () => {
    const exact = await tfe("GET", "admin/terraform-versions?filter[version]=1.5.7");
    expect(exact.json.data.map((r: { attributes: { version: string } }) => r.attributes.version)).toEqual(["1.5.7"]);
    const search = await tfe("GET", "admin/terraform-versions?search[version]=1.5.&page[size]=100");
    expect(search.json.data.map((r: { attributes: { version: string } }) => r.attributes.version)).toEqual([
      "1.5.7",
      "1.5.6",
      "1.5.5",
      "1.5.4",
      "1.5.3",
      "1.5.2",
      "1.5.1",
      "1.5.0",
    ]);
  });
});

describe("admin-only (N10)", () => {
  it("owners, members, team and organization tokens get 404 on every release endpoint", async () => {
    const { org, ownerToken, ownersTeamId } = await bootstrapOrg();
    const member = await createMember(org, { "manage-workspaces": true });
    const id = await createRelease({ version: "7.9.0", enabled: false });
    for (const token of [ownerToken, member.token, await createTeamToken(ownersTeamId), await createOrgToken(org)]) {
      expect((await tfe("GET", "admin/terraform-versions", { token })).status).toBe(404);
      expect((await tfe("POST", "admin/terraform-versions", { token, body: body({ version: "7.9.1" }) })).status).toBe(
        404,
      );
      expect((await tfe("GET", `admin/terraform-versions/${id}`, { token })).status).toBe(404);
      expect(
        (await tfe("PATCH", `admin/terraform-versions/${id}`, { token, body: body({ enabled: true }) })).status,
      ).toBe(404);
      expect((await tfe("DELETE", `admin/terraform-versions/${id}`, { token })).status).toBe(404);
    }
    const after = await tfe("GET", `admin/terraform-versions/${id}`);
    expect(after.json.data.attributes.enabled).toBe(false);
    expect((await tfe("GET", "admin/terraform-versions?filter[version]=7.9.1")).json.data).toEqual([]);
    expect((await tfe("GET", "admin/terraform-versions", { token: null })).status).toBe(401);
  });
});

describe("POST /admin/terraform-versions", () => {
  it("creates a release (201) with defaults: enabled, not beta, not deprecated, not official", async () => {
    const res = await tfe("POST", "admin/terraform-versions", {
      body: body({ version: "7.0.0", url: "https://example.test/tf.zip", sha: "abc" }),
    });
    expect(res.status).toBe(201);
    expect(res.json.data).toMatchObject({
      type: "terraform-versions",
      attributes: {
        version: "7.0.0",
        url: "https://example.test/tf.zip",
        sha: "abc",
        enabled: true,
        beta: false,
        deprecated: false,
        official: false,
        "deprecated-reason": null,
      },
      links: { self: `/api/v2/admin/terraform-versions/${res.json.data.id}` },
    });
    expect((await tfe("GET", `admin/terraform-versions/${res.json.data.id}`)).json.data.attributes.version).toBe(
      "7.0.0",
    );
  });

  it("a pre-release is beta unless told otherwise", async () => {
    const beta = await tfe("POST", "admin/terraform-versions", { body: body({ version: "7.0.1-beta1" }) });
    expect(beta.json.data.attributes.beta).toBe(true);
    const notBeta = await tfe("POST", "admin/terraform-versions", {
      body: body({ version: "7.0.1-custom", beta: false }),
    });
    expect(notBeta.json.data.attributes.beta).toBe(false);
  });

  it("422 Version has already been taken", async () => {
    const res = await tfe("POST", "admin/terraform-versions", { body: body({ version: "1.5.7" }) });
    expect(res.status).toBe(422);
    expect(res.json.errors[0]).toEqual({
      status: "422",
      title: "invalid attribute",
      detail: "Version has already been taken",
      source: { pointer: "/data/attributes/version" },
    });
  });

  it.each([
    [{}, "version"],
    [{ version: "7" }, "version"],
    [{ version: "7.1" }, "version"],
    [{ version: "v7.1.0" }, "version"],
    [{ version: "7.1.0.1" }, "version"],
    [{ version: "~> 7.1" }, "version"],
    [{ version: 7 }, "version"],
    [{ version: "7.1.5", enabled: "yes" }, "enabled"],
    [{ version: "7.1.5", beta: 1 }, "beta"],
    [{ version: "7.1.5", deprecated: null }, "deprecated"],
    [{ version: "7.1.5", url: 5 }, "url"],
  ])("422 for %j, and nothing is created", async (attributes, attr) => {
    const res = await tfe("POST", "admin/terraform-versions", { body: body(attributes) });
    expect(res.status).toBe(422);
    expect(res.json.errors[0].source.pointer).toBe(`/data/attributes/${attr}`);
    expect((await tfe("GET", "admin/terraform-versions?filter[version]=7.1.5")).json.data).toEqual([]);
  });

  it("400 for malformed JSON, 413 over 1 MiB; nothing is created", async () => {
    expect(
      (await tfe("POST", "admin/terraform-versions", { rawBody: '{"data":{"attributes":{"version":"7.1.6"}}' })).status,
    ).toBe(400);
    const big = JSON.stringify(body({ version: "7.1.6", url: "x".repeat(1024 * 1024) }));
    expect((await tfe("POST", "admin/terraform-versions", { rawBody: big })).status).toBe(413);
    expect((await tfe("GET", "admin/terraform-versions?filter[version]=7.1.6")).json.data).toEqual([]);
  });
});

describe("PATCH and DELETE /admin/terraform-versions/:id steer the resolver (N6)", () => {
  it("disabled and beta releases stop resolving; deprecated ones still do; deleted ones are gone", async () => {
    const v71 = await createRelease({ version: "7.5.1" });
    const v72 = await createRelease({ version: "7.5.2" });
    const v73 = await createRelease({ version: "7.5.3", enabled: false });
    const resolve = async () => {
      const r = await resolveEngineVersion(db(), "~> 7.5.0");
      return r.ok ? r.version : r.reason;
    };
    expect(await resolve()).toBe("7.5.2");

    const enabled = await tfe("PATCH", `admin/terraform-versions/${v73}`, { body: body({ enabled: true }) });
    expect(enabled.status).toBe(200);
    expect(enabled.json.data.attributes).toMatchObject({ version: "7.5.3", enabled: true });
    expect(await resolve()).toBe("7.5.3");

    await tfe("PATCH", `admin/terraform-versions/${v73}`, {
      body: body({ deprecated: true, "deprecated-reason": "old" }),
    });
    expect(await resolve()).toBe("7.5.3");
    expect((await tfe("GET", `admin/terraform-versions/${v73}`)).json.data.attributes).toMatchObject({
      deprecated: true,
      "deprecated-reason": "old",
      enabled: true,
    });

    await tfe("PATCH", `admin/terraform-versions/${v73}`, { body: body({ beta: true }) });
    expect(await resolve()).toBe("7.5.2");
    // …but it can still be named exactly.
    expect(await resolveEngineVersion(db(), "7.5.3")).toMatchObject({ ok: true, version: "7.5.3" });

    await tfe("PATCH", `admin/terraform-versions/${v72}`, { body: body({ enabled: false }) });
    expect(await resolve()).toBe("7.5.1");
    expect(await resolveEngineVersion(db(), "7.5.2")).toMatchObject({ ok: false, reason: "unavailable" });

    const del = await tfe("DELETE", `admin/terraform-versions/${v71}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe("");
    expect(await resolve()).toBe("unsatisfiable");
    expect((await tfe("GET", `admin/terraform-versions/${v71}`)).status).toBe(404);
    expect((await tfe("DELETE", `admin/terraform-versions/${v71}`)).status).toBe(404);
  });

  it("the default is the newest enabled non-beta release, so a new one becomes the default", async () => {
    await createRelease({ version: "8.0.0-beta1" });
    await createRelease({ version: "8.0.0", enabled: false });
    const before = await resolveEngineVersion(db(), undefined);
    expect(before.ok && before.version.startsWith("8.")).toBe(false);
    const id = await createRelease({ version: "8.0.1" });
    expect(await resolveEngineVersion(db(), undefined)).toMatchObject({ ok: true, version: "8.0.1" });
    await tfe("DELETE", `admin/terraform-versions/${id}`);
    expect(await resolveEngineVersion(db(), undefined)).toEqual(before);
  });

  it("PATCH validates like POST and leaves the release unchanged on error; unknown ids are 404", async () => {
    const id = await createRelease({ version: "7.6.0" });
    const taken = await tfe("PATCH", `admin/terraform-versions/${id}`, { body: body({ version: "1.5.7" }) });
    expect(taken.status).toBe(422);
    expect(taken.json.errors[0].detail).toBe("Version has already been taken");
    for (const attributes of [{ version: "bad" }, { version: null }, { enabled: "no" }]) {
      expect((await tfe("PATCH", `admin/terraform-versions/${id}`, { body: body(attributes) })).status).toBe(422);
    }
    expect((await tfe("PATCH", `admin/terraform-versions/${id}`, { rawBody: "{" })).status).toBe(400);
    expect((await tfe("GET", `admin/terraform-versions/${id}`)).json.data.attributes).toMatchObject({
      version: "7.6.0",
      enabled: true,
    });
    const renamed = await tfe("PATCH", `admin/terraform-versions/${id}`, { body: body({ version: "7.6.1" }) });
    expect(renamed.json.data.attributes.version).toBe("7.6.1");
    expect(
      (await tfe("PATCH", "admin/terraform-versions/tool-AAAAAAAAAAAAAAAA", { body: body({ enabled: true }) })).status,
    ).toBe(404);
    expect((await tfe("GET", "admin/terraform-versions/tool-AAAAAAAAAAAAAAAA", { token: ADMIN })).status).toBe(404);
  });
});
