/**
 * End to end (decisions S26, S27, S28, B21): `vault login -method=oidc` against a real
 * OpenID Provider on loopback (panva's oidc-provider, test/support/oidc-provider.ts), played
 * step by step as the vault CLI does it
 * (https://github.com/hashicorp/vault-plugin-auth-jwt/blob/main/cli.go): a 20-character
 * `client_nonce`, `auth_url` for `http://localhost:8250/oidc/callback`, the browser's trip
 * through the provider's login and consent pages, then `GET oidc/callback` with state, code
 * and client_nonce (in form_post mode a form POST first). Then the token signs a key through
 * an SSH role whose `allowed_users_template` names the login's alias, and the certificate
 * logs in to a real sshd.
 *
 * Needs /usr/sbin/sshd (Debian openssh-server, installed by .ci/run).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { vault, vaultOk } from "../../support/client";
import { type RunningOidcProvider, startOidcProvider } from "../../support/oidc-provider";
import { OpensshSandbox } from "../../support/openssh";
import { loginUser, type RunningSshd, sshLogin, startSshd } from "../../support/sshd";
import { type RunningKeyway, startKeyway } from "../../support/worker";

const USER = loginUser();
const REDIRECT = "http://localhost:8250/oidc/callback";
const MOUNT = "oidc";
const FORM_POST_MOUNT = "oidc-fp";
const SSH_ROLE = "oidc-users";

let keyway: RunningKeyway;
let op: RunningOidcProvider;
let sshd: RunningSshd;
let client: OpensshSandbox;
let accessor: string;

/** The CLI's `client_nonce`: 20 base62 characters. */
function clientNonce(): string {
  const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  return Array.from(crypto.getRandomValues(new Uint8Array(20)), (b) => alphabet[b % 62]).join("");
}

/** Steps 1–3 of the CLI: auth_url, then the browser at the provider; returns what reached the CLI's listener. */
async function startLogin(mount: string, options: { nonce?: string; redirectUri?: string; role?: string } = {}) {
  const nonce = options.nonce ?? clientNonce();
  const started = await vault(
    keyway,
    "POST",
    `auth/${mount}/oidc/auth_url`,
    { role: options.role ?? "dev", redirect_uri: options.redirectUri ?? REDIRECT, client_nonce: nonce },
    null,
  );
  expect(started.status).toBe(200);
  const authUrl: string = started.json.data.auth_url;
  expect(authUrl).not.toBe("");
  const redirect = await op.signIn(authUrl, USER);
  return { nonce, authUrl, redirect };
}

/** Step 4 of the CLI: `ReadWithData("auth/<m>/oidc/callback", {state, code, client_nonce})`. */
function callback(mount: string, params: Record<string, string>) {
  return vault(keyway, "GET", `auth/${mount}/oidc/callback?${new URLSearchParams(params)}`, undefined, null);
}

/** The CLI in form_post mode: `http.PostForm` of state, code, id_token and client_nonce to Keyway. */
async function postForm(mount: string, fields: Record<string, string>): Promise<Response> {
  return fetch(`${keyway.url}/v1/auth/${mount}/oidc/callback`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields),
    redirect: "manual",
  });
}

beforeAll(async () => {
  keyway = await startKeyway();
  op = await startOidcProvider({
    accounts: { [USER]: { email: `${USER}@example.com`, groups: ["ops", "dev"] } },
    redirectUris: [REDIRECT],
  });
  client = await OpensshSandbox.create("keyway-oidc-client-");

  // An SSH CA whose role certifies exactly the signed-in user's alias name (S27 templates).
  await vaultOk(keyway, "POST", "ssh/config/ca", { key_type: "ed25519" });
  for (const [path, type] of [
    [MOUNT, "oidc"],
    [FORM_POST_MOUNT, "oidc"],
  ]) {
    expect((await vault(keyway, "POST", `sys/auth/${path}`, { type })).status).toBe(204);
  }
  const mounts = await vaultOk(keyway, "GET", "sys/auth");
  accessor = mounts.json.data[`${MOUNT}/`].accessor;
  expect(accessor).toMatch(/^auth_oidc_[0-9a-f]{8}$/);
  await vaultOk(keyway, "POST", `ssh/roles/${SSH_ROLE}`, {
    key_type: "ca",
    allow_user_certificates: true,
    allowed_users_template: true,
    allowed_users: `{{identity.entity.aliases.${accessor}.name}}`,
    ttl: "10m",
  });
  await vaultOk(keyway, "PUT", "sys/policies/acl/oidc-signers", {
    policy: JSON.stringify({ path: { [`ssh/sign/${SSH_ROLE}`]: { capabilities: ["create", "update"] } } }),
  });

  for (const [mount, mode] of [
    [MOUNT, "query"],
    [FORM_POST_MOUNT, "form_post"],
  ] as const) {
    await vaultOk(keyway, "POST", `auth/${mount}/config`, {
      oidc_discovery_url: op.issuer,
      oidc_client_id: op.clientId,
      oidc_client_secret: op.clientSecret,
      oidc_response_mode: mode,
      default_role: "dev",
    });
    await vaultOk(keyway, "POST", `auth/${mount}/role/dev`, {
      role_type: "oidc",
      user_claim: "preferred_username",
      groups_claim: "groups",
      claim_mappings: { email: "email" },
      oidc_scopes: ["profile", "email", "groups"],
      allowed_redirect_uris: [REDIRECT],
      token_policies: ["oidc-signers"],
      token_ttl: "1h",
    });
  }
  sshd = await startSshd({ trustedUserCaKeys: (await vaultOk(keyway, "GET", "ssh/public_key", undefined, null)).text });
}, 180_000);

afterAll(async () => {
  await sshd?.stop();
  await client?.dispose();
  await op?.stop();
  await keyway?.stop();
});

describe("vault login -method=oidc against a real OpenID Provider", () => {
  it("auth_url carries state, nonce and PKCE S256 for the provider's authorization endpoint", async () => {
    const nonce = clientNonce();
    const res = await vault(
      keyway,
      "POST",
      `auth/${MOUNT}/oidc/auth_url`,
      { role: "DEV", redirect_uri: REDIRECT, client_nonce: nonce },
      null,
    );
    expect(res.status).toBe(200);
    const url = new URL(res.json.data.auth_url);
    expect(`${url.origin}${url.pathname}`).toBe(`${op.issuer}/auth`);
    const q = Object.fromEntries(url.searchParams);
    expect(q).toMatchObject({
      client_id: op.clientId,
      redirect_uri: REDIRECT,
      response_type: "code",
      scope: "openid profile email groups",
      code_challenge_method: "S256",
    });
    expect(q.state).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.nonce).toBeTruthy();
    expect(q.code_challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The client_nonce stays between Keyway and the CLI: never sent to the provider.
    expect(res.json.data.auth_url).not.toContain(nonce);
  });

  it("the whole code flow with PKCE signs in: token, policies, alias metadata from /userinfo", async () => {
    const { nonce, redirect } = await startLogin(MOUNT);
    expect(redirect.mode).toBe("query");
    expect(redirect.target).toBe(REDIRECT);
    const res = await callback(MOUNT, {
      state: redirect.params.get("state")!,
      code: redirect.params.get("code")!,
      client_nonce: nonce,
    });
    expect(res.status, res.text).toBe(200);
    const auth = res.json.auth;
    expect(auth.client_token).toMatch(/^hvs\./);
    expect(auth.policies).toEqual(["default", "oidc-signers"]);
    // email came from /userinfo only: the provider's ID token carries just `sub`.
    expect(auth.metadata).toEqual({ role: "dev", email: `${USER}@example.com` });
    expect(auth.token_type).toBe("service");
    expect(auth.orphan).toBe(true);
    expect(auth.entity_id).toBeTruthy();
    const self = await vaultOk(keyway, "GET", "auth/token/lookup-self", undefined, auth.client_token);
    expect(self.json.data.display_name).toBe(`${MOUNT}-${USER}`);
    const entity = await vaultOk(keyway, "GET", `identity/entity/id/${auth.entity_id}`);
    expect(entity.json.data.aliases).toEqual([
      expect.objectContaining({
        mount_accessor: accessor,
        name: USER,
        metadata: { role: "dev", email: `${USER}@example.com` },
      }),
    ]);
  });

  it("groups from /userinfo set external group memberships (S27): the group's policy reaches the token", async () => {
    const group = await vaultOk(keyway, "POST", "identity/group", {
      name: "oidc-ops",
      type: "external",
      policies: ["ops-extra"],
    });
    await vaultOk(keyway, "POST", "identity/group-alias", {
      name: "ops",
      mount_accessor: accessor,
      canonical_id: group.json.data.id,
    });
    const { nonce, redirect } = await startLogin(MOUNT);
    const res = await callback(MOUNT, {
      state: redirect.params.get("state")!,
      code: redirect.params.get("code")!,
      client_nonce: nonce,
    });
    expect(res.status, res.text).toBe(200);
    expect(res.json.auth.identity_policies).toEqual(["ops-extra"]);
    expect(res.json.auth.policies).toEqual(["default", "oidc-signers", "ops-extra"]);
  });

  it("a state is single use: the same callback again is refused", async () => {
    const { nonce, redirect } = await startLogin(MOUNT);
    const params = { state: redirect.params.get("state")!, code: redirect.params.get("code")!, client_nonce: nonce };
    expect((await callback(MOUNT, params)).status).toBe(200);
    const again = await callback(MOUNT, params);
    expect(again.status).toBe(400);
    expect(again.json).toEqual({ errors: ["Vault login failed. Expired or missing OAuth state."] });
  });

  it("client_nonce is checked: a missing or different one is refused, and the state is spent", async () => {
    const { nonce, redirect } = await startLogin(MOUNT);
    const state = redirect.params.get("state")!;
    const code = redirect.params.get("code")!;
    const wrong = await callback(MOUNT, { state, code, client_nonce: `${nonce}x` });
    expect(wrong.status).toBe(400);
    expect(wrong.json).toEqual({ errors: ["invalid client_nonce"] });
    expect((await callback(MOUNT, { state, code, client_nonce: nonce })).json).toEqual({
      errors: ["Vault login failed. Expired or missing OAuth state."],
    });

    const second = await startLogin(MOUNT);
    const missing = await callback(MOUNT, {
      state: second.redirect.params.get("state")!,
      code: second.redirect.params.get("code")!,
    });
    expect(missing.json).toEqual({ errors: ["invalid client_nonce"] });
  });

  it("a code spent at the provider, or one not issued for this state, fails the exchange", async () => {
    const first = await startLogin(MOUNT);
    const code = first.redirect.params.get("code")!;
    expect(
      (await callback(MOUNT, { state: first.redirect.params.get("state")!, code, client_nonce: first.nonce })).status,
    ).toBe(200);
    // The provider refuses the spent code (its PKCE verifier belonged to the first state, too).
    const second = await startLogin(MOUNT);
    const res = await callback(MOUNT, {
      state: second.redirect.params.get("state")!,
      code,
      client_nonce: second.nonce,
    });
    expect(res.status).toBe(400);
    expect(res.json.errors[0]).toMatch(/^Vault login failed\. Error exchanging oidc code: ".*invalid_grant.*"\.$/);
  });

  it("redirect URIs: loopback on any port gets an auth_url; any other URI an empty one (200)", async () => {
    const ask = (redirect_uri: string) =>
      vault(keyway, "POST", `auth/${MOUNT}/oidc/auth_url`, { role: "dev", redirect_uri }, null);
    const otherPort = await ask("http://localhost:51234/oidc/callback");
    expect(otherPort.status).toBe(200);
    expect(new URL(otherPort.json.data.auth_url).searchParams.get("redirect_uri")).toBe(
      "http://localhost:51234/oidc/callback",
    );
    for (const uri of ["http://localhost:8250/elsewhere", "https://evil.example/oidc/callback"]) {
      const res = await ask(uri);
      expect(res.status).toBe(200);
      expect(res.json.data).toEqual({ auth_url: "" });
    }
    const unknownRole = await vault(
      keyway,
      "POST",
      `auth/${MOUNT}/oidc/auth_url`,
      { role: "nope", redirect_uri: REDIRECT },
      null,
    );
    expect(unknownRole.json).toEqual({ errors: ['role "nope" could not be found'] });
    const noRedirect = await vault(keyway, "POST", `auth/${MOUNT}/oidc/auth_url`, { role: "dev" }, null);
    expect(noRedirect.json).toEqual({ errors: ["missing redirect_uri"] });
  });

  it("POST callback is for form_post mounts only (405 elsewhere)", async () => {
    const res = await postForm(MOUNT, { state: "x", code: "y" });
    expect(res.status).toBe(405);
  });
});

describe("form_post mode", () => {
  it("the CLI's way: form POST of the provider's answer, then the GET with state, code and client_nonce", async () => {
    const { nonce, authUrl, redirect } = await startLogin(FORM_POST_MOUNT);
    expect(new URL(authUrl).searchParams.get("response_mode")).toBe("form_post");
    expect(redirect.mode).toBe("form_post");
    expect(redirect.target).toBe(REDIRECT);
    const state = redirect.params.get("state")!;
    const code = redirect.params.get("code")!;
    const posted = await postForm(FORM_POST_MOUNT, { state, code, id_token: "", client_nonce: nonce });
    expect(posted.status).toBe(200);
    expect(posted.headers.get("content-type")).toMatch(/^text\/html/);
    await posted.text();
    const res = await callback(FORM_POST_MOUNT, { state, code, client_nonce: nonce });
    expect(res.status, res.text).toBe(200);
    expect(res.json.auth.client_token).toMatch(/^hvs\./);
  });

  it("the browser's way: the POST stores the code and its page re-issues the GET with code=no_code", async () => {
    const started = await vault(
      keyway,
      "POST",
      `auth/${FORM_POST_MOUNT}/oidc/auth_url`,
      { role: "dev", redirect_uri: REDIRECT },
      null,
    );
    const redirect = await op.signIn(started.json.data.auth_url, USER);
    const state = redirect.params.get("state")!;
    const posted = await postForm(FORM_POST_MOUNT, Object.fromEntries(redirect.params));
    expect(posted.status).toBe(200);
    expect(posted.headers.get("cache-control")).toBe("no-store");
    expect(posted.headers.get("referrer-policy")).toBe("no-referrer");
    const page = await posted.text();
    const next = /http-equiv="refresh" content="0;url=([^"]+)"/.exec(page)?.[1]?.replaceAll("&amp;", "&");
    expect(next).toBe(`/v1/auth/${FORM_POST_MOUNT}/oidc/callback?${new URLSearchParams({ state, code: "no_code" })}`);
    // The stored code did not consume the state: the GET does.
    const res = await fetch(`${keyway.url}${next}`);
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.auth.client_token).toMatch(/^hvs\./);
    expect((await fetch(`${keyway.url}${next}`)).status).toBe(400);
  });

  it("a POST for an unknown state answers the error page (400) and stores nothing", async () => {
    const res = await postForm(FORM_POST_MOUNT, { state: "unknown-state", code: "c" });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("Vault login failed. Expired or missing OAuth state.");
  });
});

describe("sign in, then sign a key that logs in to a real sshd", () => {
  it("the alias name from the provider becomes the only principal the SSH role allows", async () => {
    const { nonce, redirect } = await startLogin(MOUNT);
    const login = await callback(MOUNT, {
      state: redirect.params.get("state")!,
      code: redirect.params.get("code")!,
      client_nonce: nonce,
    });
    expect(login.status, login.text).toBe(200);
    const token: string = login.json.auth.client_token;

    const keyPath = client.path("oidc-user-key");
    const generated = await client.sshKeygen(["-q", "-t", "ed25519", "-N", "", "-C", "oidc", "-f", keyPath]);
    expect(generated.code, generated.stderr).toBe(0);
    const publicKey = await readFile(`${keyPath}.pub`, "utf8");

    const refused = await vault(
      keyway,
      "POST",
      `ssh/sign/${SSH_ROLE}`,
      { public_key: publicKey, valid_principals: "someone-else" },
      token,
    );
    expect(refused.status).toBe(400);

    const signed = await vaultOk(
      keyway,
      "POST",
      `ssh/sign/${SSH_ROLE}`,
      { public_key: publicKey, valid_principals: USER },
      token,
    );
    const certPath = `${keyPath}-cert.pub`;
    await client.write(path.basename(certPath), signed.json.data.signed_key, 0o644);
    const res = await sshLogin(client, {
      port: sshd.port,
      identityFile: keyPath,
      certificateFile: certPath,
      user: USER,
    });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout.trim()).toBe("keyway-login-ok");
    // The key id is the token's display name: `<mount>-<user claim>` (S7, S25).
    expect(sshd.log()).toContain(`Accepted publickey for ${USER} `);
    expect(sshd.log()).toContain(`ID ${MOUNT}-${USER} (serial`);
  });
});
