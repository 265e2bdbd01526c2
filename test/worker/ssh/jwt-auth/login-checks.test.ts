import { beforeAll, describe, expect, it } from "vitest";
import { configure, enableJwtMount, login, mintJwt, type TestKey, testKey, writeRole } from "../../../helpers/jwt-auth";
import { vault } from "../../../helpers/vault";

let key: TestKey;
let path: string;

const now = () => Math.floor(Date.now() / 1000);

beforeAll(async () => {
  key = await testKey("ES256");
  ({ path } = await enableJwtMount());
  await configure(path, { jwt_validation_pubkeys: [key.pem], bound_issuer: "https://issuer.example" });
  await writeRole(path, "plain", { role_type: "jwt", bound_subject: "alice", user_claim: "sub" });
  await writeRole(path, "aud", { role_type: "jwt", bound_audiences: ["a1", "a2"], user_claim: "sub" });
  await writeRole(path, "browser", {
    user_claim: "sub",
    allowed_redirect_uris: ["http://localhost:8250/oidc/callback"],
  });
  await writeRole(path, "glob", {
    role_type: "jwt",
    bound_claims_type: "glob",
    bound_claims: { job_workflow_ref: "acme/deploy/.github/workflows/*.yml@refs/heads/main", repository: ["acme/*"] },
    user_claim: "repository",
  });
  await writeRole(path, "exact", {
    role_type: "jwt",
    bound_claims: { repository: ["acme/web", "acme/api"], run_attempt: 1, admin: true },
    user_claim: "/nested/login",
    user_claim_json_pointer: true,
    claim_mappings: { "/nested/team": "team", run_attempt: "attempt" },
  });
  await writeRole(path, "tight", {
    role_type: "jwt",
    bound_subject: "alice",
    user_claim: "sub",
    clock_skew_leeway: -1,
    expiration_leeway: -1,
    not_before_leeway: -1,
  });
  await writeRole(path, "cidr", {
    role_type: "jwt",
    token_bound_cidrs: ["10.0.0.0/8", "192.0.2.7"],
    user_claim: "sub",
  });
  await writeRole(path, "groups", {
    role_type: "jwt",
    bound_subject: "alice",
    user_claim: "sub",
    groups_claim: "groups",
  });
});

const base = { iss: "https://issuer.example", sub: "alice" };

async function refused(body: Record<string, unknown>, message: string, status = 400, headers = {}) {
  const answer = await login(path, body, headers);
  expect(answer.status).toBe(status);
  expect(answer.json.errors).toEqual([message]);
}

describe("login's checks, in Vault's order and with its texts (S25)", () => {
  it("role, role type, token", async () => {
    await refused({ jwt: "x" }, "missing role");
    await refused({ role: "nope", jwt: "x" }, 'role "nope" could not be found');
    await refused({ role: "browser", jwt: "x" }, "role with oidc role_type is not allowed");
    await refused({ role: "plain" }, "missing token");
  });

  it("a JWT over 16 KiB before any key is looked at", async () => {
    await refused({ role: "plain", jwt: `${"a".repeat(16 * 1024)}.b.c` }, "error validating token: token too large");
  });

  it("malformed and foreign tokens", async () => {
    await refused(
      { role: "plain", jwt: "not-a-jwt" },
      "error validating token: error verifying token signature: compact JWS format must have three parts",
    );
    const other = await testKey("ES256");
    await refused(
      { role: "plain", jwt: await mintJwt(other, base) },
      "error validating token: error verifying token signature: no known key successfully validated the token signature",
    );
  });

  it("issuer, subject, audiences", async () => {
    await refused(
      { role: "plain", jwt: await mintJwt(key, { ...base, iss: "https://evil.example" }) },
      "error validating token: invalid issuer (iss) claim",
    );
    await refused(
      { role: "plain", jwt: await mintJwt(key, { ...base, sub: "bob" }) },
      "error validating token: invalid subject (sub) claim",
    );
    await refused(
      { role: "aud", jwt: await mintJwt(key, { ...base, aud: ["a3"] }) },
      "error validating token: invalid audience (aud) claim: audience claim does not match any expected audience",
    );
    expect((await login(path, { role: "aud", jwt: await mintJwt(key, { ...base, aud: ["a3", "a2"] }) })).status).toBe(
      200,
    );
    expect((await login(path, { role: "aud", jwt: await mintJwt(key, { ...base, aud: "a1" }) })).status).toBe(200);
    await refused(
      { role: "plain", jwt: await mintJwt(key, { ...base, aud: "anything" }) },
      "audience claim found in JWT but no audiences bound to the role",
    );
  });

  it("time claims with the default leeways (clock skew 60 s; exp leeway only without exp)", async () => {
    const t = now();
    expect(
      (await login(path, { role: "plain", jwt: await mintJwt(key, { ...base, iat: t - 600, exp: t - 50 }) })).status,
    ).toBe(200);
    await refused(
      { role: "plain", jwt: await mintJwt(key, { ...base, iat: t - 600, exp: t - 70 }) },
      "error validating token: invalid expiration time (exp) claim: token is expired",
    );
    await refused(
      { role: "plain", jwt: await mintJwt(key, { ...base, iat: t - 10, nbf: t + 120, exp: t + 600 }) },
      "error validating token: invalid not before (nbf) claim: token not yet valid",
    );
    await refused(
      { role: "plain", jwt: await mintJwt(key, { ...base, iat: t + 120, exp: t + 600 }) },
      "error validating token: invalid not before (nbf) claim: token not yet valid",
    );
    // No exp: valid until iat + 150 s (+ the 60 s skew).
    expect(
      (await login(path, { role: "plain", jwt: await mintJwt(key, { ...base, iat: t - 200, exp: undefined }) })).status,
    ).toBe(200);
    await refused(
      { role: "plain", jwt: await mintJwt(key, { ...base, iat: t - 300, exp: undefined }) },
      "error validating token: invalid expiration time (exp) claim: token is expired",
    );
    await refused(
      { role: "plain", jwt: await mintJwt(key, { ...base, iat: undefined, exp: undefined }) },
      "error validating token: no issued at (iat), not before (nbf), or expiration time (exp) claims in token",
    );
  });

  it("leeways set to -1 allow no slack", async () => {
    const t = now();
    await refused(
      { role: "tight", jwt: await mintJwt(key, { ...base, iat: t - 600, exp: t - 5 }) },
      "error validating token: invalid expiration time (exp) claim: token is expired",
    );
    await refused(
      { role: "tight", jwt: await mintJwt(key, { ...base, iat: t - 10, exp: undefined }) },
      "error validating token: invalid expiration time (exp) claim: token is expired",
    );
  });

  it("the algorithm must be allowed", async () => {
    const { path: strict } = await enableJwtMount();
    await configure(strict, { jwt_validation_pubkeys: [key.pem], jwt_supported_algs: ["RS256"] });
    await writeRole(strict, "r", { role_type: "jwt", bound_subject: "alice", user_claim: "sub" });
    const answer = await login(strict, { role: "r", jwt: await mintJwt(key, base) });
    expect(answer.status).toBe(400);
    expect(answer.json.errors).toEqual([
      "error validating token: invalid algorithm (alg) header parameter: token signed with unexpected algorithm",
    ]);
  });

  it("user claim, claim mappings and JSON pointers", async () => {
    await refused(
      { role: "aud", jwt: await mintJwt(key, { iss: base.iss, aud: "a1", sub: undefined }) },
      'claim "sub" not found in token',
    );
    const claims = {
      ...base,
      repository: "acme/web",
      run_attempt: 1,
      admin: true,
      nested: { login: "ci-web", team: "ops" },
    };
    const ok = await login(path, { role: "exact", jwt: await mintJwt(key, claims) });
    expect(ok.status).toBe(200);
    expect(ok.json.auth.metadata).toEqual({ role: "exact", team: "ops", attempt: "1" });
    await refused(
      { role: "exact", jwt: await mintJwt(key, { ...claims, nested: { login: 7 } }) },
      'claim "/nested/login" could not be converted to string',
    );
    await refused(
      { role: "exact", jwt: await mintJwt(key, { ...claims, nested: { login: "x", team: { a: 1 } } }) },
      "error converting claim '/nested/team' to string",
    );
  });

  it("bound claims: any listed value, numbers and booleans by value, globs with `*`", async () => {
    const claims = { ...base, repository: "acme/api", run_attempt: 1, admin: true, nested: { login: "x" } };
    expect((await login(path, { role: "exact", jwt: await mintJwt(key, claims) })).status).toBe(200);
    await refused(
      { role: "exact", jwt: await mintJwt(key, { ...claims, repository: "acme/other" }) },
      'error validating claims: claim "repository" does not match any associated bound claim values',
    );
    await refused(
      { role: "exact", jwt: await mintJwt(key, { ...claims, run_attempt: "1" }) },
      'error validating claims: claim "run_attempt" does not match any associated bound claim values',
    );
    await refused(
      { role: "exact", jwt: await mintJwt(key, { ...claims, admin: undefined }) },
      'error validating claims: claim "admin" is missing',
    );
    const gh = {
      ...base,
      repository: "acme/web",
      job_workflow_ref: "acme/deploy/.github/workflows/prod.yml@refs/heads/main",
    };
    expect((await login(path, { role: "glob", jwt: await mintJwt(key, gh) })).status).toBe(200);
    await refused(
      {
        role: "glob",
        jwt: await mintJwt(key, { ...gh, job_workflow_ref: "acme/deploy/.github/workflows/prod.yml@refs/heads/dev" }),
      },
      'error validating claims: claim "job_workflow_ref" does not match any associated bound claim values',
    );
    await refused(
      { role: "glob", jwt: await mintJwt(key, { ...gh, repository: "evil/web" }) },
      'error validating claims: claim "repository" does not match any associated bound claim values',
    );
  });

  it("groups claim", async () => {
    await refused({ role: "groups", jwt: await mintJwt(key, base) }, '"groups" claim not found in token');
    await refused(
      { role: "groups", jwt: await mintJwt(key, { ...base, groups: { a: 1 } }) },
      '"groups" claim could not be converted to string list',
    );
    await refused(
      { role: "groups", jwt: await mintJwt(key, { ...base, groups: Array.from({ length: 1001 }, (_, i) => `g${i}`) }) },
      '"groups" claim has more than 1000 values',
    );
    await refused(
      { role: "groups", jwt: await mintJwt(key, { ...base, groups: ["x".repeat(257)] }) },
      'a value in the "groups" claim is longer than 256 characters',
    );
    expect((await login(path, { role: "groups", jwt: await mintJwt(key, { ...base, groups: "one" }) })).status).toBe(
      200,
    );
  });
});

describe("token_bound_cidrs (S25)", () => {
  it("refuses a login from outside the blocks with 403, before the token is looked at", async () => {
    await refused({ role: "cidr", jwt: "x" }, "permission denied", 403, { "CF-Connecting-IP": "198.51.100.1" });
    await refused({ role: "cidr", jwt: "x" }, "permission denied", 403);
  });

  it("binds the token: every use from another address is 403", async () => {
    const answer = await login(
      path,
      { role: "cidr", jwt: await mintJwt(key, base) },
      { "CF-Connecting-IP": "10.1.2.3" },
    );
    expect(answer.status).toBe(200);
    const token = answer.json.auth.client_token as string;
    const from = (ip?: string) =>
      vault("GET", "auth/token/lookup-self", { token, headers: ip ? { "CF-Connecting-IP": ip } : {} });
    expect((await from("10.9.9.9")).status).toBe(200);
    expect((await from("192.0.2.7")).status).toBe(200);
    expect((await from("192.0.2.8")).status).toBe(403);
    expect((await from()).status).toBe(403);
  });
});
