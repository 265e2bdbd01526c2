/**
 * The GET callback's ID token checks (decision S26) inside workerd, against a stand-in
 * provider on the fixture HTTP server (test/worker/setup/fixture-http-server.ts): discovery,
 * JWKS, a token endpoint answering an ID token minted here with the nonce auth_url put in
 * the authorization URL, and a userinfo endpoint. Each Vault check in turn, with its text:
 * signature, issuer, audience, nonce, bound subject, time claims, max_age, the token
 * endpoint's own errors, a missing ID token; /userinfo merged or, failing, only logged;
 * the role's bound CIDRs. The flow against a real OpenID Provider is
 * test/interop/ssh/oidc-login.test.ts.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  configure,
  enableJwtMount,
  fixtureBase,
  mintJwt,
  serveDoc,
  type TestKey,
  testKey,
  writeRole,
} from "../../../helpers/jwt-auth";
import { uniqueName, vault } from "../../../helpers/vault";

const REDIRECT = "http://localhost:8250/oidc/callback";
const CLIENT_ID = "keyway";

afterEach(() => {
  vi.restoreAllMocks();
});

interface StandIn {
  path: string;
  issuer: string;
  key: TestKey;
  /** Fixture paths of the provider's endpoints. */
  tokenPath: string;
  userinfoPath: string;
}

/** A stand-in provider at a fresh prefix, an oidc mount configured through the API, and role `dev`. */
async function standIn(role: Record<string, unknown> = {}): Promise<StandIn> {
  const prefix = `/${uniqueName("op")}`;
  const issuer = `${fixtureBase()}${prefix}`;
  const key = await testKey("RS256");
  await serveDoc(`${prefix}/.well-known/openid-configuration`, {
    body: {
      issuer,
      authorization_endpoint: `${issuer}/auth`,
      token_endpoint: `${issuer}/token`,
      userinfo_endpoint: `${issuer}/me`,
      jwks_uri: `${issuer}/jwks`,
      id_token_signing_alg_values_supported: ["RS256"],
    },
  });
  await serveDoc(`${prefix}/jwks`, { body: { keys: [key.jwk] } });
  const { path } = await enableJwtMount(undefined, "oidc");
  await configure(path, { oidc_discovery_url: issuer, oidc_client_id: CLIENT_ID, oidc_client_secret: "s3cret" });
  await writeRole(path, "dev", { user_claim: "sub", allowed_redirect_uris: [REDIRECT], ...role });
  return { path, issuer, key, tokenPath: `${prefix}/token`, userinfoPath: `${prefix}/me` };
}

/** auth_url, then what the provider's token endpoint will answer; returns the callback's answer. */
async function signIn(
  op: StandIn,
  idToken: (nonce: string) => Promise<string | null>,
  options: { headers?: Record<string, string>; tokenAnswer?: { status: number; body: unknown } } = {},
) {
  const started = await vault("POST", `auth/${op.path}/oidc/auth_url`, {
    token: null,
    body: { role: "dev", redirect_uri: REDIRECT },
  });
  const url = new URL(started.json.data.auth_url);
  const nonce = url.searchParams.get("nonce")!;
  const jwt = await idToken(nonce);
  await serveDoc(
    op.tokenPath,
    options.tokenAnswer ?? {
      body: { access_token: "at-1", token_type: "Bearer", expires_in: 300, ...(jwt === null ? {} : { id_token: jwt }) },
    },
  );
  const params = new URLSearchParams({ state: url.searchParams.get("state")!, code: "code-1" });
  return vault("GET", `auth/${op.path}/oidc/callback?${params}`, { token: null, headers: options.headers });
}

const idClaims = (op: StandIn, nonce: string, extra: Record<string, unknown> = {}) => ({
  iss: op.issuer,
  aud: CLIENT_ID,
  sub: "alice",
  nonce,
  ...extra,
});

describe("GET oidc/callback: the ID token (S26)", () => {
  it("signs in; /userinfo claims are merged over the ID token's", async () => {
    const op = await standIn({ user_claim: "email", claim_mappings: { team: "team" } });
    await serveDoc(op.userinfoPath, { body: { sub: "alice", email: "alice@example.com", team: "ops" } });
    const res = await signIn(op, (nonce) => mintJwt(op.key, idClaims(op, nonce)));
    expect(res.status, res.text).toBe(200);
    expect(res.json.auth.metadata).toEqual({ role: "dev", team: "ops" });
    const self = await vault("GET", "auth/token/lookup-self", { token: res.json.auth.client_token });
    expect(self.json.data.display_name).toBe(`${op.path}-alice@example.com`);
  });

  it("a failing /userinfo is logged, not fatal, and never logs the access token", async () => {
    const op = await standIn();
    await serveDoc(op.userinfoPath, { status: 500, body: { error: "server_error" } });
    const warn = vi.spyOn(console, "warn");
    const res = await signIn(op, (nonce) => mintJwt(op.key, idClaims(op, nonce)));
    expect(res.status, res.text).toBe(200);
    const lines = warn.mock.calls.map((c) => String(c[0]));
    expect(lines.some((l) => l.includes("error reading /userinfo endpoint"))).toBe(true);
    expect(lines.join("\n")).not.toContain("at-1");
  });

  it("a userinfo answer for another subject is not merged", async () => {
    const op = await standIn({ claim_mappings: { email: "email" } });
    await serveDoc(op.userinfoPath, { body: { sub: "mallory", email: "mallory@example.com" } });
    const res = await signIn(op, (nonce) => mintJwt(op.key, idClaims(op, nonce, { email: "alice@example.com" })));
    expect(res.status, res.text).toBe(200);
    expect(res.json.auth.metadata).toEqual({ role: "dev", email: "alice@example.com" });
  });

  it("refuses, with Vault's texts: wrong nonce, wrong signature, wrong issuer, wrong audience, bound subject", async () => {
    const op = await standIn();
    await serveDoc(op.userinfoPath, { status: 404 });
    const other = await testKey("RS256", op.key.kid);
    const cases: [string, (nonce: string) => Promise<string>, RegExp][] = [
      ["nonce", () => mintJwt(op.key, idClaims(op, "other")), /^Token verification failed\. Invalid ID token nonce\.$/],
      [
        "signature",
        (n) => mintJwt(other, idClaims(op, n)),
        /^Token verification failed\. error verifying token signature/,
      ],
      [
        "issuer",
        (n) => mintJwt(op.key, idClaims(op, n, { iss: "https://other.example" })),
        /^Token verification failed\. .*iss/,
      ],
      [
        "audience",
        (n) => mintJwt(op.key, idClaims(op, n, { aud: "someone-else" })),
        /^Token verification failed\. .*aud/,
      ],
    ];
    for (const [label, mint, text] of cases) {
      const res = await signIn(op, mint);
      expect(res.status, label).toBe(400);
      expect(res.json.errors[0], label).toMatch(text);
    }
    const bound = await standIn({ bound_subject: "bob" });
    const res = await signIn(bound, (n) => mintJwt(bound.key, idClaims(bound, n)));
    expect(res.json).toEqual({ errors: ["Token verification failed. sub claim does not match bound subject"] });
  });

  it("time claims: the clock skew leeway (60 s by default) and no more", async () => {
    const op = await standIn();
    await serveDoc(op.userinfoPath, { status: 404 });
    const now = Math.floor(Date.now() / 1000);
    const within = await signIn(op, (n) => mintJwt(op.key, idClaims(op, n, { iat: now - 600, exp: now - 30 })));
    expect(within.status, within.text).toBe(200);
    const expired = await signIn(op, (n) => mintJwt(op.key, idClaims(op, n, { iat: now - 600, exp: now - 300 })));
    expect(expired.status).toBe(400);
    expect(expired.json.errors[0]).toMatch(/^Token verification failed\. .*exp/);
    const strict = await standIn({ clock_skew_leeway: -1 });
    await serveDoc(strict.userinfoPath, { status: 404 });
    const late = await signIn(strict, (n) =>
      mintJwt(strict.key, idClaims(strict, n, { iat: now - 600, exp: now - 5 })),
    );
    expect(late.status).toBe(400);
  });

  it("max_age: sent in the authorization URL; an auth_time older than it is refused", async () => {
    const op = await standIn({ max_age: 60 });
    await serveDoc(op.userinfoPath, { status: 404 });
    const now = Math.floor(Date.now() / 1000);
    const old = await signIn(op, (n) => mintJwt(op.key, idClaims(op, n, { auth_time: now - 3600 })));
    expect(old.status).toBe(400);
    expect(old.json.errors[0]).toMatch(/^Token verification failed\./);
    const fresh = await signIn(op, (n) => mintJwt(op.key, idClaims(op, n, { auth_time: now - 10 })));
    expect(fresh.status, fresh.text).toBe(200);
  });

  it("the token endpoint's errors and a missing ID token", async () => {
    const op = await standIn();
    const refused = await signIn(op, async () => null, {
      tokenAnswer: { status: 400, body: { error: "invalid_grant", error_description: "code expired" } },
    });
    expect(refused.json).toEqual({
      errors: ['Vault login failed. Error exchanging oidc code: "invalid_grant: code expired".'],
    });
    const noIdToken = await signIn(op, async () => null);
    expect(noIdToken.json).toEqual({ errors: ["Token verification failed. No id_token found in response."] });
    const redirected = await signIn(op, async () => null, { tokenAnswer: { status: 302, body: {} } });
    expect(redirected.json.errors[0]).toMatch(/^Vault login failed\. Error exchanging oidc code: ".*redirect.*"\.$/);
  });

  it("the role's token_bound_cidrs: a callback from elsewhere is refused (403)", async () => {
    const op = await standIn({ token_bound_cidrs: ["10.0.0.0/8"] });
    await serveDoc(op.userinfoPath, { status: 404 });
    const mint = (n: string) => mintJwt(op.key, idClaims(op, n));
    const outside = await signIn(op, mint, { headers: { "CF-Connecting-IP": "192.0.2.1" } });
    expect(outside.status).toBe(403);
    const inside = await signIn(op, mint, { headers: { "CF-Connecting-IP": "10.1.2.3" } });
    expect(inside.status, inside.text).toBe(200);
  });
});
