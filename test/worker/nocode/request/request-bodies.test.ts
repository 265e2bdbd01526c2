/**
 * The bodies of E1/E2, E4, workspace vars (POST, PATCH), E5 and the rollout create, and
 * E3's `include`, as the request kit reads them: each malformed spelling gets its status,
 * detail and pointer (docs/api-v2-errors.md), and the OpenAPI document carries these
 * request bodies.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { type TfeAnswer, tfe } from "../../../helpers/nocode";
import {
  createNoCodeWorkspace,
  type NoCodeOrg,
  noCodeOrg,
  varEntry,
  workspaceDoc,
} from "../../../helpers/nocode-modules";

let ctx: NoCodeOrg;
// biome-ignore lint/suspicious/noExplicitAny: JSON
let ws: any;
beforeAll(async () => {
  ctx = await noCodeOrg();
  ws = (await createNoCodeWorkspace(ctx.noCodeModuleId, ctx.ownerToken)).workspace;
});

/** The answer is exactly one 422 `invalid attribute` at `pointer`. */
function expectOne(res: TfeAnswer, pointer: string, detail: string): void {
  expect(res.status, res.text).toBe(422);
  expect(res.json).toEqual({ errors: [{ status: "422", title: "invalid attribute", detail, source: { pointer } }] });
}

/** A string of `[` nested deeper than decision B9 lets an HCL value nest. */
const tooDeep = `${"[".repeat(101)}${"]".repeat(101)}`;

const moduleDoc = (attributes: Record<string, unknown>, relationships: Record<string, unknown> = {}) => ({
  data: { type: "no-code-modules", attributes, relationships },
});

describe("E1 and E2 (no-code modules)", () => {
  const enable = (body: unknown) =>
    tfe("POST", `organizations/${ctx.org}/no-code-modules`, { token: ctx.ownerToken, body });
  const update = (body: unknown) =>
    tfe("PATCH", `no-code-modules/${ctx.noCodeModuleId}`, { token: ctx.ownerToken, body });
  const registryModule = () => ({ data: { type: "registry-modules", id: ctx.registryModule.id } });

  it.each([
    ["a wrong data.type", { data: { type: "workspaces" } }, "/data/type", 'data.type must be "no-code-modules"'],
    [
      "enabled not a boolean",
      moduleDoc({ enabled: "yes" }),
      "/data/attributes/enabled",
      "Enabled must be true or false",
    ],
    [
      "version-pin not a string",
      moduleDoc({ "version-pin": 5 }),
      "/data/attributes/version-pin",
      "Version pin must be a string",
    ],
    [
      "a registry-module relationship without data",
      moduleDoc({}, { "registry-module": {} }),
      "/data/relationships/registry-module",
      'Relationship registry-module must be {"data": {"type": "registry-modules", "id": "…"}}',
    ],
    [
      "a registry-module without an id",
      moduleDoc({}, { "registry-module": { data: { type: "registry-modules", id: "" } } }),
      "/data/relationships/registry-module",
      'Relationship registry-module must be {"data": {"type": "registry-modules", "id": "…"}}',
    ],
    [
      "a registry-module of another type",
      moduleDoc({}, { "registry-module": { data: { type: "workspaces", id: "x" } } }),
      "/data/relationships/registry-module/data/type",
      'Relationship registry-module must have type "registry-modules"',
    ],
    [
      "variable-options not a list",
      moduleDoc({}, { "variable-options": { data: {} } }),
      "/data/relationships/variable-options",
      'Relationship variable-options must be {"data": [ … ]}',
    ],
    [
      "a variable-options member not an object",
      moduleDoc({}, { "variable-options": { data: [5] } }),
      "/data/relationships/variable-options/data/0",
      "Each member of variable-options must be a resource object",
    ],
    [
      "a variable-options member of another type",
      moduleDoc({}, { "variable-options": { data: [{ type: "vars", attributes: { "variable-name": "prefix" } }] } }),
      "/data/relationships/variable-options/data/0/type",
      'type must be "variable-options"',
    ],
    [
      "a variable-options member without a name",
      moduleDoc({}, { "variable-options": { data: [{ type: "variable-options" }] } }),
      "/data/relationships/variable-options/data/0/attributes/variable-name",
      "Variable name can't be blank",
    ],
    [
      "options not an array",
      moduleDoc({}, { "variable-options": { data: [{ attributes: { "variable-name": "prefix", options: "a" } }] } }),
      "/data/relationships/variable-options/data/0/attributes/options",
      "Options must be an array",
    ],
    [
      "an option that is an object",
      moduleDoc(
        {},
        { "variable-options": { data: [{ attributes: { "variable-name": "prefix", options: ["a", {}] } }] } },
      ),
      "/data/relationships/variable-options/data/0/attributes/options",
      "Options must be strings, numbers or booleans",
    ],
    [
      "more than 500 option sets",
      moduleDoc(
        {},
        {
          "variable-options": {
            data: Array.from({ length: 501 }, (_, i) => ({ attributes: { "variable-name": `v${i}` } })),
          },
        },
      ),
      "/data/relationships/variable-options",
      "At most 500 variable-options sets are allowed",
    ],
  ])("E1 and E2: %s → 422 at its pointer", async (_what, body, pointer, detail) => {
    const withModule = structuredClone(body) as { data: { relationships?: Record<string, unknown> } };
    // E1 needs the relationship; a malformed one (the case under test) stays as sent.
    if (withModule.data.relationships && !("registry-module" in withModule.data.relationships)) {
      withModule.data.relationships["registry-module"] = registryModule();
    }
    expectOne(await enable(withModule), pointer, detail);
    expectOne(await update(body), pointer, detail);
  });

  it("E2: null attributes and relationships read as absent: nothing changes", async () => {
    const before = await tfe("GET", `no-code-modules/${ctx.noCodeModuleId}`, { token: ctx.ownerToken });
    const res = await update({ data: { type: "no-code-modules", attributes: null, relationships: null } });
    expect(res.status, res.text).toBe(200);
    expect(res.json.data.attributes).toEqual(before.json.data.attributes);
  });

  it("E1 without the registry module → 422 at the relationship (the handler's rule)", async () => {
    expectOne(await enable(moduleDoc({})), "/data/relationships/registry-module", "Registry module is required");
  });
});

describe("E3's include", () => {
  it("an empty or blank include reads as absent; a list with an empty name is 400 naming the parameter", async () => {
    for (const include of ["", "%20"]) {
      const res = await tfe("GET", `no-code-modules/${ctx.noCodeModuleId}?include=${include}`, {
        token: ctx.ownerToken,
      });
      expect(res.status, res.text).toBe(200);
      expect(res.json.included).toBeUndefined();
    }
    const both = await tfe(
      "GET",
      `no-code-modules/${ctx.noCodeModuleId}?include=variable_options,%20variable-options`,
      { token: ctx.ownerToken },
    );
    expect(both.status, both.text).toBe(200);
    expect(both.json.included).toEqual([]);
    const trailing = await tfe("GET", `no-code-modules/${ctx.noCodeModuleId}?include=variable_options,`, {
      token: ctx.ownerToken,
    });
    expect(trailing.status).toBe(400);
    expect(trailing.json.errors).toEqual([
      { status: "400", title: "bad request", detail: "Invalid include parameter", source: { parameter: "include" } },
    ]);
  });
});

describe("E4 (workspaces)", () => {
  const provision = (body: unknown) =>
    tfe("POST", `no-code-modules/${ctx.noCodeModuleId}/workspaces`, { token: ctx.ownerToken, body });
  const named = (attributes: Record<string, unknown> = {}) => ({ name: "ws-kit", ...attributes });

  it.each([
    [
      "a wrong data.type",
      { data: { type: "vars", attributes: named() } },
      "/data/type",
      'data.type must be "workspaces"',
    ],
    ["no name", workspaceDoc({}), "/data/attributes/name", "Name can't be blank"],
    ["a name not a string", workspaceDoc({ name: 7 }), "/data/attributes/name", "Name must be a string"],
    [
      "a name with a space",
      workspaceDoc({ name: "a b" }),
      "/data/attributes/name",
      "Name may only contain letters, numbers, dashes (-), and underscores (_)",
    ],
    [
      "a name too long",
      workspaceDoc({ name: "a".repeat(261) }),
      "/data/attributes/name",
      "Name is too long (maximum is 260 characters)",
    ],
    [
      "auto-apply not a boolean",
      workspaceDoc(named({ "auto-apply": "yes" })),
      "/data/attributes/auto-apply",
      "Auto apply must be true or false",
    ],
    [
      "auto_apply not a boolean",
      workspaceDoc(named({ auto_apply: 1 })),
      "/data/attributes/auto_apply",
      "Auto apply must be true or false",
    ],
    [
      "an execution mode of another kind",
      workspaceDoc(named({ "execution-mode": "local" })),
      "/data/attributes/execution-mode",
      'Execution mode must be "remote" or "agent" for a no-code workspace',
    ],
    [
      "agent-pool-id not a string",
      workspaceDoc(named({ "agent-pool-id": 5 })),
      "/data/attributes/agent-pool-id",
      "Agent pool id must be a string",
    ],
    [
      "terraform-version not a string",
      workspaceDoc(named({ "terraform-version": 1 })),
      "/data/attributes/terraform-version",
      "Terraform version must be a string",
    ],
    [
      "a project without an id",
      workspaceDoc(named(), [varEntry("prefix", "pet")], { project: { data: { type: "projects" } } }),
      "/data/relationships/project",
      'Relationship project must be {"data": {"type": "projects", "id": "…"}}',
    ],
    [
      "a project of another type",
      workspaceDoc(named(), [varEntry("prefix", "pet")], { project: { data: { type: "teams", id: "t" } } }),
      "/data/relationships/project/data/type",
      'Relationship project must have type "projects"',
    ],
    [
      "vars null",
      { data: { attributes: named(), relationships: { vars: null } } },
      "/data/relationships/vars",
      'Relationship vars must be {"data": [ … ]}',
    ],
    [
      "a var member not an object",
      { data: { attributes: named(), relationships: { vars: { data: ["x"] } } } },
      "/data/relationships/vars/data/0",
      "Each member of vars must be a resource object",
    ],
    [
      "a var of another type",
      {
        data: {
          attributes: named(),
          relationships: { vars: { data: [{ type: "variable-options", attributes: { key: "k", category: "env" } }] } },
        },
      },
      "/data/relationships/vars/data/0/type",
      'type must be "vars"',
    ],
    [
      "a var with attributes not an object",
      { data: { attributes: named(), relationships: { vars: { data: [{ type: "vars", attributes: [] }] } } } },
      "/data/relationships/vars/data/0/attributes",
      "attributes must be an object",
    ],
    [
      "a var without a category",
      {
        data: {
          attributes: named(),
          relationships: { vars: { data: [{ attributes: { key: "prefix", value: "x" } }] } },
        },
      },
      "/data/relationships/vars/data/0/attributes/category",
      'Category must be "engine" (or "terraform") or "env"',
    ],
    [
      "a var with a blank key",
      workspaceDoc(named(), [varEntry(" ", "x")]),
      "/data/relationships/vars/data/0/attributes/key",
      "Key can't be blank",
    ],
    [
      "an hcl var nested too deep",
      workspaceDoc(named(), [varEntry("prefix", tooDeep, { hcl: true })]),
      "/data/relationships/vars/data/0/attributes/value",
      "Value nests more than 100 levels deep (the limit of HCL values)",
    ],
    [
      "two vars with one key (the input's rule)",
      workspaceDoc(named(), [varEntry("prefix", "a"), varEntry("prefix", "b")]),
      "/data/relationships/vars/data/1/attributes/key",
      "Key has already been taken",
    ],
  ])("%s → 422 at its pointer", async (_what, body, pointer, detail) => {
    expectOne(await provision(body), pointer, detail);
  });

  it("a var without key and category reports both, key first", async () => {
    const res = await provision({
      data: { attributes: named(), relationships: { vars: { data: [{ type: "vars" }] } } },
    });
    expect(res.status).toBe(422);
    expect(res.json.errors.map((e: { source: { pointer: string } }) => e.source.pointer)).toEqual([
      "/data/relationships/vars/data/0/attributes/key",
      "/data/relationships/vars/data/0/attributes/category",
    ]);
  });

  it("a malformed var member is reported at its own index, members that are not objects counted", async () => {
    const res = await provision({
      data: {
        attributes: named(),
        relationships: { vars: { data: [5, { attributes: { key: "k", category: "x" } }] } },
      },
    });
    expect(res.status).toBe(422);
    expect(res.json.errors.map((e: { source: { pointer: string } }) => e.source.pointer)).toEqual([
      "/data/relationships/vars/data/0",
      "/data/relationships/vars/data/1/attributes/category",
    ]);
  });
});

describe("workspace vars (POST, PATCH)", () => {
  const create = (attributes: unknown) =>
    tfe("POST", `workspaces/${ws.id}/vars`, { token: ctx.ownerToken, body: { data: { type: "vars", attributes } } });
  const patch = (id: string, attributes: unknown) =>
    tfe("PATCH", `workspaces/${ws.id}/vars/${id}`, {
      token: ctx.ownerToken,
      body: { data: { type: "vars", id, attributes } },
    });

  it.each([
    ["no key", { category: "env" }, "/data/attributes/key", "Key can't be blank"],
    [
      "a key too long",
      { key: "k".repeat(513), category: "env" },
      "/data/attributes/key",
      "Key is too long (maximum is 512 characters)",
    ],
    ["no category", { key: "k" }, "/data/attributes/category", 'Category must be "engine" (or "terraform") or "env"'],
    [
      "a value not a string",
      { key: "k", category: "env", value: 5 },
      "/data/attributes/value",
      "Value must be a string",
    ],
    [
      "a description not a string",
      { key: "k", category: "env", description: 5 },
      "/data/attributes/description",
      "Description must be a string",
    ],
    [
      "hcl not a boolean",
      { key: "k", category: "env", hcl: "true" },
      "/data/attributes/hcl",
      "Hcl must be true or false",
    ],
    [
      "an hcl value nested too deep",
      { key: "k", category: "env", hcl: true, value: tooDeep },
      "/data/attributes/value",
      "Value nests more than 100 levels deep (the limit of HCL values)",
    ],
  ])("POST: %s → 422 at its pointer", async (_what, attributes, pointer, detail) => {
    expectOne(await create(attributes), pointer, detail);
  });

  it("POST: a wrong data.type → 422 at /data/type", async () => {
    const res = await tfe("POST", `workspaces/${ws.id}/vars`, {
      token: ctx.ownerToken,
      body: { data: { type: "workspaces", attributes: { key: "k", category: "env" } } },
    });
    expectOne(res, "/data/type", 'data.type must be "vars"');
  });

  it("PATCH: each attribute's rule; hcl: true on a stored value nested too deep; hcl and sensitive null read as absent", async () => {
    const plain = await create({ key: `deep_${crypto.randomUUID().slice(0, 8)}`, category: "env", value: tooDeep });
    expect(plain.status, plain.text).toBe(201);
    expectOne(
      await patch(plain.json.data.id, { category: "terraform-ish" }),
      "/data/attributes/category",
      'Category must be "engine" (or "terraform") or "env"',
    );
    expectOne(await patch(plain.json.data.id, { key: null }), "/data/attributes/key", "Key can't be blank");
    expectOne(
      await patch(plain.json.data.id, { hcl: true }),
      "/data/attributes/value",
      "Value nests more than 100 levels deep (the limit of HCL values)",
    );
    const secret = await create({
      key: `secret_${crypto.randomUUID().slice(0, 8)}`,
      category: "env",
      value: "s",
      sensitive: true,
    });
    expect(secret.status, secret.text).toBe(201);
    const kept = await patch(secret.json.data.id, { value: "t", hcl: null, sensitive: null });
    expect(kept.status, kept.text).toBe(200);
    expect(kept.json.data.attributes).toMatchObject({ sensitive: true, hcl: false, value: null });
  });
});

describe("E5 and the rollout create", () => {
  const upgrade = (body: unknown) =>
    tfe("POST", `no-code-modules/${ctx.noCodeModuleId}/workspaces/${ws.id}/upgrade`, { token: ctx.ownerToken, body });
  const rollout = (body: unknown) =>
    tfe("POST", `no-code-modules/${ctx.noCodeModuleId}/upgrade-rollouts`, { token: ctx.ownerToken, body });

  it.each([
    ["a wrong data.type", { data: { type: "runs" } }, "/data/type", 'data.type must be "workspaces"'],
    ["data null", { data: null }, "/data", "data must be a JSON:API resource object"],
    [
      "a message not a string",
      { data: { attributes: { message: 5 } } },
      "/data/attributes/message",
      "Message must be a string",
    ],
    [
      "a var without a key",
      { data: { relationships: { vars: { data: [{ attributes: { category: "engine" } }] } } } },
      "/data/relationships/vars/data/0/attributes/key",
      "Key can't be blank",
    ],
  ])("E5: %s → 422 at its pointer", async (_what, body, pointer, detail) => {
    expectOne(await upgrade(body), pointer, detail);
  });

  const listed = (data: unknown) => ({ data: { type: "upgrade-rollouts", relationships: { workspaces: { data } } } });

  it.each([
    ["a wrong data.type", { data: { type: "upgrade-rollout" } }, "/data/type", 'data.type must be "upgrade-rollouts"'],
    [
      "batch-size 0",
      { data: { attributes: { "batch-size": 0 } } },
      "/data/attributes/batch-size",
      "batch-size must be an integer from 1 to 100",
    ],
    [
      "batch-size 1.5",
      { data: { attributes: { "batch-size": 1.5 } } },
      "/data/attributes/batch-size",
      "batch-size must be an integer from 1 to 100",
    ],
    [
      "max-failures a string",
      { data: { attributes: { "max-failures": "1" } } },
      "/data/attributes/max-failures",
      "max-failures must be an integer from 0 to 100000",
    ],
    [
      "an unknown gate",
      { data: { attributes: { "auto-confirm": "always" } } },
      "/data/attributes/auto-confirm",
      "auto-confirm must be one of never, no-destructions, no-changes",
    ],
    [
      "workspaces not a list",
      listed({}),
      "/data/relationships/workspaces",
      'Relationship workspaces must be {"data": [ … ]}',
    ],
    [
      "no workspace listed",
      listed([]),
      "/data/relationships/workspaces",
      "workspaces must list at least one workspace",
    ],
    [
      "a member not an object",
      listed([1]),
      "/data/relationships/workspaces/data/0",
      "Each member of workspaces must be a resource object",
    ],
    [
      "a member of the singular type",
      listed([{ type: "workspace", id: "ws-x" }]),
      "/data/relationships/workspaces/data/0",
      'Each member must be {"type": "workspaces", "id": …}',
    ],
    [
      "a member without an id",
      listed([{ type: "workspaces" }]),
      "/data/relationships/workspaces/data/0",
      'Each member must be {"type": "workspaces", "id": …}',
    ],
    [
      "a workspace listed twice",
      listed([
        { type: "workspaces", id: "ws-x" },
        { type: "workspaces", id: "ws-x" },
      ]),
      "/data/relationships/workspaces/data/1",
      "Workspace ws-x is listed twice",
    ],
    [
      "more than 1000 workspaces",
      listed(Array.from({ length: 1001 }, (_, i) => ({ type: "workspaces", id: `ws-${i}` }))),
      "/data/relationships/workspaces",
      "A rollout holds at most 1000 workspaces",
    ],
  ])("rollout: %s → 422 at its pointer", async (_what, body, pointer, detail) => {
    expectOne(await rollout(body), pointer, detail);
  });
});

describe("the OpenAPI document carries these request bodies", () => {
  it("E1, E2, E4, vars POST/PATCH, E5 and the rollout create declare their documents; E3 its include", async () => {
    const doc = (await tfe("GET", "openapi.json", { token: null })).json;
    const body = (path: string, method: string) => doc.paths[`/api/v2${path}`][method].requestBody;
    // `attributes` may be null (read as absent): an anyOf of the object and null.
    const attributesOf = (path: string, method: string) => {
      const attributes = body(path, method).content["application/vnd.api+json"].schema.properties.data.properties
        .attributes;
      expect(attributes.anyOf[1]).toEqual({ type: "null" });
      return Object.keys(attributes.anyOf[0].properties);
    };
    expect(attributesOf("/organizations/{org}/no-code-modules", "post")).toEqual(["enabled", "version-pin"]);
    expect(attributesOf("/no-code-modules/{id}", "patch")).toEqual(["enabled", "version-pin"]);
    expect(attributesOf("/no-code-modules/{id}/workspaces", "post")).toEqual(
      expect.arrayContaining(["name", "auto-apply", "execution-mode", "engine-version"]),
    );
    expect(attributesOf("/workspaces/{id}/vars", "post")).toEqual([
      "key",
      "value",
      "description",
      "category",
      "hcl",
      "sensitive",
    ]);
    expect(attributesOf("/workspaces/{id}/vars/{var_id}", "patch")).toEqual([
      "key",
      "value",
      "description",
      "category",
      "hcl",
      "sensitive",
    ]);
    expect(body("/no-code-modules/{id}/workspaces", "post").required).toBe(true);
    // E5's and the rollout's bodies may be empty.
    expect(body("/no-code-modules/{id}/workspaces/{workspace_id}/upgrade", "post").required).toBe(false);
    expect(body("/no-code-modules/{id}/upgrade-rollouts", "post").required).toBe(false);
    const e3 = doc.paths["/api/v2/no-code-modules/{id}"].get;
    expect(e3.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toContain("query:include");
  });
});
