import { describe, expect, it } from "vitest";
import { configure, enableJwtMount, login, mintJwt, type TestKey, testKey, writeRole } from "../../../helpers/jwt-auth";
import { importSignCas, role, sign } from "../../../helpers/ssh-sign";
import { uniqueName, vault } from "../../../helpers/vault";
import { SUBJECT_KEYS } from "../ca-fixtures";

describe("JWT login with static keys (S25)", () => {
  for (const alg of ["RS256", "ES256", "EdDSA"] as const) {
    it(`logs in with a ${alg} token and answers Vault's auth block`, async () => {
      const key = await testKey(alg);
      const { path, accessor } = await enableJwtMount();
      await configure(path, { jwt_validation_pubkeys: [key.pem] });
      await writeRole(path, "ci", {
        role_type: "jwt",
        bound_audiences: ["keyway"],
        user_claim: "sub",
        claim_mappings: { repository: "repo" },
        token_policies: ["deploy"],
        token_ttl: "5m",
      });
      const jwt = await mintJwt(key, {
        sub: "repo:acme/web:ref:refs/heads/main",
        aud: "keyway",
        repository: "acme/web",
      });
      const answer = await login(path, { role: "ci", jwt });
      expect(answer.status).toBe(200);
      const auth = answer.json.auth;
      expect(auth).toMatchObject({
        policies: ["default", "deploy"],
        token_policies: ["default", "deploy"],
        metadata: { role: "ci", repo: "acme/web" },
        lease_duration: 300,
        renewable: true,
        token_type: "service",
        orphan: true,
      });
      expect(auth.client_token).toMatch(/^hvs\./);
      const self = await vault("GET", "auth/token/lookup-self", { token: auth.client_token });
      expect(self.status).toBe(200);
      expect(self.json.data.display_name).toBe(`${path}-repo:acme/web:ref:refs/heads/main`);
      expect(self.json.data.path).toBe(`auth/${path}/login`);
      const entity = await vault("GET", `identity/entity/id/${auth.entity_id}`);
      expect(entity.json.data.aliases[0]).toMatchObject({
        name: "repo:acme/web:ref:refs/heads/main",
        mount_accessor: accessor,
        metadata: { repo: "acme/web", role: "ci" },
      });
    });
  }

  it("keeps one entity per alias across logins", async () => {
    const key = await testKey("ES256");
    const { path } = await enableJwtMount();
    await configure(path, { jwt_validation_pubkeys: [key.pem] });
    await writeRole(path, "r", { role_type: "jwt", bound_subject: "alice", user_claim: "sub" });
    const first = await login(path, { role: "r", jwt: await mintJwt(key, { sub: "alice" }) });
    const second = await login(path, { role: "R", jwt: await mintJwt(key, { sub: "alice" }) });
    expect(first.status).toBe(200);
    expect(second.json.auth.entity_id).toBe(first.json.auth.entity_id);
  });

  it("rewrites the alias's metadata only when the claim mappings' values change", async () => {
    const key = await testKey("ES256");
    const { path } = await enableJwtMount();
    await configure(path, { jwt_validation_pubkeys: [key.pem] });
    await writeRole(path, "r", {
      role_type: "jwt",
      bound_subject: "alice",
      user_claim: "sub",
      claim_mappings: { team: "team" },
    });
    const first = await login(path, { role: "r", jwt: await mintJwt(key, { sub: "alice", team: "ops" }) });
    const entityId = first.json.auth.entity_id as string;
    const again = await login(path, { role: "r", jwt: await mintJwt(key, { sub: "alice", team: "ops" }) });
    expect(again.json.auth.entity_id).toBe(entityId);
    const moved = await login(path, { role: "r", jwt: await mintJwt(key, { sub: "alice", team: "dev" }) });
    expect(moved.json.auth.entity_id).toBe(entityId);
    expect(moved.json.auth.metadata).toEqual({ role: "r", team: "dev" });
    const entity = await vault("GET", `identity/entity/id/${entityId}`);
    expect(entity.json.data.aliases).toHaveLength(1);
    expect(entity.json.data.aliases[0].metadata).toEqual({ role: "r", team: "dev" });
  });

  it("logs in to an entity whose alias was made ahead of the first login, with its policies", async () => {
    const key = await testKey("ES256");
    const { path, accessor } = await enableJwtMount();
    await configure(path, { jwt_validation_pubkeys: [key.pem] });
    await writeRole(path, "r", { role_type: "jwt", bound_subject: "carol", user_claim: "sub" });
    const entity = await vault("POST", "identity/entity", { body: { policies: ["ops"] } });
    const alias = await vault("POST", "identity/entity-alias", {
      body: { name: "carol", mount_accessor: accessor, canonical_id: entity.json.data.id },
    });
    expect(alias.status).toBe(200);
    const answer = await login(path, { role: "r", jwt: await mintJwt(key, { sub: "carol" }) });
    expect(answer.json.auth.entity_id).toBe(entity.json.data.id);
    expect(answer.json.auth.identity_policies).toEqual(["ops"]);
  });

  it("a repeated login answers its entity's policies as they are after each write", async () => {
    const key = await testKey("ES256");
    const { path, accessor } = await enableJwtMount();
    await configure(path, { jwt_validation_pubkeys: [key.pem] });
    await writeRole(path, "r", { role_type: "jwt", bound_subject: "dana", user_claim: "sub" });
    const entity = await vault("POST", "identity/entity", { body: { policies: ["ops"] } });
    const entityId = entity.json.data.id as string;
    await vault("POST", "identity/entity-alias", {
      body: { name: "dana", mount_accessor: accessor, canonical_id: entityId },
    });
    const jwt = await mintJwt(key, { sub: "dana" });
    for (let i = 0; i < 2; i++) {
      const answer = await login(path, { role: "r", jwt });
      expect(answer.json.auth.identity_policies).toEqual(["ops"]);
      expect(answer.json.auth.policies).toEqual(["default", "ops"]);
    }
    await vault("POST", `identity/entity/id/${entityId}`, { body: { policies: ["audit", "ops"] } });
    const changed = await login(path, { role: "r", jwt });
    expect(changed.json.auth.identity_policies).toEqual(["audit", "ops"]);
    const group = await vault("POST", "identity/group", {
      body: { policies: ["team"], member_entity_ids: [entityId] },
    });
    expect(group.status).toBe(200);
    const grouped = await login(path, { role: "r", jwt });
    expect(grouped.json.auth.identity_policies).toEqual(["audit", "ops", "team"]);
    // The entity goes with its alias: the next login makes a new entity without policies.
    expect((await vault("DELETE", `identity/entity/id/${entityId}`)).status).toBe(204);
    const fresh = await login(path, { role: "r", jwt });
    expect(fresh.status).toBe(200);
    expect(fresh.json.auth.entity_id).not.toBe(entityId);
    expect(fresh.json.auth.identity_policies).toBeUndefined();
    expect(fresh.json.auth.policies).toEqual(["default"]);
  });

  it("a login token renews with its role's current TTLs, and not once the role is deleted (Vault's pathLoginRenew)", async () => {
    const key = await testKey("ES256");
    const { path } = await enableJwtMount();
    await configure(path, { jwt_validation_pubkeys: [key.pem] });
    await writeRole(path, "r", { role_type: "jwt", bound_subject: "erin", user_claim: "sub", token_ttl: "5m" });
    const jwt = await mintJwt(key, { sub: "erin" });
    const first = (await login(path, { role: "r", jwt })).json.auth.client_token as string;
    const second = (await login(path, { role: "r", jwt })).json.auth.client_token as string;
    const renewed = await vault("POST", "auth/token/renew-self", { token: first, body: { increment: "10m" } });
    expect(renewed.status).toBe(200);
    expect(renewed.json.auth.metadata.role).toBe("r");
    expect(renewed.json.auth.lease_duration).toBeGreaterThan(590);
    // Renewals follow the role's current TTLs: a lower token_max_ttl caps the next one.
    await writeRole(path, "r", { token_ttl: "1m", token_max_ttl: "2m" });
    const capped = await vault("POST", "auth/token/renew-self", { token: first, body: { increment: "1h" } });
    expect(capped.status).toBe(200);
    expect(capped.json.auth.lease_duration).toBeLessThanOrEqual(120);
    expect(capped.json.auth.lease_duration).toBeGreaterThan(100);
    expect((await vault("DELETE", `auth/${path}/role/r`)).status).toBe(204);
    const self = await vault("POST", "auth/token/renew-self", { token: first });
    expect(self.status).toBe(400);
    expect(self.json.errors).toEqual(["failed to renew entry: role r does not exist during renewal"]);
    const other = await vault("POST", "auth/token/renew", { body: { token: second } });
    expect(other.status).toBe(400);
    expect(other.json.errors).toEqual(["failed to renew entry: role r does not exist during renewal"]);
    // Still a valid token until it expires: only renewal is refused.
    expect((await vault("GET", "auth/token/lookup-self", { token: first })).status).toBe(200);
    // A token-store token renews as before.
    const plain = await vault("POST", "auth/token/create", { body: { ttl: "5m" } });
    expect((await vault("POST", "auth/token/renew-self", { token: plain.json.auth.client_token })).status).toBe(200);
  });

  it("a token used right after its login acts with its policies as they are now", async () => {
    await importSignCas();
    const key = await testKey("ES256");
    const { path } = await enableJwtMount();
    await configure(path, { jwt_validation_pubkeys: [key.pem] });
    const signRole = await role({
      key_type: "ca",
      allow_user_certificates: true,
      allowed_users: "*",
      default_user: "ops",
    });
    const writer = uniqueName("pol");
    const grant = (paths: Record<string, { capabilities: string[] }>) =>
      vault("PUT", `sys/policies/acl/${writer}`, { body: { policy: JSON.stringify({ path: paths }) } });
    expect((await grant({ [`ssh/sign/${signRole}`]: { capabilities: ["create", "update"] } })).status).toBe(204);
    await writeRole(path, "r", { role_type: "jwt", bound_subject: "fay", user_claim: "sub", token_policies: [writer] });
    const jwt = await mintJwt(key, { sub: "fay" });
    const freshToken = async () => (await login(path, { role: "r", jwt })).json.auth.client_token as string;
    const signWith = async (token: string) =>
      (await sign(signRole, { public_key: SUBJECT_KEYS.ed25519, valid_principals: "ops" }, "ssh", token)).status;
    // The first use compiles the policy set's ACL; the next logins' tokens start with it.
    for (let i = 0; i < 3; i++) expect(await signWith(await freshToken())).toBe(200);
    expect((await grant({ "sys/health": { capabilities: ["read"] } })).status).toBe(204);
    // Two logins before any use: the second one's token enters the caller cache at login.
    const first = await freshToken();
    const second = await freshToken();
    expect(await signWith(second)).toBe(403);
    expect(await signWith(first)).toBe(403);
  });

  it("a new config's keys replace the old ones at once", async () => {
    const before = await testKey("ES256");
    const after = await testKey("ES256");
    const { path } = await enableJwtMount();
    await configure(path, { jwt_validation_pubkeys: [before.pem] });
    await writeRole(path, "r", { role_type: "jwt", bound_subject: "alice", user_claim: "sub" });
    expect((await login(path, { role: "r", jwt: await mintJwt(before, { sub: "alice" }) })).status).toBe(200);
    await configure(path, { jwt_validation_pubkeys: [after.pem] });
    expect((await login(path, { role: "r", jwt: await mintJwt(before, { sub: "alice" }) })).status).toBe(400);
    expect((await login(path, { role: "r", jwt: await mintJwt(after, { sub: "alice" }) })).status).toBe(200);
  });

  it("refuses a token signed by another key", async () => {
    const key = await testKey("RS256");
    const other: TestKey = await testKey("RS256");
    const { path } = await enableJwtMount();
    await configure(path, { jwt_validation_pubkeys: [key.pem] });
    await writeRole(path, "r", { role_type: "jwt", bound_subject: "alice", user_claim: "sub" });
    const answer = await login(path, { role: "r", jwt: await mintJwt(other, { sub: "alice" }) });
    expect(answer.status).toBe(400);
    expect(answer.json.errors).toEqual([
      "error validating token: error verifying token signature: no known key successfully validated the token signature",
    ]);
  });
});
