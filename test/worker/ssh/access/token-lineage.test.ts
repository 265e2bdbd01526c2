/**
 * Tokens and entities: S5b (entities on tokens, a child
 * never outlives its parent) and B8 (revoking a token with more than 100 children).
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { handleFetch } from "../../../../src/index";
import { tokenWithPolicy, uniqueName, vault } from "../../../helpers/vault";
import { CA_KEYS, decodeSignedKey, SUBJECT_KEYS } from "../ca-fixtures";

async function policy(rules: Record<string, string[]>): Promise<string> {
  const name = uniqueName("pol");
  const path: Record<string, { capabilities: string[] }> = {};
  for (const [p, capabilities] of Object.entries(rules)) path[p] = { capabilities };
  const res = await vault("PUT", `sys/policies/acl/${name}`, { body: { policy: JSON.stringify({ path }) } });
  if (res.status !== 204) throw new Error(res.text);
  return name;
}

async function create(parent: string, body: Record<string, unknown> = {}) {
  return vault("POST", "auth/token/create", { token: parent, body });
}

async function entity(policies: string[] = [], metadata: Record<string, string> = {}): Promise<string> {
  const res = await vault("POST", "identity/entity", { body: { name: uniqueName("alice"), policies, metadata } });
  if (res.status !== 200) throw new Error(res.text);
  return res.json.data.id as string;
}

async function tokenRows(): Promise<number> {
  const row = await env.DB.prepare("SELECT count(*) AS n FROM vault_tokens").first<{ n: number }>();
  return row!.n;
}

const ROLE = uniqueName("tmpl");

beforeAll(async () => {
  const ca = await vault("POST", "ssh/config/ca", {
    body: { private_key: CA_KEYS.ed25519.privateKey, public_key: CA_KEYS.ed25519.publicKey },
  });
  expect(ca.status).toBe(204);
  const role = await vault("POST", `ssh/roles/${ROLE}`, {
    body: {
      key_type: "ca",
      allow_user_certificates: true,
      allowed_users_template: true,
      allowed_users: "{{identity.entity.metadata.ssh_username}}",
      default_user_template: true,
      default_user: "{{identity.entity.metadata.ssh_username}}",
    },
  });
  expect(role.status).toBe(204);
});

describe("S5b: entity_id on auth/token/create", () => {
  it("refuses entity_id to a caller allowed only auth/token/create: no impersonation of alice", async () => {
    const alicePolicy = await policy({ [`ssh/sign/${ROLE}`]: ["create", "update"] });
    const alice = await entity([alicePolicy], { ssh_username: "alice" });
    const mallory = await tokenWithPolicy({ "auth/token/create": ["create", "update"] });
    const before = await tokenRows();
    const res = await create(mallory, { entity_id: alice });
    expect(res.status).toBe(403);
    expect(res.json).toEqual({ errors: ["permission denied"] });
    expect(await tokenRows()).toBe(before);
    // Naming one's own policies does not help either.
    expect((await create(mallory, { entity_id: alice, policies: [] })).status).toBe(403);
  });

  it("allows entity_id to root and to a caller with sudo on auth/token/create", async () => {
    const alicePolicy = await policy({ [`ssh/sign/${ROLE}`]: ["create", "update"] });
    const alice = await entity([alicePolicy], { ssh_username: "alice" });
    const byRoot = await create(env.ROOT_TOKEN, { entity_id: alice, policies: ["default"] });
    expect(byRoot.status).toBe(200);
    expect(byRoot.json.auth.entity_id).toBe(alice);
    const admin = await tokenWithPolicy({ "auth/token/create": ["create", "update", "sudo"] });
    const bySudo = await create(admin, { entity_id: alice });
    expect(bySudo.status).toBe(200);
    expect(bySudo.json.auth.entity_id).toBe(alice);
    // The token alice's administrator made signs as alice.
    const signed = await vault("POST", `ssh/sign/${ROLE}`, {
      token: bySudo.json.auth.client_token,
      body: { public_key: SUBJECT_KEYS.ed25519 },
    });
    expect(signed.status, signed.text).toBe(200);
    expect(decodeSignedKey(signed.json.data.signed_key).principals).toEqual(["alice"]);
  });

  it("gives a child its parent's entity, and lets it grant its token policies but never its identity policies", async () => {
    const identityPolicy = await policy({ [`ssh/sign/${ROLE}`]: ["create", "update"] });
    const tokenPolicy = await policy({ "auth/token/create": ["create", "update"] });
    const bob = await entity([identityPolicy], { ssh_username: "bob" });
    const parent = (await create(env.ROOT_TOKEN, { entity_id: bob, policies: [tokenPolicy] })).json.auth;
    expect(parent.identity_policies).toEqual([identityPolicy]);

    const copied = await create(parent.client_token, { policies: [identityPolicy] });
    expect(copied.status).toBe(400);
    expect(copied.json).toEqual({ errors: ["child policies must be subset of parent"] });

    const child = await create(parent.client_token, { policies: [tokenPolicy] });
    expect(child.status).toBe(200);
    expect(child.json.auth.entity_id).toBe(bob);
    expect(child.json.auth.token_policies).toEqual(["default", tokenPolicy].sort());
    const lookup = await vault("GET", "auth/token/lookup-self", { token: child.json.auth.client_token });
    expect(lookup.json.data.entity_id).toBe(bob);
    // A child without named policies gets the parent's token policies, and signs as bob
    // only through the entity it inherited.
    const plain = await create(parent.client_token);
    expect(plain.json.auth.entity_id).toBe(bob);
    expect(plain.json.auth.token_policies).toEqual(["default", tokenPolicy].sort());
  });
});

describe("S5b: a child never outlives its parent", () => {
  const renewer = { "auth/token/create": ["create", "update"], "auth/token/renew": ["update"] };

  it("caps a child's TTL, renew-self and renew at the parent's remaining lifetime", async () => {
    const parentPolicy = await policy(renewer);
    const parent = (await create(env.ROOT_TOKEN, { policies: [parentPolicy], ttl: "1h" })).json.auth;
    expect(parent.lease_duration).toBe(3600);
    const child = await create(parent.client_token, { ttl: "10h" });
    expect(child.status).toBe(200);
    expect(child.json.auth.lease_duration).toBeLessThanOrEqual(3600);
    const childToken = child.json.auth.client_token as string;

    const renewedSelf = await vault("POST", "auth/token/renew-self", {
      token: childToken,
      body: { increment: "100h" },
    });
    expect(renewedSelf.status).toBe(200);
    expect(renewedSelf.json.auth.lease_duration).toBeLessThanOrEqual(3600);

    const renewed = await vault("POST", "auth/token/renew", {
      token: parent.client_token,
      body: { token: childToken, increment: "100h" },
    });
    expect(renewed.status, renewed.text).toBe(200);
    expect(renewed.json.auth.lease_duration).toBeLessThanOrEqual(3600);
    const lookup = await vault("POST", "auth/token/lookup", { body: { token: childToken } });
    expect(lookup.json.data.ttl).toBeLessThanOrEqual(3600);

    // A grandchild is capped by its grandparent too, even once its parent was renewed long.
    const grandchild = (await create(childToken, { ttl: "5h" })).json.auth;
    expect(grandchild.lease_duration).toBeLessThanOrEqual(3600);
  });

  it("revokes a child whose parent has expired instead of renewing it", async () => {
    const parentPolicy = await policy(renewer);
    const parent = (await create(env.ROOT_TOKEN, { policies: [parentPolicy], ttl: "1h" })).json.auth;
    const child = (await create(parent.client_token)).json.auth;
    // The parent expires (its row is not touched by anyone presenting it).
    await env.DB.prepare("UPDATE vault_tokens SET expire_at = ? WHERE accessor = ?")
      .bind(Date.now() - 1000, parent.accessor)
      .run();
    const renewed = await vault("POST", "auth/token/renew-self", {
      token: child.client_token,
      body: { increment: "1h" },
    });
    expect(renewed.status).toBe(403);
    expect((await vault("GET", "auth/token/lookup-self", { token: child.client_token })).status).toBe(403);
  });

  it("revokes the whole subtree when a parent expires", async () => {
    const parentPolicy = await policy(renewer);
    const parent = (await create(env.ROOT_TOKEN, { policies: [parentPolicy], ttl: "1h" })).json.auth;
    const child = (await create(parent.client_token)).json.auth;
    const grandchild = (await create(child.client_token)).json.auth;
    // The parent's hour passes (only `Date` is faked). Its context may be in the per-isolate
    // token cache (docs/performance.md), whose expiry check uses the cached expire time; a write of
    // expire_at straight into D1 would be another isolate's change, seen within 1 s.
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Date.now() + 3_600_000 + 1000);
      // Presenting the expired parent runs the expiry cleanup.
      expect((await vault("GET", "auth/token/lookup-self", { token: parent.client_token })).status).toBe(403);
    } finally {
      vi.useRealTimers();
    }
    const left = await env.DB.prepare("SELECT count(*) AS n FROM vault_tokens WHERE accessor IN (?, ?, ?)")
      .bind(parent.accessor, child.accessor, grandchild.accessor)
      .first<{ n: number }>();
    expect(left!.n).toBe(0);
  });
});

/**
 * D1 refuses a statement with more than 100 bound parameters; local SQLite does not. This
 * wraps the real binding (not a mock) and enforces that limit on every statement.
 */
function d1WithParameterLimit(d1: D1Database): D1Database {
  const bindOf = (stmt: D1PreparedStatement) =>
    new Proxy(stmt, {
      get(target, prop) {
        if (prop === "bind") {
          return (...values: unknown[]) => {
            if (values.length > 100)
              throw new Error(`D1_ERROR: too many SQL variables (${values.length} bound parameters; D1 allows 100)`);
            return target.bind(...values);
          };
        }
        const value = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  return new Proxy(d1, {
    get(target, prop) {
      if (prop === "prepare") return (query: string) => bindOf(target.prepare(query));
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

const limitedEnv = { ...env, DB: d1WithParameterLimit(env.DB) } as Env;

/** Call /v1 with D1's parameter limit enforced. */
async function limitedVault(method: string, path: string, token: string, body?: unknown) {
  const ctx = createExecutionContext();
  const res = await handleFetch(
    new Request(`http://keyway.test/v1/${path}`, {
      method,
      headers: { "X-Vault-Token": token, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
    limitedEnv,
    ctx,
  );
  const text = await res.text();
  await waitOnExecutionContext(ctx);
  return { status: res.status, text };
}

describe("B8: revoking a token with more than 100 children", () => {
  const CHILDREN = 150;

  /**
   * A parent with CHILDREN children and one grandchild under the last of them. Through the
   * API when `viaApi`; otherwise the children are inserted in one statement (same rows, faster).
   */
  async function family(viaApi = false) {
    const parentPolicy = await policy({ "auth/token/create": ["create", "update"] });
    const parent = (await create(env.ROOT_TOKEN, { policies: [parentPolicy] })).json.auth;
    let children: string[];
    if (viaApi) {
      children = await Promise.all(
        Array.from({ length: CHILDREN }, async () => (await create(parent.client_token)).json.auth.accessor as string),
      );
    } else {
      const prefix = uniqueName("child");
      children = Array.from({ length: CHILDREN }, (_, i) => `${prefix}-${i}`);
      await env.DB.prepare(
        `INSERT INTO vault_tokens (id, accessor, policies, display_name, meta, parent_accessor, num_uses, ttl, explicit_max_ttl, created_at, expire_at)
         SELECT 'id-' || value, value, '["default"]', 'token', '{}', ?, 0, 3600, 0, ?, ? FROM json_each(?)`,
      )
        .bind(parent.accessor, Date.now(), Date.now() + 3_600_000, JSON.stringify(children))
        .run();
    }
    const grandchild = uniqueName("grandchild");
    await env.DB.prepare(
      `INSERT INTO vault_tokens (id, accessor, policies, display_name, meta, parent_accessor, num_uses, ttl, explicit_max_ttl, created_at, expire_at)
       VALUES (?, ?, '["default"]', 'token', '{}', ?, 0, 3600, 0, ?, ?)`,
    )
      .bind(`id-${grandchild}`, grandchild, children[CHILDREN - 1], Date.now(), Date.now() + 3_600_000)
      .run();
    return { parent, accessors: [parent.accessor, ...children, grandchild] };
  }

  async function remaining(accessors: string[]): Promise<number> {
    const row = await env.DB.prepare("SELECT count(*) AS n FROM vault_tokens, json_each(?) j WHERE accessor = j.value")
      .bind(JSON.stringify(accessors))
      .first<{ n: number }>();
    return row!.n;
  }

  it("the guard refuses a statement over 100 parameters (so the cases below would fail)", async () => {
    const placeholders = Array.from({ length: 101 }, () => "?").join(",");
    expect(() =>
      limitedEnv.DB.prepare(`SELECT 1 WHERE 1 IN (${placeholders})`).bind(...Array.from({ length: 101 }, (_, i) => i)),
    ).toThrow(/too many SQL variables/);
  });

  it("revoke-self", async () => {
    const { parent, accessors } = await family(true);
    expect(await remaining(accessors)).toBe(CHILDREN + 2);
    const res = await limitedVault("POST", "auth/token/revoke-self", parent.client_token);
    expect(res.status, res.text).toBe(204);
    expect(await remaining(accessors)).toBe(0);
  });

  it("revoke", async () => {
    const { parent, accessors } = await family();
    const res = await limitedVault("POST", "auth/token/revoke", env.ROOT_TOKEN, { token: parent.client_token });
    expect(res.status, res.text).toBe(204);
    expect(await remaining(accessors)).toBe(0);
  });

  it("expiry cleanup", async () => {
    const { parent, accessors } = await family();
    await env.DB.prepare("UPDATE vault_tokens SET expire_at = ? WHERE accessor = ?")
      .bind(Date.now() - 1000, parent.accessor)
      .run();
    const res = await limitedVault("GET", "auth/token/lookup-self", parent.client_token);
    expect(res.status, res.text).toBe(403);
    expect(await remaining(accessors)).toBe(0);
  });

  it("a token with more than 100 policies still resolves and is authorised", async () => {
    const names = Array.from({ length: 120 }, (_, i) => `many-${i}`);
    const rules = JSON.stringify({ "auth/token/lookup-self": ["read"] });
    await env.DB.prepare(
      "INSERT INTO vault_policies (name, policy, rules, updated_at) SELECT value, '{}', ?, 0 FROM json_each(?)",
    )
      .bind(rules, JSON.stringify(names))
      .run();
    const token = (await create(env.ROOT_TOKEN, { policies: names })).json.auth.client_token as string;
    const res = await limitedVault("GET", "auth/token/lookup-self", token);
    expect(res.status, res.text).toBe(200);
  });
});
