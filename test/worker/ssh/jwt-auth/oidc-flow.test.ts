/**
 * The OIDC browser flow's routes (decisions S26, S28, B21) inside workerd with the real D1
 * and Durable Object bindings: auth_url (state, nonce, PKCE; Vault's vague empty answer;
 * loopback redirect URIs on any port), the GET callback up to the code exchange (state
 * spent once, client_nonce, the exchange's error), the form_post POST (405 elsewhere; a
 * code kept without spending the state), the 60-a-minute rate limit (429) and the
 * 10,000-state cap (empty auth_url). The exchange against a real provider and the sign-in
 * it ends in are in test/interop/ssh/oidc-login.test.ts.
 *
 * The provider is a stand-in on the fixture server serving discovery and keys only; the
 * exchange against a real provider is the end-to-end test's.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MAX_OUTSTANDING_STATES, RATE_LIMIT } from "../../../../src/platform/sign-in-store";
import { mountSignInStore } from "../../../../src/ssh/jwt-auth/sign-in-limits";
import { configure, enableJwtMount, fixtureBase, serveDoc, testKey, writeRole } from "../../../helpers/jwt-auth";
import { uniqueName, vault } from "../../../helpers/vault";

const REDIRECT = "http://localhost:8250/oidc/callback";
/**
 * An oidc mount configured through the API against a stand-in provider on the fixture
 * server (discovery and JWKS only: its token endpoint answers 404, so an exchange fails
 * at once), and a role `dev` allowing the CLI's redirect URI.
 */
async function oidcMount(config: Record<string, unknown> = {}) {
  const prefix = `/${uniqueName("op")}`;
  const issuer = `${fixtureBase()}${prefix}`;
  const key = await testKey("RS256");
  await serveDoc(`${prefix}/.well-known/openid-configuration`, {
    body: {
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      jwks_uri: `${issuer}/jwks`,
    },
  });
  await serveDoc(`${prefix}/jwks`, { body: { keys: [key.jwk] } });
  const mount = await enableJwtMount(undefined, "oidc");
  await configure(mount.path, {
    oidc_discovery_url: issuer,
    oidc_client_id: "keyway",
    oidc_client_secret: "s3cret",
    ...config,
  });
  await writeRole(mount.path, "dev", {
    user_claim: "sub",
    allowed_redirect_uris: [REDIRECT, "https://keyway.example/ui/callback"],
    oidc_scopes: ["profile"],
  });
  return { ...mount, issuer };
}

const authUrl = (path: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  vault("POST", `auth/${path}/oidc/auth_url`, { token: null, body, headers });
const callback = (path: string, params: Record<string, string>, headers: Record<string, string> = {}) =>
  vault("GET", `auth/${path}/oidc/callback?${new URLSearchParams(params)}`, { token: null, headers });

/** The state an auth_url answer carries. */
function stateOf(answer: { json: { data: { auth_url: string } } }): string {
  return new URL(answer.json.data.auth_url).searchParams.get("state")!;
}

describe("oidc/auth_url (S26)", () => {
  it("answers the authorization URL with state, nonce and PKCE S256; the state lives in the B21 store", async () => {
    const mount = await oidcMount();
    const res = await authUrl(mount.path, { role: "DEV", redirect_uri: REDIRECT, client_nonce: "cn-1" });
    expect(res.status).toBe(200);
    const url = new URL(res.json.data.auth_url);
    expect(`${url.origin}${url.pathname}`).toBe(`${mount.issuer}/authorize`);
    const q = Object.fromEntries(url.searchParams);
    expect(q).toMatchObject({
      client_id: "keyway",
      redirect_uri: REDIRECT,
      response_type: "code",
      scope: "openid profile",
      code_challenge_method: "S256",
    });
    expect(q.code_challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.has("response_mode")).toBe(false);
    const rows = await runInDurableObject(mountSignInStore(env, mount), (_i, s) =>
      s.storage.sql.exec<{ state: string; record: string; expires_at: number }>("SELECT * FROM states").toArray(),
    );
    expect(rows.map((r) => r.state)).toEqual([q.state]);
    const record = JSON.parse(rows[0]!.record);
    expect(record).toMatchObject({ role: "dev", nonce: q.nonce, redirectUri: REDIRECT, clientNonce: "cn-1" });
    // The verifier stays in the store; only its S256 challenge leaves.
    expect(res.json.data.auth_url).not.toContain(record.codeVerifier);
    expect(rows[0]!.expires_at - Date.now()).toBeGreaterThan(9 * 60_000);
    expect(rows[0]!.expires_at - Date.now()).toBeLessThanOrEqual(10 * 60_000);
  });

  it("a redirect URI the role does not allow answers 200 with an empty auth_url; loopback matches any port", async () => {
    const mount = await oidcMount();
    for (const uri of [
      "https://evil.example/cb",
      "http://localhost:8250/other",
      "https://keyway.example/ui/callback/",
    ]) {
      const res = await authUrl(mount.path, { role: "dev", redirect_uri: uri });
      expect(res.status).toBe(200);
      expect(res.json.data).toEqual({ auth_url: "" });
    }
    const anyPort = await authUrl(mount.path, { role: "dev", redirect_uri: "http://localhost:40000/oidc/callback" });
    expect(anyPort.json.data.auth_url).toContain(encodeURIComponent("http://localhost:40000/oidc/callback"));
    const exact = await authUrl(mount.path, { role: "dev", redirect_uri: "https://keyway.example/ui/callback" });
    expect(exact.json.data.auth_url).not.toBe("");
  });

  it("form_post mode asks the provider for response_mode=form_post", async () => {
    const mount = await oidcMount({ oidc_response_mode: "form_post" });
    const res = await authUrl(mount.path, { role: "dev", redirect_uri: REDIRECT });
    expect(new URL(res.json.data.auth_url).searchParams.get("response_mode")).toBe("form_post");
  });

  it("Vault's errors: missing role, missing redirect_uri, unknown role, not configured", async () => {
    const mount = await oidcMount();
    expect((await authUrl(mount.path, { redirect_uri: REDIRECT })).json).toEqual({ errors: ["missing role"] });
    expect((await authUrl(mount.path, { role: "dev" })).json).toEqual({ errors: ["missing redirect_uri"] });
    expect((await authUrl(mount.path, { role: "nope", redirect_uri: REDIRECT })).json).toEqual({
      errors: ['role "nope" could not be found'],
    });
    const noSecret = await oidcMount({ oidc_client_id: "", oidc_client_secret: "" });
    const res = await authUrl(noSecret.path, { role: "dev", redirect_uri: REDIRECT });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ errors: ["OIDC login is not configured for this mount"] });
    const bare = await enableJwtMount(undefined, "oidc");
    expect((await authUrl(bare.path, { role: "dev", redirect_uri: REDIRECT })).json).toEqual({
      errors: ["could not load configuration"],
    });
    expect((await authUrl("no-such-mount", { role: "dev", redirect_uri: REDIRECT })).status).toBe(404);
  });

  it("default_role stands in for a missing role", async () => {
    const mount = await oidcMount({ default_role: "dev" });
    const res = await authUrl(mount.path, { redirect_uri: REDIRECT });
    expect(res.json.data.auth_url).not.toBe("");
  });
});

describe("GET oidc/callback (S26)", () => {
  it("an unknown state is refused with Vault's text", async () => {
    const mount = await oidcMount();
    const res = await callback(mount.path, { state: "nope", code: "c" });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ errors: ["Vault login failed. Expired or missing OAuth state."] });
  });

  it("client_nonce must match the one auth_url got; the state is spent either way", async () => {
    const mount = await oidcMount();
    const state = stateOf(await authUrl(mount.path, { role: "dev", redirect_uri: REDIRECT, client_nonce: "right" }));
    expect((await callback(mount.path, { state, code: "c", client_nonce: "wrong" })).json).toEqual({
      errors: ["invalid client_nonce"],
    });
    expect((await callback(mount.path, { state, code: "c", client_nonce: "right" })).json).toEqual({
      errors: ["Vault login failed. Expired or missing OAuth state."],
    });
  });

  it("with the state accepted, a failing code exchange answers Vault's text, and the state is spent", async () => {
    const mount = await oidcMount();
    const state = stateOf(await authUrl(mount.path, { role: "dev", redirect_uri: REDIRECT, client_nonce: "n" }));
    const res = await callback(mount.path, { state, code: "c", client_nonce: "n" });
    expect(res.status).toBe(400);
    expect(res.json.errors[0]).toMatch(/^Vault login failed\. Error exchanging oidc code: ".+"\.$/);
    expect((await callback(mount.path, { state, code: "c", client_nonce: "n" })).json.errors[0]).toBe(
      "Vault login failed. Expired or missing OAuth state.",
    );
  });

  it("code=no_code without a stored code: no code received", async () => {
    const mount = await oidcMount();
    const state = stateOf(await authUrl(mount.path, { role: "dev", redirect_uri: REDIRECT }));
    expect((await callback(mount.path, { state, code: "no_code" })).json).toEqual({
      errors: ["Vault login failed. No code or id_token received."],
    });
  });
});

describe("POST oidc/callback (S26: form_post only)", () => {
  it("405 unless the mount is in form_post mode", async () => {
    const mount = await oidcMount();
    const res = await vault("POST", `auth/${mount.path}/oidc/callback`, {
      token: null,
      body: { state: "s", code: "c" },
    });
    expect(res.status).toBe(405);
  });

  it("keeps the posted code under the state without spending it and answers the page that re-issues the GET", async () => {
    const mount = await oidcMount({ oidc_response_mode: "form_post" });
    const state = stateOf(await authUrl(mount.path, { role: "dev", redirect_uri: REDIRECT }));
    const res = await vault("POST", `auth/${mount.path}/oidc/callback`, {
      token: null,
      rawBody: new URLSearchParams({ state, code: "the-code", id_token: "", client_nonce: "" }).toString(),
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("content-security-policy")).toBe("default-src 'none'");
    const next = `/v1/auth/${mount.path}/oidc/callback?${new URLSearchParams({ state, code: "no_code" })}`;
    expect(res.text).toContain(`content="0;url=${next.replaceAll("&", "&amp;")}"`);
    const stored = await runInDurableObject(mountSignInStore(env, mount), (_i, s) =>
      s.storage.sql.exec<{ code: string }>("SELECT code FROM states WHERE state = ?", state).one(),
    );
    expect(stored.code).toBe("the-code");
    // The GET with no_code uses the stored code: it gets as far as the exchange.
    const done = await callback(mount.path, { state, code: "no_code" });
    expect(done.json.errors[0]).toMatch(/^Vault login failed\. Error exchanging oidc code/);
  });

  it("a JSON body works too; an unknown state answers the error page (400)", async () => {
    const mount = await oidcMount({ oidc_response_mode: "form_post" });
    const res = await vault("POST", `auth/${mount.path}/oidc/callback`, {
      token: null,
      body: { state: "unknown", code: "c" },
    });
    expect(res.status).toBe(400);
    expect(res.text).toContain("Vault login failed. Expired or missing OAuth state.");
  });
});

describe("S28 abuse bounds", () => {
  it(`past ${RATE_LIMIT} requests a minute per address and mount: 429 with Retry-After; other addresses go on`, async () => {
    const mount = await oidcMount();
    const from = (ip: string) => ({ "CF-Connecting-IP": ip });
    for (let i = 0; i < RATE_LIMIT; i++) {
      const res = await authUrl(mount.path, { role: "dev", redirect_uri: REDIRECT }, from("203.0.113.7"));
      expect(res.status).toBe(200);
    }
    const limited = await callback(mount.path, { state: "x" }, from("203.0.113.7"));
    expect(limited.status).toBe(429);
    expect(limited.json).toEqual({
      errors: [`request path "auth/${mount.path}/oidc/callback": rate limit quota exceeded`],
    });
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    const login = await vault("POST", `auth/${mount.path}/login`, {
      token: null,
      body: { role: "dev", jwt: "x" },
      headers: from("203.0.113.7"),
    });
    expect(login.status).toBe(429);
    expect((await authUrl(mount.path, { role: "dev", redirect_uri: REDIRECT }, from("203.0.113.8"))).status).toBe(200);
    const other = await oidcMount();
    expect((await authUrl(other.path, { role: "dev", redirect_uri: REDIRECT }, from("203.0.113.7"))).status).toBe(200);
  });

  it(`beyond ${MAX_OUTSTANDING_STATES} outstanding states auth_url answers 200 with an empty auth_url`, async () => {
    const mount = await oidcMount();
    const store = mountSignInStore(env, mount);
    await runInDurableObject(store, (_i, s) => {
      const far = Date.now() + 600_000;
      for (let i = 0; i < MAX_OUTSTANDING_STATES - 1; i++) {
        s.storage.sql.exec("INSERT INTO states (state, record, expires_at) VALUES (?, '{}', ?)", `filler-${i}`, far);
      }
    });
    const last = await authUrl(mount.path, { role: "dev", redirect_uri: REDIRECT });
    expect(last.json.data.auth_url).not.toBe("");
    const full = await authUrl(mount.path, { role: "dev", redirect_uri: REDIRECT });
    expect(full.status).toBe(200);
    expect(full.json.data).toEqual({ auth_url: "" });
    // A spent state frees its place.
    await callback(mount.path, { state: stateOf(last), code: "no_code" });
    expect((await authUrl(mount.path, { role: "dev", redirect_uri: REDIRECT })).json.data.auth_url).not.toBe("");
  });
});
