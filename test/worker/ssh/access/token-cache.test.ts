/**
 * The /v1 caller's token and compiled policies are served from a
 * per-isolate cache (src/ssh/access/token-cache.ts). Contract: a write in this isolate
 * (revocation, policy write, entity change, role delete) applies at the next request; a
 * write made elsewhere — played here by writing D1 directly, as another isolate would —
 * applies once the entry's second is over; expiry is checked on every request; uses of a
 * `num_uses` token are counted in D1, never from the cache.
 *
 * The clock is frozen (only `Date`), so a primed entry cannot lapse by itself between two
 * requests whatever the machine's load: a stale answer right after a direct D1 write
 * proves the cache was serving, and moving the clock by TOKEN_CONTEXT_TTL_MS plays the
 * second after which every isolate must see the write.
 */
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { TOKEN_CONTEXT_TTL_MS, tokenContextCache } from "../../../../src/ssh/access/token-cache";
import { hashToken } from "../../../../src/ssh/access/tokens";
import { tokenWithPolicy, uniqueName, vault } from "../../../helpers/vault";
import { CA_KEYS, SUBJECT_KEYS } from "../ca-fixtures";

const MOUNT = "ssh";

beforeAll(async () => {
  const pair = CA_KEYS.ed25519;
  const res = await vault("POST", `${MOUNT}/config/ca`, {
    body: { private_key: pair.privateKey, public_key: pair.publicKey },
  });
  if (res.status !== 204) throw new Error(`CA import failed: ${res.status} ${res.text}`);
});

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(Date.now());
});

afterEach(() => {
  vi.useRealTimers();
});

/** Play the second after which another isolate's write must be seen everywhere. */
function afterTheSecond(): void {
  vi.setSystemTime(Date.now() + TOKEN_CONTEXT_TTL_MS);
}

/** A token whose only grant is reading its own policy; returns the token and the policy name. */
async function policyToken(extra: Record<string, unknown> = {}): Promise<{ token: string; policy: string }> {
  const token = await tokenWithPolicy({ "sys/policies/acl/*": ["read"] }, extra);
  const self = await vault("GET", "auth/token/lookup-self", { token });
  const policy = (self.json.data.policies as string[]).find((p) => p !== "default") as string;
  return { token, policy };
}

function readPolicy(token: string, policy: string) {
  return vault("GET", `sys/policies/acl/${policy}`, { token });
}

async function accessorOf(token: string): Promise<string> {
  return (await vault("POST", "auth/token/lookup", { body: { token } })).json.data.accessor as string;
}

const READ_NOTHING = JSON.stringify({ path: { "nothing/*": { capabilities: ["read"] } } });

describe("a revoked token", () => {
  it("is refused at the next request of the isolate that revoked it", async () => {
    const { token, policy } = await policyToken();
    expect((await readPolicy(token, policy)).status).toBe(200);
    expect((await vault("POST", "auth/token/revoke", { body: { token } })).status).toBe(204);
    expect((await readPolicy(token, policy)).status).toBe(403);
  });

  it("a child is refused at once when its parent revokes itself (revocation of the tree)", async () => {
    const parent = await tokenWithPolicy({ "auth/token/create": ["update"] });
    const child = (await vault("POST", "auth/token/create", { token: parent, body: {} })).json.auth
      .client_token as string;
    expect((await vault("GET", "auth/token/lookup-self", { token: child })).status).toBe(200);
    expect((await vault("POST", "auth/token/revoke-self", { token: parent })).status).toBe(204);
    expect((await vault("GET", "auth/token/lookup-self", { token: child })).status).toBe(403);
    expect((await vault("GET", "auth/token/lookup-self", { token: parent })).status).toBe(403);
  });

  it("revoked by another isolate, is refused once the second is over", async () => {
    const { token, policy } = await policyToken();
    expect((await readPolicy(token, policy)).status).toBe(200);
    await env.DB.prepare("DELETE FROM vault_tokens WHERE accessor = ?")
      .bind(await accessorOf(token))
      .run();
    // Served from this isolate's cache within the second (the write was not made here)…
    expect((await readPolicy(token, policy)).status).toBe(200);
    afterTheSecond();
    // …and never after it.
    expect((await readPolicy(token, policy)).status).toBe(403);
  });

  it("expiry is checked on every request against the cached expire time", async () => {
    const { token, policy } = await policyToken({ ttl: "10s" });
    expect((await readPolicy(token, policy)).status).toBe(200);
    // Past the expiry but within the entry's life if it had been loaded now: still refused.
    vi.setSystemTime(Date.now() + 10_000);
    expect((await readPolicy(token, policy)).status).toBe(403);
  });

  it("a renewal made by another isolate is honoured when the cached expire time has passed", async () => {
    const { token, policy } = await policyToken({ ttl: "10s" });
    expect((await readPolicy(token, policy)).status).toBe(200);
    await env.DB.prepare("UPDATE vault_tokens SET expire_at = ? WHERE accessor = ?")
      .bind(Date.now() + 3_600_000, await accessorOf(token))
      .run();
    vi.setSystemTime(Date.now() + 10_000);
    // The cached expire time has passed, but D1 decides: the token was renewed, not expired.
    expect((await readPolicy(token, policy)).status).toBe(200);
  });
});

describe("a changed policy", () => {
  it("applies at the next request of the isolate that wrote it", async () => {
    const { token, policy } = await policyToken();
    expect((await readPolicy(token, policy)).status).toBe(200);
    expect((await vault("PUT", `sys/policies/acl/${policy}`, { body: { policy: READ_NOTHING } })).status).toBe(204);
    expect((await readPolicy(token, policy)).status).toBe(403);
    const grant = JSON.stringify({ path: { "sys/policies/acl/*": { capabilities: ["read"] } } });
    expect((await vault("PUT", `sys/policies/acl/${policy}`, { body: { policy: grant } })).status).toBe(204);
    expect((await readPolicy(token, policy)).status).toBe(200);
  });

  it("a deleted policy stops granting at the next request", async () => {
    const { token, policy } = await policyToken();
    expect((await readPolicy(token, policy)).status).toBe(200);
    expect((await vault("DELETE", `sys/policies/acl/${policy}`)).status).toBe(204);
    const other = uniqueName("p");
    await vault("PUT", `sys/policies/acl/${other}`, { body: { policy: READ_NOTHING } });
    expect((await vault("GET", `sys/policies/acl/${other}`, { token })).status).toBe(403);
  });

  it("changed by another isolate, applies once the second is over", async () => {
    const { token, policy } = await policyToken();
    expect((await readPolicy(token, policy)).status).toBe(200);
    await env.DB.prepare("UPDATE vault_policies SET rules = ? WHERE name = ?")
      .bind(JSON.stringify({ "nothing/*": ["read"] }), policy)
      .run();
    expect((await readPolicy(token, policy)).status).toBe(200);
    afterTheSecond();
    expect((await readPolicy(token, policy)).status).toBe(403);
  });
});

describe("an entity change", () => {
  it("applies at once here, and after the second when made elsewhere", async () => {
    const policy = uniqueName("ep");
    const grant = JSON.stringify({ path: { "sys/policies/acl/*": { capabilities: ["read"] } } });
    expect((await vault("PUT", `sys/policies/acl/${policy}`, { body: { policy: grant } })).status).toBe(204);
    const entity = await vault("POST", "identity/entity", { body: { name: uniqueName("ent"), policies: [policy] } });
    const entityId = entity.json.data.id as string;
    const token = (await vault("POST", "auth/token/create", { body: { policies: ["default"], entity_id: entityId } }))
      .json.auth.client_token as string;
    expect((await readPolicy(token, policy)).status).toBe(200);

    // This isolate: disabling the entity drops its policies at the next request.
    expect((await vault("POST", `identity/entity/id/${entityId}`, { body: { disabled: true } })).status).toBe(200);
    expect((await readPolicy(token, policy)).status).toBe(403);
    expect((await vault("POST", `identity/entity/id/${entityId}`, { body: { disabled: false } })).status).toBe(200);
    expect((await readPolicy(token, policy)).status).toBe(200);

    // Another isolate: the entity loses the policy in D1.
    await env.DB.prepare("UPDATE identity_entities SET policies = '[]' WHERE id = ?").bind(entityId).run();
    expect((await readPolicy(token, policy)).status).toBe(200);
    afterTheSecond();
    expect((await readPolicy(token, policy)).status).toBe(403);
  });
});

describe("a deleted role, signed for with a cached policy token", () => {
  it("is unknown at the next sign here, and after the second when deleted elsewhere", async () => {
    const token = await tokenWithPolicy({ [`${MOUNT}/sign/*`]: ["create", "update"] });
    const body = { public_key: SUBJECT_KEYS.ed25519, valid_principals: "a" };
    const roleBody = { key_type: "ca", allow_user_certificates: true, allowed_users: "*" };

    const here = uniqueName("role");
    await vault("POST", `${MOUNT}/roles/${here}`, { body: roleBody });
    expect((await vault("POST", `${MOUNT}/sign/${here}`, { token, body })).status).toBe(200);
    expect((await vault("DELETE", `${MOUNT}/roles/${here}`)).status).toBe(204);
    const gone = await vault("POST", `${MOUNT}/sign/${here}`, { token, body });
    expect(gone.status).toBe(400);
    expect(gone.json.errors).toEqual([`Unknown role: ${here}`]);

    const elsewhere = uniqueName("role");
    await vault("POST", `${MOUNT}/roles/${elsewhere}`, { body: roleBody });
    expect((await vault("POST", `${MOUNT}/sign/${elsewhere}`, { token, body })).status).toBe(200);
    await env.DB.prepare("DELETE FROM ssh_roles WHERE mount = ? AND name = ?").bind(MOUNT, elsewhere).run();
    expect((await vault("POST", `${MOUNT}/sign/${elsewhere}`, { token, body })).status).toBe(200);
    afterTheSecond();
    const later = await vault("POST", `${MOUNT}/sign/${elsewhere}`, { token, body });
    expect(later.status).toBe(400);
    expect(later.json.errors).toEqual([`Unknown role: ${elsewhere}`]);
  });
});

describe("a num_uses token", () => {
  it("is never over-used: uses are counted in D1 even while its context is cached", async () => {
    const { token, policy } = await policyToken({ num_uses: 3 });
    // lookup-self in policyToken spent one use; the cache is primed. Another isolate spends one more.
    await env.DB.prepare("UPDATE vault_tokens SET uses_left = uses_left - 1 WHERE accessor = ?")
      .bind(await accessorOf(token))
      .run();
    expect((await readPolicy(token, policy)).status).toBe(200); // the last use
    expect((await readPolicy(token, policy)).status).toBe(403);
    expect((await readPolicy(token, policy)).status).toBe(403);
  });

  it("concurrent requests on a cached token get exactly its uses", async () => {
    const { token, policy } = await policyToken({ num_uses: 4 });
    expect((await readPolicy(token, policy)).status).toBe(200); // 2 of 4 spent, cache primed
    const answers = await Promise.all(Array.from({ length: 6 }, () => readPolicy(token, policy)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(2);
    expect(answers.filter((a) => a.status === 403)).toHaveLength(4);
  });

  it("lookup-self reports the uses left as D1 counts them", async () => {
    const { token } = await policyToken({ num_uses: 5 });
    await env.DB.prepare("UPDATE vault_tokens SET uses_left = uses_left - 2 WHERE accessor = ?")
      .bind(await accessorOf(token))
      .run();
    // 5 − 1 (first lookup-self) − 2 (elsewhere) − 1 (this one) = 1.
    expect((await vault("GET", "auth/token/lookup-self", { token })).json.data.num_uses).toBe(1);
  });
});

describe("N2b: failed lookups are not cached", () => {
  it("unknown tokens add no entry; a found token adds its own", async () => {
    const { token, policy } = await policyToken();
    tokenContextCache.clear();
    for (let i = 0; i < 5; i++) {
      expect(
        (await vault("GET", "auth/token/lookup-self", { token: `hvs.unknown-${crypto.randomUUID()}` })).status,
      ).toBe(403);
    }
    expect(tokenContextCache.size).toBe(0);
    expect((await readPolicy(token, policy)).status).toBe(200);
    expect(tokenContextCache.peek(await hashToken(env.KEYWAY_HASH_KEY, token))).toBeTruthy();
    expect(tokenContextCache.size).toBe(1);
  });
});

describe("bounded memory", () => {
  it("a token whose policies are large is served from D1 every time, never stored", async () => {
    const paths: Record<string, string[]> = { "sys/policies/acl/*": ["read"] };
    for (let i = 0; i < 600; i++) paths[`padding/${"x".repeat(32)}/${i}`] = ["read"];
    const token = await tokenWithPolicy(paths);
    tokenContextCache.clear();
    expect((await vault("GET", "sys/policies/acl/default", { token })).status).toBe(200);
    expect(tokenContextCache.peek(await hashToken(env.KEYWAY_HASH_KEY, token))).toBeUndefined();
    expect(tokenContextCache.size).toBe(0);
  });
});
