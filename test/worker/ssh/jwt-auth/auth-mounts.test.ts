import { describe, expect, it } from "vitest";
import { configure, enableJwtMount, login, mintJwt, testKey, writeRole } from "../../../helpers/jwt-auth";
import { tokenWithPolicy, uniqueName, vault } from "../../../helpers/vault";

/** OpenAPI path parameters cannot span segments, so a nested mount path is documented in words only. */
const NESTED = "a nested auth mount path (S24) spans segments, which an OpenAPI path parameter cannot";

describe("sys/auth (S24)", () => {
  it("enables jwt and oidc mounts with accessors, lists them with token/, and reads one", async () => {
    const path = `${uniqueName("team")}/github`;
    const enabled = await vault("POST", `sys/auth/${path}`, {
      body: { type: "oidc", description: "CI" },
      outsideContract: NESTED,
    });
    expect(enabled.status).toBe(204);
    const list = await vault("GET", "sys/auth");
    expect(list.json.data["token/"].type).toBe("token");
    expect(list.json.data[`${path}/`]).toMatchObject({ type: "oidc", description: "CI" });
    expect(list.json.data[`${path}/`].accessor).toMatch(/^auth_oidc_[0-9a-f]{8}$/);
    expect(list.json[`${path}/`]).toEqual(list.json.data[`${path}/`]);
    const one = await vault("GET", `sys/auth/${path}`, { outsideContract: NESTED });
    expect(one.json.data.accessor).toBe(list.json.data[`${path}/`].accessor);
    const { accessor } = await enableJwtMount();
    expect(accessor).toMatch(/^auth_jwt_[0-9a-f]{8}$/);
  });

  it("refuses bad paths, other types, token and paths under or above a mount", async () => {
    const base = uniqueName("m");
    expect((await vault("POST", `sys/auth/${base}/a`, { body: { type: "jwt" }, outsideContract: NESTED })).status).toBe(
      204,
    );
    const cases: [string, unknown, string][] = [
      ["token", { type: "jwt" }, "path is already in use at token/"],
      ["token/x", { type: "jwt" }, "path is already in use at token/"],
      [`${base}/a`, { type: "jwt" }, `path is already in use at ${base}/a/`],
      [`${base}/a/b`, { type: "jwt" }, `path is already in use at ${base}/a/`],
      [base, { type: "jwt" }, `path is already in use at ${base}/a/`],
      [uniqueName("n"), { type: "approle" }, "unsupported auth method type: approle"],
      ["Upper", { type: "jwt" }, expect.stringMatching(/^invalid path "Upper"/) as unknown as string],
      ["x".repeat(65), { type: "jwt" }, expect.stringMatching(/^invalid path/) as unknown as string],
      ["-dash", { type: "jwt" }, expect.stringMatching(/^invalid path/) as unknown as string],
      [`${base}/role`, { type: "jwt" }, expect.stringMatching(/cannot end in "\/role"/) as unknown as string],
    ];
    for (const [path, body, message] of cases) {
      const answer = await vault("POST", `sys/auth/${path}`, { body, outsideContract: NESTED });
      expect(answer.status, path).toBe(400);
      expect(answer.json.errors).toEqual([message]);
    }
  });

  it("needs sudo on sys/auth/<path>; update alone is refused", async () => {
    const path = uniqueName("s");
    const withoutSudo = await tokenWithPolicy({ "sys/auth/*": ["create", "update", "read", "delete"] });
    expect((await vault("POST", `sys/auth/${path}`, { token: withoutSudo, body: { type: "jwt" } })).status).toBe(403);
    const withSudo = await tokenWithPolicy({ "sys/auth/*": ["create", "update", "read", "delete", "sudo"] });
    expect((await vault("POST", `sys/auth/${path}`, { token: withSudo, body: { type: "jwt" } })).status).toBe(204);
    expect((await vault("DELETE", `sys/auth/${path}`, { token: withoutSudo })).status).toBe(403);
    expect((await vault("DELETE", `sys/auth/${path}`, { token: withSudo })).status).toBe(204);
  });

  it("disabling removes config, roles and aliases, revokes the mount's tokens and their children, keeps entities", async () => {
    const key = await testKey("ES256");
    const { path, accessor } = await enableJwtMount();
    await configure(path, { jwt_validation_pubkeys: [key.pem] });
    await writeRole(path, "r", {
      role_type: "jwt",
      bound_subject: "alice",
      user_claim: "sub",
      token_policies: ["kid-maker"],
    });
    await vault("PUT", "sys/policies/acl/kid-maker", {
      body: { policy: JSON.stringify({ path: { "auth/token/create": { capabilities: ["update"] } } }) },
    });
    const answer = await login(path, { role: "r", jwt: await mintJwt(key, { sub: "alice" }) });
    const token = answer.json.auth.client_token as string;
    const entityId = answer.json.auth.entity_id as string;
    const child = await vault("POST", "auth/token/create", { token, body: { policies: ["default"] } });
    expect(child.status).toBe(200);
    const group = await vault("POST", "identity/group", { body: { name: uniqueName("g"), type: "external" } });
    await vault("POST", "identity/group-alias", {
      body: { name: "devs", mount_accessor: accessor, canonical_id: group.json.data.id },
    });

    expect((await vault("DELETE", `sys/auth/${path}`)).status).toBe(204);
    expect((await vault("GET", "auth/token/lookup-self", { token })).status).toBe(403);
    expect((await vault("GET", "auth/token/lookup-self", { token: child.json.auth.client_token })).status).toBe(403);
    expect((await vault("GET", "sys/auth")).json.data[`${path}/`]).toBeUndefined();
    const entity = await vault("GET", `identity/entity/id/${entityId}`);
    expect(entity.status).toBe(200);
    expect(entity.json.data.aliases).toEqual([]);
    expect((await vault("GET", `identity/group/id/${group.json.data.id}`)).json.data.alias).toEqual({});

    // Enabled again: a new accessor, no config, no roles.
    const again = await enableJwtMount(path);
    expect(again.accessor).not.toBe(accessor);
    expect((await vault("GET", `auth/${path}/config`)).status).toBe(404);
    expect((await vault("GET", `auth/${path}/role/r`)).status).toBe(404);
    expect((await login(path, { role: "r", jwt: "x" })).json.errors).toEqual(["could not load configuration"]);
  });

  it("answers 404 under auth/ for a path where nothing is enabled", async () => {
    expect((await vault("POST", `auth/${uniqueName("none")}/login`, { token: null, body: { jwt: "x" } })).status).toBe(
      404,
    );
    expect((await vault("GET", `auth/${uniqueName("none")}/config`)).status).toBe(404);
  });
});

describe("auth/<mount>/role (S25)", () => {
  it("creates with Vault's defaults, merges later writes, lists and deletes", async () => {
    const { path } = await enableJwtMount();
    await writeRole(path, "web", {
      user_claim: "email",
      allowed_redirect_uris: ["http://localhost:8250/oidc/callback"],
    });
    const read = await vault("GET", `auth/${path}/role/web`);
    expect(read.json.data).toMatchObject({
      role_type: "oidc",
      bound_claims_type: "string",
      expiration_leeway: 150,
      not_before_leeway: 150,
      clock_skew_leeway: 60,
      user_claim: "email",
      token_type: "default-service",
      bound_claims: null,
      claim_mappings: null,
    });
    await writeRole(path, "web", { token_policies: "A,b", token_ttl: "1h", clock_skew_leeway: -1 });
    const merged = (await vault("GET", `auth/${path}/role/web`)).json.data;
    expect(merged).toMatchObject({
      user_claim: "email",
      allowed_redirect_uris: ["http://localhost:8250/oidc/callback"],
      token_policies: ["a", "b"],
      token_ttl: 3600,
      clock_skew_leeway: -1,
    });
    await writeRole(path, "api", { role_type: "jwt", bound_audiences: "x", user_claim: "sub" });
    expect((await vault("GET", `auth/${path}/role?list=true`)).json.data.keys).toEqual(["api", "web"]);
    expect((await vault("DELETE", `auth/${path}/role/api`)).status).toBe(204);
    expect((await vault("GET", `auth/${path}/role/api`)).status).toBe(404);
    expect((await vault("GET", `auth/${path}/role/WEB`)).status).toBe(400);
  });

  it("warns for verbose_oidc_logging and unknown fields", async () => {
    const { path } = await enableJwtMount();
    const answer = await vault("POST", `auth/${path}/role/r`, {
      body: { role_type: "jwt", bound_subject: "s", user_claim: "sub", verbose_oidc_logging: true, colour: "red" },
    });
    expect(answer.status).toBe(200);
    expect(answer.json.warnings).toEqual([
      "verbose_oidc_logging has been enabled for this role. This is not recommended in production since sensitive information may be present in OIDC responses.",
      "Endpoint ignored these unrecognized parameters: [colour]",
    ]);
  });

  const cases: [string, Record<string, unknown>, string][] = [
    ["a bad role type", { role_type: "saml", user_claim: "sub" }, "invalid 'role_type': saml"],
    ["no user claim", { role_type: "jwt", bound_subject: "s" }, "a user claim must be defined on the role"],
    [
      "an oidc role without redirect URIs",
      { user_claim: "sub" },
      "'allowed_redirect_uris' must be set if 'role_type' is 'oidc' or unspecified.",
    ],
    [
      "a jwt role without a bound constraint",
      { role_type: "jwt", user_claim: "sub" },
      "must have at least one bound constraint when creating/updating a role",
    ],
    [
      "a bad bound_claims_type",
      { role_type: "jwt", user_claim: "sub", bound_claims_type: "regex" },
      "invalid 'bound_claims_type': regex",
    ],
    [
      "a non-string glob",
      { role_type: "jwt", user_claim: "sub", bound_claims_type: "glob", bound_claims: { n: 5 } },
      "claim is not a string: 5",
    ],
    [
      "a reserved mapping target",
      { role_type: "jwt", user_claim: "sub", bound_subject: "s", claim_mappings: { x: "role" } },
      'metadata key "role" is reserved and may not be a mapping destination',
    ],
    [
      "two claims mapped to one key",
      { role_type: "jwt", user_claim: "sub", bound_subject: "s", claim_mappings: { a: "k", b: "k" } },
      'multiple keys are mapped to metadata key "k"',
    ],
    [
      "ttl above max_ttl",
      { role_type: "jwt", user_claim: "sub", bound_subject: "s", token_ttl: "2h", token_max_ttl: "1h" },
      "ttl should not be greater than max ttl",
    ],
    [
      "batch tokens",
      { role_type: "jwt", user_claim: "sub", bound_subject: "s", token_type: "batch" },
      "'token_type' \"batch\" is not supported: Keyway issues service tokens only",
    ],
    [
      "a bad CIDR",
      { role_type: "jwt", user_claim: "sub", token_bound_cidrs: ["10.0.0.0/33"] },
      "invalid CIDR address or IP: 10.0.0.0/33",
    ],
    [
      "both policies and token_policies",
      { role_type: "jwt", user_claim: "sub", bound_subject: "s", policies: "a", token_policies: "b" },
      'Cannot specify both "token_policies" and "policies"',
    ],
  ];
  for (const [name, body, message] of cases) {
    it(`refuses ${name} with Vault's text and changes nothing`, async () => {
      const { path } = await enableJwtMount();
      const answer = await vault("POST", `auth/${path}/role/r`, { body });
      expect(answer.status).toBe(400);
      expect(answer.json.errors).toEqual([message]);
      expect((await vault("GET", `auth/${path}/role/r`)).status).toBe(404);
    });
  }

  it("issues tokens with the role's TTLs, use count and no default policy", async () => {
    const key = await testKey("EdDSA");
    const { path } = await enableJwtMount();
    await configure(path, { jwt_validation_pubkeys: [key.pem], default_role: "r" });
    await writeRole(path, "r", {
      role_type: "jwt",
      bound_subject: "alice",
      user_claim: "sub",
      token_ttl: "10m",
      token_explicit_max_ttl: "5m",
      token_num_uses: 2,
      token_no_default_policy: true,
      token_policies: ["ops"],
    });
    const answer = await login(path, { jwt: await mintJwt(key, { sub: "alice" }) });
    expect(answer.status).toBe(200);
    expect(answer.json.auth).toMatchObject({ policies: ["ops"], lease_duration: 300, num_uses: 2 });
  });
});
