import { describe, expect, it } from "vitest";
import { Acl, PolicyParseError, parsePolicy } from "../../../../src/ssh/access/acl-policy";

const policy = (paths: Record<string, string[]>) =>
  parsePolicy(
    JSON.stringify({ path: Object.fromEntries(Object.entries(paths).map(([p, c]) => [p, { capabilities: c }])) }),
  );

describe("parsePolicy (S5a: Vault's JSON syntax)", () => {
  it("normalises capabilities and strips a leading slash", () => {
    expect(policy({ "/ssh/roles/*": ["read", "list", "read"] })).toEqual({ "ssh/roles/*": ["list", "read"] });
  });

  it.each([
    ["HCL text", 'path "ssh/*" { capabilities = ["read"] }', /only Vault's JSON policy syntax/],
    ["an array", "[]", /must be a JSON object/],
    ["an unknown top-level key", '{"paths":{}}', /invalid key "paths"/],
    ["an unknown capability", '{"path":{"a":{"capabilities":["fly"]}}}', /invalid capability "fly"/],
    ["capabilities not a list", '{"path":{"a":{"capabilities":"read"}}}', /must be a list/],
    ["an unknown rule key", '{"path":{"a":{"capabilities":[],"policy":"write"}}}', /invalid key "policy"/],
  ])("rejects %s", (_label, text, message) => {
    expect(() => parsePolicy(text)).toThrow(PolicyParseError);
    expect(() => parsePolicy(text)).toThrow(message);
  });
});

describe("Acl matching (S5a: Vault's rules)", () => {
  it("matches exact paths, suffix globs and + segments", () => {
    const acl = new Acl([policy({ "ssh/roles/web": ["read"], "ssh/creds/*": ["update"], "ssh/+/ops": ["read"] })]);
    expect(acl.allows("ssh/roles/web", "read")).toBe(true);
    expect(acl.allows("ssh/roles/web2", "read")).toBe(false);
    expect(acl.allows("ssh/creds/anything/deep", "update")).toBe(true);
    expect(acl.allows("ssh/sign/ops", "read")).toBe(true);
    expect(acl.allows("ssh/a/b/ops", "read")).toBe(false);
    expect(acl.allows("other", "read")).toBe(false);
  });

  it("lets deny win over grants of the same path from other policies", () => {
    const acl = new Acl([policy({ "ssh/roles/*": ["read", "update"] }), policy({ "ssh/roles/*": ["deny"] })]);
    expect(acl.allows("ssh/roles/x", "read")).toBe(false);
    expect([...acl.capabilities("ssh/roles/x")]).toEqual(["deny"]);
  });

  it("merges grants of the same path across policies", () => {
    const acl = new Acl([policy({ "ssh/roles/*": ["read"] }), policy({ "ssh/roles/*": ["update"] })]);
    expect(acl.allows("ssh/roles/x", "read")).toBe(true);
    expect(acl.allows("ssh/roles/x", "update")).toBe(true);
  });

  it("uses the most specific matching path: an exact path beats a glob", () => {
    const acl = new Acl([policy({ "ssh/*": ["deny"], "ssh/roles/web": ["read"] })]);
    expect(acl.allows("ssh/roles/web", "read")).toBe(true);
    expect(acl.allows("ssh/roles/db", "read")).toBe(false);
  });

  it("prefers the pattern whose first wildcard comes later", () => {
    const acl = new Acl([policy({ "ssh/*": ["read"], "ssh/roles/*": ["deny"] })]);
    expect(acl.allows("ssh/roles/x", "read")).toBe(false);
    expect(acl.allows("ssh/creds/x", "read")).toBe(true);
  });

  it("prefers a + pattern over a glob at the same position, and fewer + segments", () => {
    const acl = new Acl([policy({ "ssh/+/web": ["update"], "ssh/*": ["read"], "+/+/web": ["delete"] })]);
    expect([...acl.capabilities("ssh/roles/web")]).toEqual(["update"]);
    expect([...acl.capabilities("kv/roles/web")]).toEqual(["delete"]);
  });

  it("prefers the longer of two globs at the same position", () => {
    const acl = new Acl([policy({ "ssh/ro*": ["read"], "ssh/roles*": ["update"] })]);
    expect([...acl.capabilities("ssh/roles/x")]).toEqual(["update"]);
    expect([...acl.capabilities("ssh/rotate")]).toEqual(["read"]);
  });
});
