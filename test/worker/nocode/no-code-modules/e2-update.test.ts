/**
 * E2 `PATCH /no-code-modules/:id` (decisions N3, N5, N8, N10, N12; HCP
 * Terraform's no-code provisioning API (E2); go-tfe's and the tfe provider's tests).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { type BootstrappedOrg, bootstrapOrg, createMember, createOrgToken, tfe } from "../../../helpers/nocode";
import {
  createNoCodeWorkspace,
  createPendingVersion,
  createRegistryModule,
  enableNoCode,
  noCodeModuleDoc,
  noCodeOrg,
  optionEntry,
  publishVersion,
  uploadVersion,
} from "../../../helpers/nocode-modules";

const NO_RESOURCE = {
  "main.tf":
    'terraform {\n  required_providers {\n    null = { source = "hashicorp/null" }\n  }\n}\n\nvariable "prefix" {\n  type = string\n}\n',
};

let ctx: BootstrappedOrg;
beforeAll(async () => {
  ctx = await bootstrapOrg();
});

function patch(id: string, body: unknown, token = ctx.ownerToken) {
  return tfe("PATCH", `no-code-modules/${id}`, { token, body });
}

/** An E2 document; `registryModuleId` adds the relationship. */
function patchDoc(
  attributes: Record<string, unknown>,
  registryModuleId?: string,
  options?: ReturnType<typeof optionEntry>[],
) {
  const relationships: Record<string, unknown> = {};
  if (registryModuleId) relationships["registry-module"] = { data: { type: "registry-module", id: registryModuleId } };
  if (options) relationships["variable-options"] = { data: options };
  return { data: { type: "no-code-modules", attributes, relationships } };
}

async function created(attributes: Record<string, unknown> = {}, options?: ReturnType<typeof optionEntry>[]) {
  const mod = await createRegistryModule(ctx.org, ctx.ownerToken);
  const res = await enableNoCode(ctx.org, ctx.ownerToken, noCodeModuleDoc(mod.id, attributes, options));
  expect(res.status).toBe(200);
  return { mod, doc: res.json };
}

async function included(id: string, token = ctx.ownerToken) {
  return (await tfe("GET", `no-code-modules/${id}?include=variable_options`, { token })).json.included as {
    id: string;
    attributes: { "variable-name": string; "variable-type": string; options: unknown[] };
  }[];
}

describe("E2 as go-tfe's and the tfe provider's tests use it", () => {
  it("enabled:false with the registry-module relationship → enabled false", async () => {
    const { mod, doc } = await created({ enabled: true });
    const res = await patch(doc.data.id, patchDoc({ enabled: false }, mod.id));
    expect(res.status).toBe(200);
    expect(res.json.data.attributes.enabled).toBe(false);
    expect(
      (await tfe("GET", `no-code-modules/${doc.data.id}`, { token: ctx.ownerToken })).json.data.attributes.enabled,
    ).toBe(false);
  });

  it("only the registry-module relationship → a document identical to E1's answer", async () => {
    const { mod, doc } = await created({ enabled: true }, [optionEntry("a", ["1"])]);
    const res = await patch(doc.data.id, patchDoc({}, mod.id));
    expect(res.status).toBe(200);
    expect(res.json).toEqual(doc);
  });

  it("options of min_lower [1,2,3] patched to [4,5,6] → exactly [4,5,6], no leftover set", async () => {
    const { mod, doc } = await created({}, [optionEntry("min_lower", ["1", "2", "3"], "number")]);
    const res = await patch(doc.data.id, patchDoc({}, mod.id, [optionEntry("min_lower", ["4", "5", "6"], "number")]));
    expect(res.status).toBe(200);
    const sets = await included(doc.data.id);
    expect(sets).toHaveLength(1);
    expect(sets[0]!.attributes["variable-name"]).toBe("min_lower");
    expect([...sets[0]!.attributes.options].sort()).toEqual(["4", "5", "6"]);
  });

  it("a pin moved to an existing version is echoed, and a workspace at the old pin reports no-code-upgrade-available (N8)", async () => {
    const org = await noCodeOrg();
    await publishVersion(org.org, org.registryModule, "1.0.1", org.ownerToken);
    const { workspace } = await createNoCodeWorkspace(org.noCodeModuleId, org.ownerToken);
    expect(workspace.attributes["no-code-upgrade-available"]).toBe(false);
    const res = await patch(
      org.noCodeModuleId,
      patchDoc({ "version-pin": "1.0.1" }, org.registryModule.id),
      org.ownerToken,
    );
    expect(res.status).toBe(200);
    expect(res.json.data.attributes["version-pin"]).toBe("1.0.1");
    const ws = await tfe("GET", `workspaces/${workspace.id}`, { token: org.ownerToken });
    expect(ws.json.data.attributes["no-code-upgrade-available"]).toBe(true);
    // A new registry version alone does not move the pin (HCP Terraform's no-code provisioning API (E2)).
    expect(ws.json.data.attributes["source-module-id"]).toMatch(/\/1\.0\.0$/);
  });

  it("an option set without `options`, or with [], is stored and reads back with no options", async () => {
    const { mod, doc } = await created({}, [optionEntry("free_a", undefined), optionEntry("free_b", [])]);
    const sets = await included(doc.data.id);
    expect(sets.map((s) => s.attributes)).toEqual([
      { "variable-name": "free_a", "variable-type": "string", options: [] },
      { "variable-name": "free_b", "variable-type": "string", options: [] },
    ]);
    const res = await patch(doc.data.id, patchDoc({}, mod.id, [optionEntry("free_c", undefined)]));
    expect(res.status).toBe(200);
    expect((await included(doc.data.id)).map((s) => s.attributes)).toEqual([
      { "variable-name": "free_c", "variable-type": "string", options: [] },
    ]);
  });

  it("the relationship typed registry-modules with inlined attributes (go-tfe) is accepted", async () => {
    const { mod, doc } = await created();
    const res = await patch(doc.data.id, {
      data: {
        type: "no-code-modules",
        attributes: { enabled: true },
        relationships: {
          "registry-module": {
            data: { type: "registry-modules", id: mod.id, attributes: { name: mod.name, "no-code": true } },
          },
        },
      },
    });
    expect(res.status).toBe(200);
    expect(res.json.data.attributes.enabled).toBe(true);
  });
});

describe("E2 variable options (N5)", () => {
  it("entries with an id replace that set (same id), entries without one are new, sets not sent are deleted", async () => {
    const { doc } = await created({}, [optionEntry("a", ["1"]), optionEntry("b", ["2"]), optionEntry("c", ["3"])]);
    const [a, b] = doc.data.relationships["variable-options"].data;
    const res = await patch(
      doc.data.id,
      patchDoc({}, undefined, [
        optionEntry("b", ["22"], "string", b.id),
        optionEntry("a2", ["x"], "string", a.id),
        optionEntry("d", ["4"]),
      ]),
    );
    expect(res.status).toBe(200);
    const ids = res.json.data.relationships["variable-options"].data.map((r: { id: string }) => r.id);
    expect(ids.slice(0, 2)).toEqual([b.id, a.id]);
    expect(ids[2]).toMatch(/^ncvaropt-/);
    expect(
      (await included(doc.data.id)).map((s) => [s.id, s.attributes["variable-name"], s.attributes.options]),
    ).toEqual([
      [b.id, "b", ["22"]],
      [a.id, "a2", ["x"]],
      [ids[2], "d", ["4"]],
    ]);
  });

  it("without the relationship, options are left alone", async () => {
    const { doc } = await created({}, [optionEntry("a", ["1"])]);
    const res = await patch(doc.data.id, patchDoc({ enabled: true }));
    expect(res.status).toBe(200);
    expect(res.json.data.relationships["variable-options"]).toEqual(doc.data.relationships["variable-options"]);
  });

  it("two entries for one variable, or an id of another module → 422 and nothing changes", async () => {
    const { doc } = await created({}, [optionEntry("a", ["1"])]);
    const { doc: other } = await created({}, [optionEntry("z", ["9"])]);
    const foreignId = other.data.relationships["variable-options"].data[0].id;
    const twice = await patch(doc.data.id, patchDoc({}, undefined, [optionEntry("a", ["1"]), optionEntry("a", ["2"])]));
    expect(twice.status).toBe(422);
    expect(twice.json.errors[0]).toMatchObject({
      title: "unprocessable entity",
      detail: 'variable "a" has more than one set of variable options',
    });
    const foreign = await patch(doc.data.id, patchDoc({}, undefined, [optionEntry("q", ["1"], "string", foreignId)]));
    expect(foreign.status).toBe(422);
    expect(foreign.json.errors[0].detail).toContain(foreignId);
    expect((await included(doc.data.id)).map((s) => s.attributes)).toEqual([
      { "variable-name": "a", "variable-type": "string", options: ["1"] },
    ]);
    expect((await included(other.data.id)).map((s) => s.attributes["variable-name"])).toEqual(["z"]);
  });

  it("with an ok pin, options must name variables of that version (422), also when the pin moves", async () => {
    const org = await noCodeOrg({ options: [optionEntry("length", ["2", "3"], "number")] });
    const bad = await patch(org.noCodeModuleId, patchDoc({}, undefined, [optionEntry("nope", ["1"])]), org.ownerToken);
    expect(bad.status).toBe(422);
    expect(bad.json.errors[0].detail).toBe('variable "nope" not found in source');
    // A version without `length`: moving the pin there with the options kept is refused.
    await publishVersion(org.org, org.registryModule, "1.1.0", org.ownerToken, {
      "main.tf":
        'terraform {\n  required_providers {\n    random = { source = "hashicorp/random" }\n  }\n}\n\nresource "random_pet" "x" {}\n',
    });
    const moved = await patch(org.noCodeModuleId, patchDoc({ "version-pin": "1.1.0" }), org.ownerToken);
    expect(moved.status).toBe(422);
    expect(moved.json.errors[0].detail).toBe('variable "length" not found in source');
    // Sending the options with the pin fixes it.
    const fixed = await patch(org.noCodeModuleId, patchDoc({ "version-pin": "1.1.0" }, undefined, []), org.ownerToken);
    expect(fixed.status).toBe(200);
    expect(fixed.json.data.attributes["version-pin"]).toBe("1.1.0");
  });

  it("changing option sets makes no-code-upgrade-available true (N8); the same sets in another order do not", async () => {
    const org = await noCodeOrg({ options: [optionEntry("length", ["2", "3"], "number")] });
    const { workspace } = await createNoCodeWorkspace(org.noCodeModuleId, org.ownerToken);
    const setId = (await included(org.noCodeModuleId, org.ownerToken))[0]!.id;
    const available = async () =>
      (await tfe("GET", `workspaces/${workspace.id}`, { token: org.ownerToken })).json.data.attributes[
        "no-code-upgrade-available"
      ];
    await patch(
      org.noCodeModuleId,
      patchDoc({}, undefined, [optionEntry("length", ["3", "2"], "number", setId)]),
      org.ownerToken,
    );
    expect(await available()).toBe(false);
    await patch(
      org.noCodeModuleId,
      patchDoc({}, undefined, [optionEntry("length", ["2", "3", "4"], "number", setId)]),
      org.ownerToken,
    );
    expect(await available()).toBe(true);
  });
});

describe("E2 pins and design requirements (N3, N12)", () => {
  it("a pin that names no version → 422 with HCP's text; `latest` → the latest ok version", async () => {
    const org = await noCodeOrg();
    const bad = await patch(org.noCodeModuleId, patchDoc({ "version-pin": "7.7.7" }), org.ownerToken);
    expect(bad.status).toBe(422);
    expect(bad.json.errors[0].detail).toBe(
      "Validation failed: Provided version pin is not equal to latest or provided string does not represent an existing version of the module.",
    );
    await publishVersion(org.org, org.registryModule, "1.2.0", org.ownerToken);
    const latest = await patch(org.noCodeModuleId, patchDoc({ "version-pin": "latest" }), org.ownerToken);
    expect(latest.json.data.attributes["version-pin"]).toBe("1.2.0");
  });

  it("enabling a module whose ok pin fails N12 → 422; the module stays disabled", async () => {
    const mod = await createRegistryModule(ctx.org, ctx.ownerToken, { provider: "null" });
    const pending = await createPendingVersion(ctx.org, mod, "1.0.0", ctx.ownerToken);
    const e1 = await enableNoCode(
      ctx.org,
      ctx.ownerToken,
      noCodeModuleDoc(mod.id, { enabled: false, "version-pin": "1.0.0" }),
    );
    expect(e1.status).toBe(200);
    // Now the pinned version becomes ok (through the real upload link and queue).
    const ingested = await uploadVersion(ctx.org, mod, "1.0.0", pending.upload, ctx.ownerToken, NO_RESOURCE);
    expect(ingested.status).toBe("ok");
    const res = await patch(e1.json.data.id, patchDoc({ enabled: true }));
    expect(res.status).toBe(422);
    expect(res.json.errors[0].detail).toBe(
      "Module version 1.0.0 does not meet the no-code design requirements: it declares no resource in its root module.",
    );
    expect(
      (await tfe("GET", `no-code-modules/${e1.json.data.id}`, { token: ctx.ownerToken })).json.data.attributes.enabled,
    ).toBe(false);
  });

  it("moving an enabled module's pin to a version failing N12 → 422; a disabled module may move there", async () => {
    const org = await noCodeOrg();
    await publishVersion(org.org, org.registryModule, "1.1.0", org.ownerToken, NO_RESOURCE);
    const res = await patch(org.noCodeModuleId, patchDoc({ "version-pin": "1.1.0" }), org.ownerToken);
    expect(res.status).toBe(422);
    expect(res.json.errors[0].detail).toContain("does not meet the no-code design requirements");
    expect(
      (await tfe("GET", `no-code-modules/${org.noCodeModuleId}`, { token: org.ownerToken })).json.data.attributes[
        "version-pin"
      ],
    ).toBe("1.0.0");
    const disabled = await patch(
      org.noCodeModuleId,
      patchDoc({ enabled: false, "version-pin": "1.1.0" }),
      org.ownerToken,
    );
    expect(disabled.status).toBe(200);
    expect(disabled.json.data.attributes).toEqual({ enabled: false, "version-pin": "1.1.0" });
  });

  it("switching the registry module re-pins to the new module's latest ok version; a module that already has one → 422", async () => {
    const org = await noCodeOrg();
    const other = await createRegistryModule(org.org, org.ownerToken);
    await publishVersion(org.org, other, "3.1.0", org.ownerToken);
    const res = await patch(org.noCodeModuleId, patchDoc({}, other.id), org.ownerToken);
    expect(res.status).toBe(200);
    expect(res.json.data.attributes["version-pin"]).toBe("3.1.0");
    expect(res.json.data.relationships["registry-module"].data.id).toBe(other.id);
    expect(
      (await tfe("GET", `registry-modules/${org.registryModule.id}`, { token: org.ownerToken })).json.data.attributes[
        "no-code"
      ],
    ).toBe(false);
    const taken = await createRegistryModule(org.org, org.ownerToken);
    expect((await enableNoCode(org.org, org.ownerToken, noCodeModuleDoc(taken.id))).status).toBe(200);
    expect((await patch(org.noCodeModuleId, patchDoc({}, taken.id), org.ownerToken)).status).toBe(422);
    const foreign = await createRegistryModule(ctx.org, ctx.ownerToken);
    expect((await patch(org.noCodeModuleId, patchDoc({}, foreign.id), org.ownerToken)).status).toBe(404);
  });
});

describe("E2 permissions (N10)", () => {
  it("the organization token and callers without manage-modules get 404; nothing changes", async () => {
    const { doc } = await created({ enabled: true });
    const workspaceManager = await createMember(ctx.org, { "manage-workspaces": true });
    for (const token of [await createOrgToken(ctx.org), workspaceManager.token, (await bootstrapOrg()).ownerToken]) {
      const res = await patch(doc.data.id, patchDoc({ enabled: false }), token);
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ errors: [{ status: "404", title: "not found" }] });
    }
    expect(
      (await tfe("GET", `no-code-modules/${doc.data.id}`, { token: ctx.ownerToken })).json.data.attributes.enabled,
    ).toBe(true);
    const manager = await createMember(ctx.org, { "manage-modules": true });
    expect((await patch(doc.data.id, patchDoc({ enabled: false }), manager.token)).status).toBe(200);
  });

  it("an unknown id → 404", async () => {
    expect((await patch("nocode-AAAAAAAAAAAAAAAA", patchDoc({ enabled: true }))).status).toBe(404);
  });
});
