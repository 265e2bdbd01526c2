/**
 * Workspace variables (decisions N5, N9, N10, B2; HCP Terraform's workspace variables API):
 * `GET|POST /workspaces/:id/vars`, `PATCH|DELETE /workspaces/:id/vars/:var_id`.
 * Sensitive values are write-only and stored only encrypted under KEYWAY_KEK; the D1 rows
 * are checked to hold no plaintext.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { decryptSecret } from "../../../../src/lib/crypto/kek";
import { ADMIN, bootstrapOrg, createMember, createOrgToken, tfe } from "../../../helpers/nocode";
import {
  createNoCodeWorkspace,
  type NoCodeOrg,
  noCodeOrg,
  optionEntry,
  varEntry,
} from "../../../helpers/nocode-modules";

let ctx: NoCodeOrg;
beforeAll(async () => {
  ctx = await noCodeOrg({ options: [optionEntry("length", ["2", "3"], "number")] });
});

/** A unique secret, so a search of the database for it cannot hit anything else. */
const secret = () => `s3cr3t-${crypto.randomUUID()}`;

/** Every text cell of the rows that belong to a workspace (its row, vars, runs, state versions). */
async function storedText(workspaceId: string): Promise<string> {
  const parts: unknown[] = [];
  for (const [sql, bind] of [
    ["SELECT * FROM workspaces WHERE id = ?", workspaceId],
    ["SELECT * FROM workspace_vars WHERE workspace_id = ?", workspaceId],
    ["SELECT * FROM runs WHERE workspace_id = ?", workspaceId],
    ["SELECT * FROM state_versions WHERE workspace_id = ?", workspaceId],
  ] as const) {
    parts.push((await env.DB.prepare(sql).bind(bind).all()).results);
  }
  return JSON.stringify(parts);
}

interface VarRow {
  id: string;
  key: string;
  category: string;
  value: string | null;
  value_encrypted: string | null;
  sensitive_hash: string | null;
  sensitive: number;
}

async function varRow(id: string): Promise<VarRow> {
  return (await env.DB.prepare("SELECT * FROM workspace_vars WHERE id = ?").bind(id).first<VarRow>())!;
}

const varBody = (attributes: Record<string, unknown>) => ({ data: { type: "vars", attributes } });

async function workspace(vars = [varEntry("prefix", "pet")]) {
  return (await createNoCodeWorkspace(ctx.noCodeModuleId, ctx.ownerToken, {}, vars)).workspace;
}

describe("vars given to E4", () => {
  it("are created with their key, value, category and hcl; a sensitive value is never readable", async () => {
    const password = secret();
    const ws = await workspace([
      varEntry("prefix", "pet"),
      varEntry("length", "3", { hcl: true, description: "how long" }),
      varEntry("greeting", password, { sensitive: true }),
      varEntry("AWS_REGION", "eu-west-1", { category: "env" }),
      varEntry("tags", '{ team = "x" }', { category: "terraform", hcl: true }),
    ]);
    const list = await tfe("GET", `workspaces/${ws.id}/vars`, { token: ctx.ownerToken });
    expect(list.status).toBe(200);
    const byKey = Object.fromEntries(list.json.data.map((v: { attributes: { key: string } }) => [v.attributes.key, v]));
    expect(Object.keys(byKey).sort()).toEqual(["AWS_REGION", "greeting", "length", "prefix", "tags"]);
    expect(byKey.length).toMatchObject({
      type: "vars",
      attributes: {
        key: "length",
        value: "3",
        category: "engine",
        hcl: true,
        sensitive: false,
        description: "how long",
      },
      relationships: { configurable: { data: { id: ws.id, type: "workspaces" } } },
      links: { self: `/api/v2/workspaces/${ws.id}/vars/${byKey.length.id}` },
    });
    expect(byKey.length.id).toMatch(/^var-[A-Za-z0-9]{16}$/);
    expect(byKey.AWS_REGION.attributes).toMatchObject({ value: "eu-west-1", category: "env" });
    // N5: `terraform` is a synonym of `engine`.
    expect(byKey.tags.attributes.category).toBe("engine");
    expect(byKey.greeting.attributes).toMatchObject({
      key: "greeting",
      value: null,
      sensitive: true,
      category: "engine",
    });
    expect(list.text).not.toContain(password);
    // The workspace document lists the vars by id.
    const read = await tfe("GET", `workspaces/${ws.id}`, { token: ctx.ownerToken });
    expect(read.json.data.relationships.vars.data).toHaveLength(5);
    expect(read.text).not.toContain(password);
  });

  it("stores a sensitive value only encrypted under KEYWAY_KEK (B2): no plaintext in any D1 row of the workspace", async () => {
    const password = secret();
    const ws = await workspace([varEntry("prefix", "pet"), varEntry("greeting", password, { sensitive: true })]);
    const list = await tfe("GET", `workspaces/${ws.id}/vars`, { token: ctx.ownerToken });
    const id = list.json.data.find((v: { attributes: { key: string } }) => v.attributes.key === "greeting").id;
    const row = await varRow(id);
    expect(row.value).toBeNull();
    expect(row.value_encrypted).toMatch(/^v1\.t1\./);
    expect(row.sensitive_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(await decryptSecret(env.KEYWAY_KEK, `workspace-var:${id}`, row.value_encrypted!)).toBe(password);
    expect(await storedText(ws.id)).not.toContain(password);
  });
});

describe("POST /workspaces/:id/vars", () => {
  it("creates a var (201) and refuses a taken key in the same category (422 Key has already been taken)", async () => {
    const ws = await workspace();
    const res = await tfe("POST", `workspaces/${ws.id}/vars`, {
      token: ctx.ownerToken,
      body: varBody({ key: "APP_LOG_LEVEL", value: "debug", category: "env" }),
    });
    expect(res.status).toBe(201);
    expect(res.json.data.attributes).toMatchObject({
      key: "APP_LOG_LEVEL",
      value: "debug",
      category: "env",
      hcl: false,
      sensitive: false,
      description: null,
    });
    expect(res.json.data.attributes["version-id"]).toMatch(/^[0-9a-f]{40}$/);
    const taken = await tfe("POST", `workspaces/${ws.id}/vars`, {
      token: ctx.ownerToken,
      body: varBody({ key: "prefix", value: "x", category: "engine" }),
    });
    expect(taken.status).toBe(422);
    expect(taken.json.errors[0]).toEqual({
      status: "422",
      title: "invalid attribute",
      detail: "Key has already been taken",
      source: { pointer: "/data/attributes/key" },
    });
    // The same key in the other category is another variable.
    expect(
      (
        await tfe("POST", `workspaces/${ws.id}/vars`, {
          token: ctx.ownerToken,
          body: varBody({ key: "prefix", value: "x", category: "env" }),
        })
      ).status,
    ).toBe(201);
  });

  it("enforces the module's options (N5) and answers a sensitive value with null", async () => {
    const ws = await workspace();
    const outside = await tfe("POST", `workspaces/${ws.id}/vars`, {
      token: ctx.ownerToken,
      body: varBody({ key: "length", value: "9", category: "terraform" }),
    });
    expect(outside.status).toBe(422);
    expect(outside.json.errors[0].detail).toBe(
      'Value of variable "length" must be one of the allowed options: "2", "3"',
    );
    const password = secret();
    const sensitive = await tfe("POST", `workspaces/${ws.id}/vars`, {
      token: ctx.ownerToken,
      body: varBody({ key: "greeting", value: password, category: "engine", sensitive: true }),
    });
    expect(sensitive.status).toBe(201);
    expect(sensitive.json.data.attributes.value).toBeNull();
    expect(sensitive.text).not.toContain(password);
    expect(await storedText(ws.id)).not.toContain(password);
  });

  it("malformed attributes are 422 with pointers", async () => {
    const ws = await workspace();
    for (const [attributes, pointer] of [
      [{ value: "x", category: "env" }, "/data/attributes/key"],
      [{ key: "k", value: "x" }, "/data/attributes/category"],
      [{ key: "k", value: "x", category: "nope" }, "/data/attributes/category"],
      [{ key: "k", value: 1, category: "env" }, "/data/attributes/value"],
      [{ key: "k", value: "x", category: "env", sensitive: "yes" }, "/data/attributes/sensitive"],
    ] as const) {
      const res = await tfe("POST", `workspaces/${ws.id}/vars`, { token: ctx.ownerToken, body: varBody(attributes) });
      expect(res.status, JSON.stringify(attributes)).toBe(422);
      expect(res.json.errors[0].source.pointer).toBe(pointer);
    }
  });
});

describe("PATCH /workspaces/:id/vars/:var_id", () => {
  async function withVar(attributes: Record<string, unknown>) {
    const ws = await workspace();
    const res = await tfe("POST", `workspaces/${ws.id}/vars`, { token: ctx.ownerToken, body: varBody(attributes) });
    expect(res.status).toBe(201);
    return { ws, v: res.json.data };
  }

  it("changes what is sent and keeps the rest; a new version-id each time; options enforced", async () => {
    const { ws, v } = await withVar({ key: "length", value: "2", category: "engine", description: "d" });
    const res = await tfe("PATCH", `workspaces/${ws.id}/vars/${v.id}`, {
      token: ctx.ownerToken,
      body: varBody({ value: "3" }),
    });
    expect(res.status).toBe(200);
    expect(res.json.data.attributes).toMatchObject({ key: "length", value: "3", description: "d", category: "engine" });
    expect(res.json.data.attributes["version-id"]).not.toBe(v.attributes["version-id"]);
    const outside = await tfe("PATCH", `workspaces/${ws.id}/vars/${v.id}`, {
      token: ctx.ownerToken,
      body: varBody({ value: "4" }),
    });
    expect(outside.status).toBe(422);
    const read = await tfe("GET", `workspaces/${ws.id}/vars`, { token: ctx.ownerToken });
    expect(read.json.data.find((x: { id: string }) => x.id === v.id).attributes.value).toBe("3");
  });

  it("making a var sensitive blanks its value in that very response and encrypts it at rest (HCP Terraform's workspace variables API)", async () => {
    const plaintext = secret();
    const { ws, v } = await withVar({ key: "API_KEY", value: plaintext, category: "env" });
    const res = await tfe("PATCH", `workspaces/${ws.id}/vars/${v.id}`, {
      token: ctx.ownerToken,
      body: varBody({ sensitive: true }),
    });
    expect(res.status).toBe(200);
    expect(res.json.data.attributes).toMatchObject({ sensitive: true, value: null });
    const row = await varRow(v.id);
    expect(row.value).toBeNull();
    expect(await decryptSecret(env.KEYWAY_KEK, `workspace-var:${v.id}`, row.value_encrypted!)).toBe(plaintext);
    expect(await storedText(ws.id)).not.toContain(plaintext);
  });

  it("a sensitive var takes a new value (new hash, still unreadable) but no other change, and never becomes non-sensitive", async () => {
    const first = secret();
    const { ws, v } = await withVar({ key: "greeting", value: first, category: "engine", sensitive: true });
    const hashBefore = (await varRow(v.id)).sensitive_hash;
    const second = secret();
    const res = await tfe("PATCH", `workspaces/${ws.id}/vars/${v.id}`, {
      token: ctx.ownerToken,
      body: varBody({ value: second, description: "rotated" }),
    });
    expect(res.status).toBe(200);
    expect(res.json.data.attributes).toMatchObject({ value: null, description: "rotated", sensitive: true });
    expect((await varRow(v.id)).sensitive_hash).not.toBe(hashBefore);
    expect(await storedText(ws.id)).not.toContain(second);
    for (const attributes of [{ sensitive: false }, { key: "other" }, { category: "env" }, { hcl: true }]) {
      const refused = await tfe("PATCH", `workspaces/${ws.id}/vars/${v.id}`, {
        token: ctx.ownerToken,
        body: varBody(attributes),
      });
      expect(refused.status, JSON.stringify(attributes)).toBe(422);
    }
  });

  it("a rename onto a taken key → 422; renaming away a required variable → 422; unknown var → 404", async () => {
    const { ws, v } = await withVar({ key: "extra", value: "1", category: "engine" });
    const list = (await tfe("GET", `workspaces/${ws.id}/vars`, { token: ctx.ownerToken })).json.data;
    const prefix = list.find((x: { attributes: { key: string } }) => x.attributes.key === "prefix");
    const onto = await tfe("PATCH", `workspaces/${ws.id}/vars/${v.id}`, {
      token: ctx.ownerToken,
      body: varBody({ key: "prefix" }),
    });
    expect(onto.status).toBe(422);
    expect(onto.json.errors[0].detail).toBe("Key has already been taken");
    const away = await tfe("PATCH", `workspaces/${ws.id}/vars/${prefix.id}`, {
      token: ctx.ownerToken,
      body: varBody({ category: "env" }),
    });
    expect(away.status).toBe(422);
    expect(away.json.errors[0].detail).toMatch(/^Missing required variable "prefix"/);
    expect(
      (
        await tfe("PATCH", `workspaces/${ws.id}/vars/var-AAAAAAAAAAAAAAAA`, {
          token: ctx.ownerToken,
          body: varBody({ value: "x" }),
        })
      ).status,
    ).toBe(404);
  });
});

describe("DELETE /workspaces/:id/vars/:var_id", () => {
  it("deletes (204); a required module variable cannot be deleted (N5)", async () => {
    const ws = await workspace([varEntry("prefix", "pet"), varEntry("length", "2")]);
    const list = (await tfe("GET", `workspaces/${ws.id}/vars`, { token: ctx.ownerToken })).json.data;
    const id = (key: string) => list.find((x: { attributes: { key: string } }) => x.attributes.key === key).id;
    const del = await tfe("DELETE", `workspaces/${ws.id}/vars/${id("length")}`, { token: ctx.ownerToken });
    expect(del.status).toBe(204);
    const required = await tfe("DELETE", `workspaces/${ws.id}/vars/${id("prefix")}`, { token: ctx.ownerToken });
    expect(required.status).toBe(422);
    expect(required.json.errors[0].detail).toMatch(/^Missing required variable "prefix"/);
    const after = (await tfe("GET", `workspaces/${ws.id}/vars`, { token: ctx.ownerToken })).json.data.map(
      (x: { attributes: { key: string } }) => x.attributes.key,
    );
    expect(after).toEqual(["prefix"]);
    expect((await tfe("DELETE", `workspaces/${ws.id}/vars/${id("length")}`, { token: ctx.ownerToken })).status).toBe(
      404,
    );
  });
});

describe("var permissions (N10)", () => {
  it("the organization token and manage-workspaces may write; read-workspaces may only read; others get 404", async () => {
    const ws = await workspace();
    const orgToken = await createOrgToken(ctx.org);
    expect(
      (
        await tfe("POST", `workspaces/${ws.id}/vars`, {
          token: orgToken,
          body: varBody({ key: "A", value: "1", category: "env" }),
        })
      ).status,
    ).toBe(201);
    const manager = await createMember(ctx.org, { "manage-workspaces": true });
    expect(
      (
        await tfe("POST", `workspaces/${ws.id}/vars`, {
          token: manager.token,
          body: varBody({ key: "B", value: "1", category: "env" }),
        })
      ).status,
    ).toBe(201);
    const reader = await createMember(ctx.org, { "read-workspaces": true });
    expect((await tfe("GET", `workspaces/${ws.id}/vars`, { token: reader.token })).status).toBe(200);
    expect(
      (
        await tfe("POST", `workspaces/${ws.id}/vars`, {
          token: reader.token,
          body: varBody({ key: "C", value: "1", category: "env" }),
        })
      ).status,
    ).toBe(404);
    const member = await createMember(ctx.org, {});
    for (const token of [member.token, ADMIN, (await bootstrapOrg()).ownerToken]) {
      expect((await tfe("GET", `workspaces/${ws.id}/vars`, { token })).status).toBe(404);
    }
  });
});
