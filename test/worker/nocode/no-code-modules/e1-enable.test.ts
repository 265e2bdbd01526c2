/**
 * E1 `POST /organizations/:org/no-code-modules` (decisions N1, N3, N5, N10, N12; HCP
 * Terraform's no-code provisioning API (E1); go-tfe's and the tfe provider's tests). Adapted
 * where decisions.md differs from the observed service: `enabled` defaults to false (N3),
 * and E1 answers 200.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import {
  ADMIN,
  type BootstrappedOrg,
  bootstrapOrg,
  createMember,
  createOrgToken,
  createTeam,
  createTeamToken,
  tfe,
} from "../../../helpers/nocode";
import {
  createPendingVersion,
  createRegistryModule,
  enableNoCode,
  noCodeModuleDoc,
  optionEntry,
  publishVersion,
} from "../../../helpers/nocode-modules";

const PIN_ERROR =
  "Validation failed: Provided version pin is not equal to latest or provided string does not represent an existing version of the module.";

/** Modules that fail N12 (both ingest fine, N4). */
const NO_RESOURCE = {
  "main.tf":
    'terraform {\n  required_providers {\n    null = { source = "hashicorp/null" }\n  }\n}\n\nvariable "size" {\n  default = 1\n}\n',
};
const NO_PROVIDER = {
  "main.tf":
    'variable "size" {\n  default = 1\n}\n\nresource "null_resource" "x" {\n  triggers = { size = var.size }\n}\n',
};

let ctx: BootstrappedOrg;
beforeAll(async () => {
  ctx = await bootstrapOrg();
});

/** How many no-code modules the organization has (D1). */
async function noCodeCount(org: string): Promise<number> {
  const row = await env.DB.prepare("SELECT count(*) AS n FROM no_code_modules WHERE organization = ?")
    .bind(org)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

describe("E1 as go-tfe's and the tfe provider's tests use it", () => {
  it("a module with a pending version and only the registry-module relationship → 200, nocode- id, org, module; enabled false (N3)", async () => {
    const mod = await createRegistryModule(ctx.org, ctx.ownerToken);
    await createPendingVersion(ctx.org, mod, "1.2.3", ctx.ownerToken);
    const res = await enableNoCode(ctx.org, ctx.ownerToken, noCodeModuleDoc(mod.id));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/vnd.api+json");
    const data = res.json.data;
    expect(data.id).toMatch(/^nocode-[A-Za-z0-9]{16}$/);
    expect(data).toEqual({
      id: data.id,
      type: "no-code-modules",
      attributes: { enabled: false, "version-pin": null },
      relationships: {
        organization: {
          data: { id: ctx.org, type: "organizations" },
          links: { related: `/api/v2/organizations/${ctx.org}` },
        },
        "registry-module": {
          data: { id: mod.id, type: "registry-modules" },
          links: { related: `/api/v2/registry-modules/${mod.id}` },
        },
        "variable-options": { data: [] },
      },
      links: { self: `/api/v2/no-code-modules/${data.id}` },
    });
  });

  it("version-pin 1.2.3 of a pending version → echoed (pending pins are allowed, N3); enabled as sent", async () => {
    const mod = await createRegistryModule(ctx.org, ctx.ownerToken);
    await createPendingVersion(ctx.org, mod, "1.2.3", ctx.ownerToken);
    const res = await enableNoCode(
      ctx.org,
      ctx.ownerToken,
      noCodeModuleDoc(mod.id, { "version-pin": "1.2.3", enabled: true }),
    );
    expect(res.status).toBe(200);
    expect(res.json.data.attributes).toEqual({ enabled: true, "version-pin": "1.2.3" });
  });

  it("a pending 1.0.0, enabled false, no pin → enabled false, version-pin null (no ok version, N3)", async () => {
    const mod = await createRegistryModule(ctx.org, ctx.ownerToken);
    await createPendingVersion(ctx.org, mod, "1.0.0", ctx.ownerToken);
    const res = await enableNoCode(ctx.org, ctx.ownerToken, noCodeModuleDoc(mod.id, { enabled: false }));
    expect(res.status).toBe(200);
    expect(res.json.data.attributes).toEqual({ enabled: false, "version-pin": null });
    expect(res.json.data.relationships.organization.data.id).toBe(ctx.org);
    expect(res.json.data.relationships["registry-module"].data.id).toBe(mod.id);
  });

  it("a module without versions, version-pin 1.2.5 → 422 with HCP's text; nothing created", async () => {
    const mod = await createRegistryModule(ctx.org, ctx.ownerToken);
    const before = await noCodeCount(ctx.org);
    const res = await enableNoCode(ctx.org, ctx.ownerToken, noCodeModuleDoc(mod.id, { "version-pin": "1.2.5" }));
    expect(res.status).toBe(422);
    expect(res.json).toEqual({ errors: [{ status: "422", title: "unprocessable entity", detail: PIN_ERROR }] });
    expect(await noCodeCount(ctx.org)).toBe(before);
    const read = await tfe("GET", `registry-modules/${mod.id}`, { token: ctx.ownerToken });
    expect(read.json.data.relationships["no-code-modules"].data).toEqual([]);
  });

  it("a module without versions and two variable options → 200 with two ncvaropt- sets (names not checked without an ok pin, N5)", async () => {
    const mod = await createRegistryModule(ctx.org, ctx.ownerToken);
    const res = await enableNoCode(
      ctx.org,
      ctx.ownerToken,
      noCodeModuleDoc(mod.id, { enabled: true }, [
        optionEntry("var1", ["option1", "option2"]),
        optionEntry("my_var", ["my_option1", "my_option2"]),
      ]),
    );
    expect(res.status).toBe(200);
    expect(res.json.data.attributes.enabled).toBe(true);
    const sets = res.json.data.relationships["variable-options"].data;
    expect(sets).toHaveLength(2);
    for (const s of sets)
      expect(s).toEqual({ id: expect.stringMatching(/^ncvaropt-[A-Za-z0-9]{16}$/), type: "variable-options" });
    expect(res.json.included).toBeUndefined();
  });

  it("an unknown registry module, or one of another organization → 404", async () => {
    const other = await bootstrapOrg();
    const foreign = await createRegistryModule(other.org, other.ownerToken);
    for (const id of ["mod-doesnotexist0000", foreign.id]) {
      const res = await enableNoCode(ctx.org, ctx.ownerToken, noCodeModuleDoc(id));
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ errors: [{ status: "404", title: "not found" }] });
    }
  });

  it("the organization token → 404 (N10) and creates nothing; no or bad token → 401", async () => {
    const mod = await createRegistryModule(ctx.org, ctx.ownerToken);
    const orgToken = await createOrgToken(ctx.org);
    const before = await noCodeCount(ctx.org);
    const refused = await enableNoCode(ctx.org, orgToken, noCodeModuleDoc(mod.id));
    expect(refused.status).toBe(404);
    expect(refused.json).toEqual({ errors: [{ status: "404", title: "not found" }] });
    expect(await noCodeCount(ctx.org)).toBe(before);
    for (const token of [null, "bogus.atlasv1.token"]) {
      const res = await enableNoCode(ctx.org, token as string, noCodeModuleDoc(mod.id));
      expect(res.status).toBe(401);
      expect(res.json).toEqual({ errors: [{ status: "401", title: "unauthorized" }] });
    }
  });

  it("the relationship typed registry-modules with the module's attributes inlined (go-tfe) is accepted", async () => {
    const mod = await createRegistryModule(ctx.org, ctx.ownerToken);
    const body = {
      data: {
        type: "no-code-modules",
        attributes: { enabled: true, "version-pin": "" },
        relationships: {
          "registry-module": {
            data: {
              type: "registry-modules",
              id: mod.id,
              attributes: {
                name: mod.name,
                provider: mod.provider,
                "registry-name": "private",
                namespace: ctx.org,
                "no-code": false,
                "created-at": "2026-01-01T00:00:00Z",
              },
              relationships: { organization: { data: { type: "organizations", id: ctx.org } } },
            },
          },
          "variable-options": {
            data: [
              {
                type: "variable-options",
                id: "",
                attributes: { "variable-name": "x", "variable-type": "string", options: ["a"] },
              },
            ],
          },
        },
      },
    };
    const res = await enableNoCode(ctx.org, ctx.ownerToken, body);
    expect(res.status).toBe(200);
    expect(res.json.data.attributes).toEqual({ enabled: true, "version-pin": null });
    expect(res.json.data.relationships["variable-options"].data).toHaveLength(1);
  });
});

describe("E1 permissions (N10)", () => {
  it("owners, manage-modules users and teams may enable; others (and ADMIN_TOKEN) get 404", async () => {
    const manager = await createMember(ctx.org, { "manage-modules": true });
    const managerTeam = await createTeamToken(await createTeam(ctx.org, { "manage-modules": true }));
    for (const token of [ctx.ownerToken, manager.token, managerTeam]) {
      const mod = await createRegistryModule(ctx.org, ctx.ownerToken);
      expect((await enableNoCode(ctx.org, token, noCodeModuleDoc(mod.id))).status).toBe(200);
    }
    const workspaceManager = await createMember(ctx.org, { "manage-workspaces": true });
    const outsider = (await bootstrapOrg()).ownerToken;
    const mod = await createRegistryModule(ctx.org, ctx.ownerToken);
    for (const token of [workspaceManager.token, outsider, ADMIN]) {
      expect((await enableNoCode(ctx.org, token, noCodeModuleDoc(mod.id))).status).toBe(404);
    }
  });
});

describe("E1 pins (N3)", () => {
  it("defaults the pin to the highest non-pre-release ok version; `latest` is stored as that version", async () => {
    const mod = await createRegistryModule(ctx.org, ctx.ownerToken);
    await publishVersion(ctx.org, mod, "1.0.0", ctx.ownerToken);
    await publishVersion(ctx.org, mod, "1.1.0", ctx.ownerToken);
    await publishVersion(ctx.org, mod, "2.0.0-rc.1", ctx.ownerToken);
    await createPendingVersion(ctx.org, mod, "3.0.0", ctx.ownerToken);
    const res = await enableNoCode(ctx.org, ctx.ownerToken, noCodeModuleDoc(mod.id));
    expect(res.json.data.attributes["version-pin"]).toBe("1.1.0");
    // The same with the literal `latest`, on another module.
    const other = await createRegistryModule(ctx.org, ctx.ownerToken);
    await publishVersion(ctx.org, other, "0.3.0", ctx.ownerToken);
    const latest = await enableNoCode(ctx.org, ctx.ownerToken, noCodeModuleDoc(other.id, { "version-pin": "latest" }));
    expect(latest.status).toBe(200);
    expect(latest.json.data.attributes["version-pin"]).toBe("0.3.0");
  });

  it("version-pin 1.0.0 on an ingested module reads back as 1.0.0", async () => {
    const mod = await createRegistryModule(ctx.org, ctx.ownerToken);
    await publishVersion(ctx.org, mod, "1.0.0", ctx.ownerToken);
    await publishVersion(ctx.org, mod, "1.0.1", ctx.ownerToken);
    const res = await enableNoCode(ctx.org, ctx.ownerToken, noCodeModuleDoc(mod.id, { "version-pin": "1.0.0" }));
    expect(res.status).toBe(200);
    const read = await tfe("GET", `no-code-modules/${res.json.data.id}`, { token: ctx.ownerToken });
    expect(read.json.data.attributes["version-pin"]).toBe("1.0.0");
  });

  it("a second E1 for the same registry module → 422 and the first stays", async () => {
    const mod = await createRegistryModule(ctx.org, ctx.ownerToken);
    const first = await enableNoCode(ctx.org, ctx.ownerToken, noCodeModuleDoc(mod.id));
    expect(first.status).toBe(200);
    const second = await enableNoCode(ctx.org, ctx.ownerToken, noCodeModuleDoc(mod.id, { enabled: true }));
    expect(second.status).toBe(422);
    expect(second.json.errors[0]).toMatchObject({ status: "422", title: "unprocessable entity" });
    expect(second.json.errors[0].detail).toContain("already has a no-code module");
    const read = await tfe("GET", `registry-modules/${mod.id}`, { token: ctx.ownerToken });
    expect(read.json.data.relationships["no-code-modules"].data).toEqual([
      { id: first.json.data.id, type: "no-code-modules" },
    ]);
  });

  it("concurrent E1s for one registry module create exactly one no-code module", async () => {
    const mod = await createRegistryModule(ctx.org, ctx.ownerToken);
    const answers = await Promise.all(
      [1, 2, 3, 4].map(() => enableNoCode(ctx.org, ctx.ownerToken, noCodeModuleDoc(mod.id))),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 422, 422, 422]);
    const rows = await env.DB.prepare("SELECT id FROM no_code_modules WHERE registry_module_id = ?").bind(mod.id).all();
    expect(rows.results).toHaveLength(1);
  });
});

describe("E1 design requirements (N12) and variable names (N5)", () => {
  it("an ok pin without a resource → 422 naming what is missing; nothing created", async () => {
    const mod = await createRegistryModule(ctx.org, ctx.ownerToken, { provider: "null" });
    expect((await publishVersion(ctx.org, mod, "1.0.0", ctx.ownerToken, NO_RESOURCE)).status).toBe("ok");
    const before = await noCodeCount(ctx.org);
    const res = await enableNoCode(ctx.org, ctx.ownerToken, noCodeModuleDoc(mod.id, { enabled: true }));
    expect(res.status).toBe(422);
    expect(res.json.errors).toEqual([
      {
        status: "422",
        title: "unprocessable entity",
        detail:
          "Module version 1.0.0 does not meet the no-code design requirements: it declares no resource in its root module.",
      },
    ]);
    expect(await noCodeCount(ctx.org)).toBe(before);
  });

  it("an ok pin without providers → 422 naming the missing providers, even with enabled false", async () => {
    const mod = await createRegistryModule(ctx.org, ctx.ownerToken, { provider: "null" });
    expect((await publishVersion(ctx.org, mod, "1.0.0", ctx.ownerToken, NO_PROVIDER)).status).toBe("ok");
    const res = await enableNoCode(ctx.org, ctx.ownerToken, noCodeModuleDoc(mod.id, { enabled: false }));
    expect(res.status).toBe(422);
    expect(res.json.errors[0].detail).toBe(
      "Module version 1.0.0 does not meet the no-code design requirements: it declares no provider (no required_providers entry and no provider block).",
    );
  });

  it("N12 is not checked while the pin is not ok (pending pins stay allowed, N3)", async () => {
    const mod = await createRegistryModule(ctx.org, ctx.ownerToken, { provider: "null" });
    await createPendingVersion(ctx.org, mod, "1.0.0", ctx.ownerToken);
    const res = await enableNoCode(
      ctx.org,
      ctx.ownerToken,
      noCodeModuleDoc(mod.id, { enabled: true, "version-pin": "1.0.0" }),
    );
    expect(res.status).toBe(200);
  });

  it('an option naming a variable absent from the ok pin → 422 `variable "<n>" not found in source`; nothing created', async () => {
    const mod = await createRegistryModule(ctx.org, ctx.ownerToken);
    await publishVersion(ctx.org, mod, "1.0.0", ctx.ownerToken);
    const before = await noCodeCount(ctx.org);
    const res = await enableNoCode(
      ctx.org,
      ctx.ownerToken,
      noCodeModuleDoc(mod.id, { "version-pin": "1.0.0" }, [
        optionEntry("length", ["2", "3"], "number"),
        optionEntry("freetext_string_emptylist", []),
      ]),
    );
    expect(res.status).toBe(422);
    expect(res.json.errors).toEqual([
      {
        status: "422",
        title: "unprocessable entity",
        detail: 'variable "freetext_string_emptylist" not found in source',
      },
    ]);
    expect(await noCodeCount(ctx.org)).toBe(before);
  });

  it("two sets for one variable → 422; a set id on E1 → 422 (N5)", async () => {
    const mod = await createRegistryModule(ctx.org, ctx.ownerToken);
    const twice = await enableNoCode(
      ctx.org,
      ctx.ownerToken,
      noCodeModuleDoc(mod.id, {}, [optionEntry("a", ["1"]), optionEntry("a", ["2"])]),
    );
    expect(twice.status).toBe(422);
    expect(twice.json.errors[0].detail).toBe('variable "a" has more than one set of variable options');
    const withId = await enableNoCode(
      ctx.org,
      ctx.ownerToken,
      noCodeModuleDoc(mod.id, {}, [optionEntry("a", ["1"], "string", "ncvaropt-AAAAAAAAAAAAAAAA")]),
    );
    expect(withId.status).toBe(422);
    expect(
      (await tfe("GET", `registry-modules/${mod.id}`, { token: ctx.ownerToken })).json.data.relationships[
        "no-code-modules"
      ].data,
    ).toEqual([]);
  });

  it("the variable type defaults to the variable's type in the ok pin", async () => {
    const mod = await createRegistryModule(ctx.org, ctx.ownerToken);
    await publishVersion(ctx.org, mod, "1.0.0", ctx.ownerToken);
    const res = await enableNoCode(ctx.org, ctx.ownerToken, {
      data: {
        type: "no-code-modules",
        relationships: {
          "registry-module": { data: { type: "registry-module", id: mod.id } },
          "variable-options": {
            data: [{ type: "variable-options", attributes: { "variable-name": "length", options: ["2", "4"] } }],
          },
        },
      },
    });
    expect(res.status).toBe(200);
    const read = await tfe("GET", `no-code-modules/${res.json.data.id}?include=variable_options`, {
      token: ctx.ownerToken,
    });
    expect(read.json.included[0].attributes).toEqual({
      "variable-name": "length",
      "variable-type": "number",
      options: ["2", "4"],
    });
  });
});

describe("E1 malformed documents (422)", () => {
  it("wrong types and a missing registry module are 422 with pointers", async () => {
    const mod = await createRegistryModule(ctx.org, ctx.ownerToken);
    const cases: [unknown, string][] = [
      [{ data: { type: "no-code-modules", attributes: {}, relationships: {} } }, "/data/relationships/registry-module"],
      [noCodeModuleDoc(mod.id, { enabled: "yes" }), "/data/attributes/enabled"],
      [noCodeModuleDoc(mod.id, { "version-pin": 3 }), "/data/attributes/version-pin"],
      [{ data: { type: "workspaces", relationships: { "registry-module": { data: { id: mod.id } } } } }, "/data/type"],
      [
        noCodeModuleDoc(mod.id, {}, [
          { type: "variable-options", attributes: { "variable-name": "x", options: "a" } } as never,
        ]),
        "/data/relationships/variable-options/data/0/attributes/options",
      ],
      [{ data: [] }, "/data"],
    ];
    for (const [body, pointer] of cases) {
      const res = await enableNoCode(ctx.org, ctx.ownerToken, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.json.errors[0]).toMatchObject({ status: "422", title: "invalid attribute", source: { pointer } });
    }
    const read = await tfe("GET", `registry-modules/${mod.id}`, { token: ctx.ownerToken });
    expect(read.json.data.relationships["no-code-modules"].data).toEqual([]);
  });

  it("malformed JSON is 400 and a body over 1 MiB is 413 (B5)", async () => {
    const bad = await tfe("POST", `organizations/${ctx.org}/no-code-modules`, {
      token: ctx.ownerToken,
      rawBody: "{not json",
    });
    expect(bad.status).toBe(400);
    const big = await tfe("POST", `organizations/${ctx.org}/no-code-modules`, {
      token: ctx.ownerToken,
      rawBody: `{"pad":"${"x".repeat(1024 * 1024)}"}`,
    });
    expect(big.status).toBe(413);
  });
});
