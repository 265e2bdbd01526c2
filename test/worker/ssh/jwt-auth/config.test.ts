import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDb } from "../../../../src/db/client";
import { loadOidcClientSecret } from "../../../../src/ssh/jwt-auth/repo";
import {
  configure,
  enableJwtMount,
  fixtureBase,
  login,
  mintJwt,
  serveDoc,
  serveProvider,
  type TestKey,
  testKey,
  writeRole,
} from "../../../helpers/jwt-auth";
import { uniqueName, vault } from "../../../helpers/vault";

/** A provider (discovery and JWKS) holding `key`, a new one unless given; returns the issuer URL. */
async function provider(key?: TestKey): Promise<string> {
  return serveProvider([(key ?? (await testKey("RS256"))).jwk]);
}

describe("auth/<mount>/config (S25)", () => {
  it("stores an OIDC config, reads it back without the secret, and keeps the secret encrypted", async () => {
    const { path, accessor } = await enableJwtMount();
    const issuer = await provider();
    await configure(path, {
      oidc_discovery_url: issuer,
      oidc_client_id: "keyway",
      oidc_client_secret: "s3cret-value",
      default_role: "People",
      oidc_response_mode: "form_post",
    });
    const read = await vault("GET", `auth/${path}/config`);
    expect(read.status).toBe(200);
    expect(read.json.data).toMatchObject({
      oidc_discovery_url: issuer,
      oidc_client_id: "keyway",
      default_role: "people",
      oidc_response_mode: "form_post",
      namespace_in_state: true,
    });
    expect(read.text).not.toContain("s3cret-value");
    const row = await env.DB.prepare("SELECT * FROM auth_jwt_configs WHERE accessor = ?").bind(accessor).first();
    expect(JSON.stringify(row)).not.toContain("s3cret-value");
    expect(await loadOidcClientSecret(env, createDb(env.DB), accessor)).toBe("s3cret-value");
  });

  it("serves JWT login on a mount configured for the OIDC flow (one mount for both)", async () => {
    const key = await testKey("ES256");
    const issuer = await provider(key);
    const { path } = await enableJwtMount(uniqueName("oidc"), "oidc");
    await configure(path, { oidc_discovery_url: issuer, oidc_client_id: "keyway", oidc_client_secret: "s" });
    await writeRole(path, "ci", { role_type: "jwt", bound_audiences: ["keyway"], user_claim: "sub" });
    const ok = await login(path, { role: "ci", jwt: await mintJwt(key, { iss: issuer, aud: "keyway", sub: "bot" }) });
    expect(ok.status).toBe(200);
    const other = await login(path, {
      role: "ci",
      jwt: await mintJwt(key, { iss: "https://other.example", aud: "keyway", sub: "bot" }),
    });
    expect(other.status).toBe(400);
    expect(other.json.errors).toEqual(["error validating token: invalid issuer (iss) claim"]);
  });

  const cases: [string, Record<string, unknown>, string][] = [
    [
      "no key source",
      {},
      "exactly one of 'jwt_validation_pubkeys', 'jwks_url', 'jwks_pairs' or 'oidc_discovery_url' must be set",
    ],
    [
      "two key sources",
      { jwks_url: "https://example.com/keys", oidc_discovery_url: "https://example.com" },
      "exactly one of 'jwt_validation_pubkeys', 'jwks_url', 'jwks_pairs' or 'oidc_discovery_url' must be set",
    ],
    [
      "a client id without its secret",
      { oidc_discovery_url: "https://example.com", oidc_client_id: "x" },
      "both 'oidc_client_id' and 'oidc_client_secret' must be set for OIDC",
    ],
    [
      "a client without discovery",
      { jwks_url: "https://example.com/keys", oidc_client_id: "x", oidc_client_secret: "y" },
      "'oidc_discovery_url' must be set for OIDC",
    ],
    [
      "bound_issuer with jwks_pairs",
      { jwks_pairs: [{ jwks_url: "https://example.com/keys" }], bound_issuer: "x" },
      "Bound issuer is not supported for use with 'jwks_pairs'",
    ],
    [
      "a bad PEM",
      { jwt_validation_pubkeys: ["-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----"] },
      "error parsing public key: data does not contain any valid public keys",
    ],
    [
      "plain http to a public host",
      { jwks_url: "http://example.com/keys" },
      "'jwks_url' must use https:// (plain http:// only for a loopback host)",
    ],
    [
      "a CA PEM (Workers)",
      { jwks_url: "https://example.com/keys", jwks_ca_pem: "pem" },
      "'jwks_ca_pem' is not supported: a Worker's fetch cannot pin a CA, so the provider's certificate must chain to a public root",
    ],
    [
      "a discovery CA PEM (Workers)",
      { oidc_discovery_url: "https://example.com", oidc_discovery_ca_pem: "pem" },
      "'oidc_discovery_ca_pem' is not supported: a Worker's fetch cannot pin a CA, so the provider's certificate must chain to a public root",
    ],
    [
      "provider_config (Workers)",
      { oidc_discovery_url: "https://example.com", provider_config: { provider: "azure" } },
      "'provider_config' is not supported: provider-specific group fetching needs the provider's own APIs",
    ],
    [
      "the id_token response type (Workers)",
      { oidc_discovery_url: "https://example.com", oidc_response_types: ["id_token"] },
      "'oidc_response_types' other than \"code\" is not supported: only the authorization code flow is served",
    ],
  ];
  for (const [name, body, message] of cases) {
    it(`refuses ${name} with Vault's text`, async () => {
      const { path } = await enableJwtMount();
      const answer = await vault("POST", `auth/${path}/config`, { body });
      expect(answer.status).toBe(400);
      expect(answer.json.errors).toEqual([message]);
      expect((await vault("GET", `auth/${path}/config`)).status).toBe(404);
    });
  }

  it("refuses an unsupported algorithm and a bad response mode", async () => {
    const { path } = await enableJwtMount();
    const key = await testKey("ES256");
    const algs = await vault("POST", `auth/${path}/config`, {
      body: { jwt_validation_pubkeys: [key.pem], jwt_supported_algs: ["HS256"] },
    });
    expect(algs.json.errors).toEqual(['invalid jwt_supported_algs: unsupported signing algorithm "HS256"']);
    const mode = await vault("POST", `auth/${path}/config`, {
      body: { jwt_validation_pubkeys: [key.pem], oidc_response_mode: "fragment" },
    });
    expect(mode.json.errors).toEqual(['invalid response_mode: "fragment"']);
  });

  it("fetches discovery when written: unreachable, wrong issuer, redirect or oversize → Vault's text", async () => {
    const { path } = await enableJwtMount();
    const base = `/${uniqueName("bad")}`;
    const wrongIssuer = await serveDoc(`${base}/.well-known/openid-configuration`, {
      body: { issuer: "https://elsewhere.example", jwks_uri: "https://elsewhere.example/keys" },
    });
    const redirect = `/${uniqueName("redir")}`;
    await serveDoc(`${redirect}/.well-known/openid-configuration`, { status: 302, location: wrongIssuer });
    const big = `/${uniqueName("big")}`;
    // A valid document for its issuer, but over 64 KiB.
    await serveDoc(`${big}/.well-known/openid-configuration`, {
      body: { issuer: `${fixtureBase()}${big}`, jwks_uri: `${fixtureBase()}${big}/keys`, pad: "x".repeat(70 * 1024) },
    });
    // The same document within the bound is accepted (so the size alone refused the first).
    const small = `/${uniqueName("small")}`;
    await serveDoc(`${small}/.well-known/openid-configuration`, {
      body: {
        issuer: `${fixtureBase()}${small}`,
        jwks_uri: `${fixtureBase()}${small}/keys`,
        pad: "x".repeat(60 * 1024),
      },
    });
    expect(
      (await vault("POST", `auth/${path}/config`, { body: { oidc_discovery_url: `${fixtureBase()}${small}` } })).status,
    ).toBe(204);
    for (const url of [
      `${fixtureBase()}/nothing-here`,
      `${fixtureBase()}${base}`,
      `${fixtureBase()}${redirect}`,
      `${fixtureBase()}${big}`,
    ]) {
      const answer = await vault("POST", `auth/${path}/config`, { body: { oidc_discovery_url: url } });
      expect(answer.status, url).toBe(400);
      expect(answer.json.errors).toEqual(["error checking oidc discovery URL"]);
    }
  });

  it("checks a jwks_url when written, within the fetch bounds", async () => {
    const { path } = await enableJwtMount();
    const tooMany = await serveDoc(`/${uniqueName("many")}`, {
      body: { keys: Array.from({ length: 101 }, () => ({ kty: "oct", k: "AAAA" })) },
    });
    const slow = await serveDoc(`/${uniqueName("slow")}`, { body: { keys: [] }, delayMs: 6000 });
    for (const url of [tooMany, slow, `${fixtureBase()}/missing-keys`]) {
      const answer = await vault("POST", `auth/${path}/config`, { body: { jwks_url: url } });
      expect(answer.status, url).toBe(400);
      expect(answer.json.errors).toEqual([`error checking jwks URL ${url}`]);
    }
  });
});
