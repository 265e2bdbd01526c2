import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { tokenWithPolicy, uniqueName, vault } from "../../../helpers/vault";

const rules = (paths: Record<string, string[]>) =>
  JSON.stringify({ path: Object.fromEntries(Object.entries(paths).map(([p, c]) => [p, { capabilities: c }])) });

describe("sys/policies/acl (S5a)", () => {
  it("writes, reads, lists and deletes a policy", async () => {
    const name = uniqueName("crud");
    const text = rules({ "ssh/roles/*": ["read"] });
    expect((await vault("PUT", `sys/policies/acl/${name}`, { body: { policy: text } })).status).toBe(204);
    const read = await vault("GET", `sys/policies/acl/${name}`);
    expect(read.json.data).toEqual({ name, policy: text });
    const list = await vault("GET", "sys/policies/acl?list=true");
    expect(list.json.data.keys).toContain(name);
    expect(list.json.data.keys).toContain("default");
    expect(list.json.data.keys).toContain("root");
    expect((await vault("DELETE", `sys/policies/acl/${name}`)).status).toBe(204);
    const gone = await vault("GET", `sys/policies/acl/${name}`);
    expect(gone.status).toBe(404);
    expect(gone.json).toEqual({ errors: [] });
  });

  it("has a default policy from the start and protects root and default", async () => {
    const def = await vault("GET", "sys/policies/acl/default");
    expect(def.status).toBe(200);
    expect(JSON.parse(def.json.data.policy).path["auth/token/lookup-self"]).toEqual({ capabilities: ["read"] });
    expect(
      (await vault("PUT", "sys/policies/acl/root", { body: { policy: rules({ "*": ["read"] }) } })).json.errors,
    ).toEqual(['cannot update "root" policy']);
    expect((await vault("DELETE", "sys/policies/acl/default")).status).toBe(400);
    expect((await vault("DELETE", "sys/policies/acl/root")).status).toBe(400);
  });

  it("refuses unknown policy syntax and changes nothing", async () => {
    const name = uniqueName("bad");
    await vault("PUT", `sys/policies/acl/${name}`, { body: { policy: rules({ "a/*": ["read"] }) } });
    for (const policy of ['path "a/*" { capabilities = ["read"] }', rules({ "a/*": ["sing"] }), "", "[]"]) {
      const res = await vault("PUT", `sys/policies/acl/${name}`, { body: { policy } });
      expect(res.status).toBe(400);
    }
    const wrongType = await vault("PUT", `sys/policies/acl/${name}`, { body: { policy: { path: {} } } });
    expect(wrongType.status).toBe(400);
    const read = await vault("GET", `sys/policies/acl/${name}`);
    expect(read.json.data.policy).toBe(rules({ "a/*": ["read"] }));
  });

  it("rejects a bad list flag with 400 and GET without it with 405 (S2)", async () => {
    expect((await vault("GET", "sys/policies/acl?list=maybe")).status).toBe(400);
    expect((await vault("GET", "sys/policies/acl")).status).toBe(405);
    for (const flag of ["1", "t", "T", "TRUE", "True"]) {
      expect((await vault("GET", `sys/policies/acl?list=${flag}`)).status).toBe(200);
    }
    expect((await vault("GET", "sys/policies/acl?list=false")).status).toBe(405);
  });
});

describe("ACL enforcement (S5a, S6)", () => {
  it("applies deny over grants on the same path from another policy", async () => {
    const allow = uniqueName("allow");
    const deny = uniqueName("deny");
    await vault("PUT", `sys/policies/acl/${allow}`, { body: { policy: rules({ "sys/policies/acl/*": ["read"] }) } });
    await vault("PUT", `sys/policies/acl/${deny}`, { body: { policy: rules({ "sys/policies/acl/*": ["deny"] }) } });
    const both = (await vault("POST", "auth/token/create", { body: { policies: [allow, deny] } })).json.auth
      .client_token;
    const onlyAllow = (await vault("POST", "auth/token/create", { body: { policies: [allow] } })).json.auth
      .client_token;
    expect((await vault("GET", "sys/policies/acl/default", { token: both })).status).toBe(403);
    expect((await vault("GET", "sys/policies/acl/default", { token: onlyAllow })).status).toBe(200);
  });

  it("lets the most specific path win", async () => {
    const token = await tokenWithPolicy({ "sys/policies/acl/*": ["deny"], "sys/policies/acl/default": ["read"] });
    expect((await vault("GET", "sys/policies/acl/default", { token })).status).toBe(200);
    expect((await vault("GET", "sys/policies/acl/other", { token })).status).toBe(403);
  });

  it("matches + as exactly one segment", async () => {
    const token = await tokenWithPolicy({ "sys/+/acl/default": ["read"] });
    expect((await vault("GET", "sys/policies/acl/default", { token })).status).toBe(200);
    expect((await vault("GET", "sys/policies/acl/x", { token })).status).toBe(403);
  });

  it("checks list against the path with a trailing slash", async () => {
    const token = await tokenWithPolicy({ "sys/policies/acl/": ["list"] });
    expect((await vault("GET", "sys/policies/acl?list=true", { token })).status).toBe(200);
    expect((await vault("GET", "sys/policies/acl/default", { token })).status).toBe(403);
  });

  it("lets PATCH pass with either patch or update (S6)", async () => {
    const update = await tokenWithPolicy({ "ssh/roles/*": ["update"] });
    const patch = await tokenWithPolicy({ "ssh/roles/*": ["patch"] });
    const read = await tokenWithPolicy({ "ssh/roles/*": ["read"] });
    expect((await vault("PATCH", "ssh/roles/absent", { token: update, body: {} })).status).not.toBe(403);
    expect((await vault("PATCH", "ssh/roles/absent", { token: patch, body: {} })).status).not.toBe(403);
    expect((await vault("PATCH", "ssh/roles/absent", { token: read, body: {} })).status).toBe(403);
  });

  it("requires create on sign and issue; update alone is refused (S6)", async () => {
    const createOnly = await tokenWithPolicy({ "ssh/sign/*": ["create"], "ssh/issue/*": ["create"] });
    const both = await tokenWithPolicy({ "ssh/sign/*": ["create", "update"], "ssh/issue/*": ["create", "update"] });
    const updateOnly = await tokenWithPolicy({ "ssh/sign/*": ["update"], "ssh/issue/*": ["update"] });
    for (const path of ["ssh/sign/some-role", "ssh/issue/some-role"]) {
      expect((await vault("POST", path, { token: createOnly, body: {} })).status, path).not.toBe(403);
      expect((await vault("POST", path, { token: both, body: {} })).status, path).not.toBe(403);
      const denied = await vault("POST", path, { token: updateOnly, body: {} });
      expect(denied.status, path).toBe(403);
      expect(denied.json).toEqual({ errors: ["permission denied"] });
    }
  });

  it("the default policy lets any token look itself up but nothing else", async () => {
    const token = (await vault("POST", "auth/token/create", { body: { policies: ["default"] } })).json.auth
      .client_token;
    expect((await vault("GET", "auth/token/lookup-self", { token })).status).toBe(200);
    expect((await vault("POST", "auth/token/create", { token, body: {} })).status).toBe(403);
    const caps = await vault("POST", "sys/capabilities-self", { token, body: { paths: ["auth/token/lookup-self"] } });
    expect(caps.json.data.capabilities).toEqual(["read"]);
  });

  it("stores policies as parsed rules in D1", async () => {
    const name = uniqueName("stored");
    await vault("PUT", `sys/policies/acl/${name}`, { body: { policy: rules({ "ssh/*": ["read", "list"] }) } });
    const row = await env.DB.prepare("SELECT rules FROM vault_policies WHERE name = ?")
      .bind(name)
      .first<{ rules: string }>();
    expect(JSON.parse(row!.rules)).toEqual({ "ssh/*": ["list", "read"] });
  });
});

describe("B8: a stored policy fits one D1 row", () => {
  it("refuses a policy whose text and parsed rules together exceed D1's 2 MB row, storing nothing", async () => {
    const name = uniqueName("huge");
    const text = rules({ [`ssh/${"a".repeat(990_000)}`]: ["read"] });
    const res = await vault("PUT", `sys/policies/acl/${name}`, { body: { policy: text } });
    expect(res.status).toBe(400);
    expect(res.json.errors[0]).toMatch(/^policy is too large/);
    expect((await vault("GET", `sys/policies/acl/${name}`)).status).toBe(404);
    // Half of it is fine.
    const half = rules({ [`ssh/${"a".repeat(400_000)}`]: ["read"] });
    expect((await vault("PUT", `sys/policies/acl/${name}`, { body: { policy: half } })).status).toBe(204);
  });
});
