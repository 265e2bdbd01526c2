import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ROOT, tokenWithPolicy, uniqueName, vault } from "../../../helpers/vault";

describe("token headers (S5)", () => {
  it.each([
    ["X-Secrets-Token", (t: string) => ({ "X-Secrets-Token": t })],
    ["X-Vault-Token", (t: string) => ({ "X-Vault-Token": t })],
    ["Authorization: Bearer", (t: string) => ({ Authorization: `Bearer ${t}` })],
  ])("accepts %s", async (_name, header) => {
    const res = await vault("GET", "auth/token/lookup-self", { token: null, headers: header(ROOT) });
    expect(res.status).toBe(200);
    expect(res.json.data.display_name).toBe("root");
    expect(res.json.data.policies).toEqual(["root"]);
  });

  it("is root only for the exact root token: near misses are refused, also after the root hash is kept", async () => {
    expect((await vault("GET", "auth/token/lookup-self", { token: ROOT })).json.data.display_name).toBe("root");
    for (const near of [`${ROOT}x`, ROOT.slice(0, -1), ROOT.toUpperCase(), `x${ROOT.slice(1)}`]) {
      const res = await vault("GET", "auth/token/lookup-self", { token: near });
      expect(res.status, JSON.stringify(near)).toBe(403);
    }
    expect((await vault("GET", "auth/token/lookup-self", { token: ROOT })).status).toBe(200);
  });

  it("refuses a wrong token with 403 permission denied", async () => {
    const res = await vault("GET", "auth/token/lookup-self", { token: "hvs.not-a-token" });
    expect(res.status).toBe(403);
    expect(res.json).toEqual({ errors: ["permission denied"] });
  });
});

describe("auth/token/create (S5a)", () => {
  it("creates a service token with default policy and Vault's display name", async () => {
    const res = await vault("POST", "auth/token/create", {
      body: { display_name: "alice@example.com", meta: { team: "ops" } },
    });
    expect(res.status).toBe(200);
    expect(res.json.data).toBeNull();
    const auth = res.json.auth;
    expect(auth.client_token).toMatch(/^hvs\./);
    expect(auth.policies).toEqual(["root"]);
    const self = await vault("GET", "auth/token/lookup-self", { token: auth.client_token });
    expect(self.json.data.display_name).toBe("token-alice-example-com");
    expect(self.json.data.meta).toEqual({ team: "ops" });
    expect(self.json.data.ttl).toBeGreaterThan(768 * 3600 - 10);
  });

  it("adds default unless no_default_policy", async () => {
    const name = uniqueName("pol");
    await vault("PUT", `sys/policies/acl/${name}`, { body: { policy: '{"path":{"x/*":{"capabilities":["read"]}}}' } });
    const withDefault = await vault("POST", "auth/token/create", { body: { policies: name } });
    expect(withDefault.json.auth.policies).toEqual(["default", name].sort());
    const without = await vault("POST", "auth/token/create", { body: { policies: [name], no_default_policy: true } });
    expect(without.json.auth.policies).toEqual([name]);
  });

  it("caps a TTL above 768h with a warning", async () => {
    const res = await vault("POST", "auth/token/create", { body: { ttl: "1000h", policies: ["default"] } });
    expect(res.status).toBe(200);
    expect(res.json.auth.lease_duration).toBe(768 * 3600);
    expect(res.json.warnings[0]).toMatch(/exceeded the effective max_ttl of "768h0m0s"/);
  });

  it("does not let a child gain a policy its parent lacks", async () => {
    const a = uniqueName("pa");
    const b = uniqueName("pb");
    for (const n of [a, b]) {
      await vault("PUT", `sys/policies/acl/${n}`, {
        body: { policy: '{"path":{"auth/token/create":{"capabilities":["update"]}}}' },
      });
    }
    const parent = (await vault("POST", "auth/token/create", { body: { policies: [a] } })).json.auth.client_token;
    const escalate = await vault("POST", "auth/token/create", { token: parent, body: { policies: [a, b] } });
    expect(escalate.status).toBe(400);
    expect(escalate.json.errors[0]).toMatch(/child policies must be subset of parent/);
    const rootAttempt = await vault("POST", "auth/token/create", { token: parent, body: { policies: ["root"] } });
    expect(rootAttempt.status).toBe(400);
    const ok = await vault("POST", "auth/token/create", { token: parent, body: { policies: [a] } });
    expect(ok.status).toBe(200);
    expect(ok.json.auth.policies).toEqual(["default", a].sort());
    expect(ok.json.auth.orphan).toBe(false);
  });

  it("rejects bad input and creates nothing", async () => {
    const before = await env.DB.prepare("SELECT count(*) AS n FROM vault_tokens").first<{ n: number }>();
    const cases: [unknown, RegExp][] = [
      [{ ttl: "soon" }, /Field validation failed: error converting input soon for field "ttl"/],
      [{ ttl: -5 }, /cannot provide negative value '-5'/],
      [{ num_uses: "many" }, /error converting input many for field "num_uses"/],
      [{ num_uses: -1 }, /number of uses cannot be negative/],
      [{ meta: "x" }, /field "meta"/],
      [{ entity_id: "no-such-entity" }, /entity "no-such-entity" does not exist/],
      [{ no_default_policy: "maybe" }, /strconv.ParseBool/],
    ];
    for (const [body, message] of cases) {
      const res = await vault("POST", "auth/token/create", { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.errors[0]).toMatch(message);
    }
    const malformed = await vault("POST", "auth/token/create", {
      rawBody: "{not json",
      headers: { "Content-Type": "application/json" },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.json.errors[0]).toMatch(/failed to parse JSON input/);
    const array = await vault("POST", "auth/token/create", { body: [1, 2] });
    expect(array.status).toBe(400);
    const after = await env.DB.prepare("SELECT count(*) AS n FROM vault_tokens").first<{ n: number }>();
    expect(after?.n).toBe(before?.n);
  });

  it("answers an unknown parameter with a warning", async () => {
    const res = await vault("POST", "auth/token/create", { body: { policies: ["default"], colour: "blue", size: 1 } });
    expect(res.status).toBe(200);
    expect(res.json.warnings).toContain("Endpoint ignored these unrecognized parameters: [colour size]");
  });

  it("refuses bodies over 1 MiB with 413 in Vault's format (B5) and stores nothing", async () => {
    const before = await env.DB.prepare("SELECT count(*) AS n FROM vault_tokens").first<{ n: number }>();
    const res = await vault("POST", "auth/token/create", { body: { display_name: "x".repeat(1024 * 1024) } });
    expect(res.status).toBe(413);
    expect(res.json.errors[0]).toMatch(/larger than the limit of 1048576 bytes/);
    const after = await env.DB.prepare("SELECT count(*) AS n FROM vault_tokens").first<{ n: number }>();
    expect(after?.n).toBe(before?.n);
  });
});

describe("token storage (B2)", () => {
  it("never stores a token in plaintext", async () => {
    const token = (await vault("POST", "auth/token/create", { body: { policies: ["default"] } })).json.auth
      .client_token as string;
    const rows = await env.DB.prepare("SELECT * FROM vault_tokens").all();
    const dump = JSON.stringify(rows.results);
    expect(dump).not.toContain(token);
    expect(dump).not.toContain(token.slice(4));
    expect(rows.results.every((r) => /^[0-9a-f]{64}$/.test(String(r.id)))).toBe(true);
  });
});

describe("token lifetime", () => {
  it("expires a token after its TTL", async () => {
    const token = (await vault("POST", "auth/token/create", { body: { ttl: "1s", policies: ["default"] } })).json.auth
      .client_token;
    expect((await vault("GET", "auth/token/lookup-self", { token })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await vault("GET", "auth/token/lookup-self", { token })).status).toBe(403);
  });

  it("revokes a token and its children, idempotently", async () => {
    const parent = (await vault("POST", "auth/token/create", { body: { policies: [] } })).json.auth.client_token;
    const child = (await vault("POST", "auth/token/create", { token: parent, body: {} })).json.auth.client_token;
    expect((await vault("GET", "auth/token/lookup-self", { token: child })).status).toBe(200);
    expect((await vault("POST", "auth/token/revoke", { body: { token: parent } })).status).toBe(204);
    expect((await vault("GET", "auth/token/lookup-self", { token: parent })).status).toBe(403);
    expect((await vault("GET", "auth/token/lookup-self", { token: child })).status).toBe(403);
    expect((await vault("POST", "auth/token/revoke", { body: { token: parent } })).status).toBe(204);
  });

  it("revoke-self ends the caller's token", async () => {
    const token = (await vault("POST", "auth/token/create", { body: { policies: ["default"] } })).json.auth
      .client_token;
    expect((await vault("POST", "auth/token/revoke-self", { token })).status).toBe(204);
    expect((await vault("GET", "auth/token/lookup-self", { token })).status).toBe(403);
  });

  it("spends num_uses and then refuses the token", async () => {
    const token = (await vault("POST", "auth/token/create", { body: { num_uses: 2, policies: ["default"] } })).json.auth
      .client_token;
    const first = await vault("GET", "auth/token/lookup-self", { token });
    expect(first.status).toBe(200);
    expect(first.json.data.num_uses).toBe(1);
    expect((await vault("GET", "auth/token/lookup-self", { token })).status).toBe(200);
    expect((await vault("GET", "auth/token/lookup-self", { token })).status).toBe(403);
  });

  it("spends the last use exactly once under concurrency", async () => {
    const token = (await vault("POST", "auth/token/create", { body: { num_uses: 1, policies: ["default"] } })).json.auth
      .client_token;
    const results = await Promise.all(
      Array.from({ length: 10 }, () => vault("GET", "auth/token/lookup-self", { token })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
  });

  it("renews a token within its maximum", async () => {
    const token = (
      await vault("POST", "auth/token/create", { body: { ttl: "1h", explicit_max_ttl: "2h", policies: ["default"] } })
    ).json.auth.client_token;
    const renewed = await vault("POST", "auth/token/renew-self", { token, body: { increment: "10h" } });
    expect(renewed.status).toBe(200);
    expect(renewed.json.auth.lease_duration).toBeLessThanOrEqual(7200);
    expect(renewed.json.auth.lease_duration).toBeGreaterThan(7000);
  });

  it("looks up another token", async () => {
    const token = (await vault("POST", "auth/token/create", { body: { display_name: "bob", policies: ["default"] } }))
      .json.auth.client_token;
    const res = await vault("POST", "auth/token/lookup", { body: { token } });
    expect(res.json.data.display_name).toBe("token-bob");
    expect((await vault("POST", "auth/token/lookup", { body: { token: "nope" } })).status).toBe(400);
  });
});

describe("a token without a matching policy", () => {
  it("gets 403 on paths its policies do not grant", async () => {
    const token = await tokenWithPolicy({ "ssh/roles/*": ["read"] });
    expect((await vault("GET", "sys/policies/acl/default", { token })).status).toBe(403);
    expect((await vault("POST", "ssh/roles/x", { token, body: {} })).status).toBe(403);
    // read is granted: the request passes the ACL and reaches routing
    expect((await vault("GET", "ssh/roles/absent-role", { token })).status).not.toBe(403);
  });
});
