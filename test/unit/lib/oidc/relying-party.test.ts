/**
 * The OIDC relying party (decision S26) against a real OpenID Provider on loopback
 * (panva's oidc-provider): authorization URL with state, nonce and PKCE S256, the code
 * exchange, the ID token checks, the userinfo merge; and Vault's redirect-URI and leeway
 * rules on their own.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { boundedProviderFetch, PROVIDER_MAX_BYTES, ProviderFetchError } from "../../../../src/lib/oidc/http";
import {
  exchangeCode,
  mergeUserinfo,
  type OidcProvider,
  redirectAllowed,
  startAuthorization,
} from "../../../../src/lib/oidc/relying-party";
import { type RunningOidcProvider, startOidcProvider } from "../../../support/oidc-provider";

const REDIRECT = "http://localhost:8250/oidc/callback";

let op: RunningOidcProvider;
let provider: OidcProvider;
let verifySignature: (jwt: string) => Promise<void>;

beforeAll(async () => {
  op = await startOidcProvider({
    accounts: { alice: { email: "alice@example.com", groups: ["admins", "dev"] } },
    redirectUris: [REDIRECT],
  });
  const discovery = (await (await fetch(`${op.issuer}/.well-known/openid-configuration`)).json()) as Record<
    string,
    string
  >;
  provider = {
    issuer: discovery.issuer!,
    authorizationEndpoint: discovery.authorization_endpoint!,
    tokenEndpoint: discovery.token_endpoint!,
    userinfoEndpoint: discovery.userinfo_endpoint!,
  };
  const jwks = createRemoteJWKSet(new URL(discovery.jwks_uri!));
  verifySignature = async (jwt) => {
    await jwtVerify(jwt, jwks);
  };
});

afterAll(async () => {
  await op?.stop();
});

async function signIn(overrides: { maxAge?: number; formPost?: boolean } = {}) {
  const state = crypto.randomUUID();
  const started = await startAuthorization(provider, {
    clientId: op.clientId,
    redirectUri: REDIRECT,
    state,
    scopes: ["email", "groups"],
    maxAge: overrides.maxAge ?? 0,
    formPost: overrides.formPost ?? false,
  });
  const redirect = await op.signIn(started.url, "alice");
  return { state, started, redirect };
}

const exchange = (started: { codeVerifier: string; nonce: string }, code: string, extra: object = {}) =>
  exchangeCode(provider, {
    clientId: op.clientId,
    clientSecret: op.clientSecret,
    code,
    redirectUri: REDIRECT,
    codeVerifier: started.codeVerifier,
    nonce: started.nonce,
    maxAge: 0,
    clockToleranceSeconds: 60,
    algorithms: ["RS256"],
    verifySignature,
    ...extra,
  });

describe("the authorization code flow against oidc-provider", () => {
  it("auth URL: response_type code, openid scope first, state, nonce, PKCE S256", async () => {
    const { state, started } = await signIn();
    const url = new URL(started.url);
    expect(url.origin + url.pathname).toBe(provider.authorizationEndpoint);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      client_id: op.clientId,
      response_type: "code",
      scope: "openid email groups",
      state,
      nonce: started.nonce,
      redirect_uri: REDIRECT,
      code_challenge_method: "S256",
    });
    expect(url.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.has("max_age")).toBe(false);
  });

  it("exchanges the code; the ID token holds sub only, userinfo adds email and groups", async () => {
    const { state, started, redirect } = await signIn();
    expect(redirect.mode).toBe("query");
    expect(redirect.target).toBe(REDIRECT);
    expect(redirect.params.get("state")).toBe(state);
    const exchanged = await exchange(started, redirect.params.get("code")!);
    expect(exchanged.claims.sub).toBe("alice");
    expect(exchanged.claims.iss).toBe(op.issuer);
    expect(exchanged.claims.aud).toBe(op.clientId);
    expect(exchanged.claims.email).toBeUndefined();
    const merged = await mergeUserinfo(provider, op.clientId, exchanged.accessToken, exchanged.claims);
    expect(merged.problem).toBeNull();
    expect(merged.claims).toMatchObject({ sub: "alice", email: "alice@example.com", groups: ["admins", "dev"] });
    expect(merged.claims.iss).toBe(op.issuer);
  });

  it("a code is single use at the provider: the second exchange is an exchange error", async () => {
    const { started, redirect } = await signIn();
    const code = redirect.params.get("code")!;
    await exchange(started, code);
    await expect(exchange(started, code)).rejects.toMatchObject({ kind: "exchange", message: /invalid_grant/ });
  });

  it("a wrong PKCE verifier is refused by the provider", async () => {
    const { started, redirect } = await signIn();
    await expect(
      exchange({ ...started, codeVerifier: "x".repeat(43) }, redirect.params.get("code")!),
    ).rejects.toMatchObject({ kind: "exchange", message: /invalid_grant/ });
  });

  it("a nonce other than the one sent is a verification failure", async () => {
    const { started, redirect } = await signIn();
    await expect(exchange({ ...started, nonce: "other" }, redirect.params.get("code")!)).rejects.toMatchObject({
      kind: "verification",
      message: /nonce/,
    });
  });

  it("a wrong client secret, or a signature the verifier refuses, fails", async () => {
    const first = await signIn();
    await expect(
      exchange(first.started, first.redirect.params.get("code")!, { clientSecret: "wrong" }),
    ).rejects.toMatchObject({ kind: "exchange", message: /invalid_client/ });
    const second = await signIn();
    await expect(
      exchange(second.started, second.redirect.params.get("code")!, {
        verifySignature: async () => {
          throw new Error("signature verification failed");
        },
      }),
    ).rejects.toMatchObject({ kind: "verification", message: "signature verification failed" });
  });

  it("an algorithm outside the accepted list is refused", async () => {
    const { started, redirect } = await signIn();
    await expect(exchange(started, redirect.params.get("code")!, { algorithms: ["ES256"] })).rejects.toMatchObject({
      kind: "verification",
    });
  });

  it("max_age goes into the URL and auth_time is checked", async () => {
    const { started, redirect } = await signIn({ maxAge: 300 });
    expect(new URL(started.url).searchParams.get("max_age")).toBe("300");
    const exchanged = await exchange(started, redirect.params.get("code")!, { maxAge: 300 });
    expect(typeof exchanged.claims.auth_time).toBe("number");
  });

  it("form_post: the provider posts code and state to the redirect URI", async () => {
    const { state, started, redirect } = await signIn({ formPost: true });
    expect(new URL(started.url).searchParams.get("response_mode")).toBe("form_post");
    expect(redirect.mode).toBe("form_post");
    expect(redirect.target).toBe(REDIRECT);
    expect(redirect.params.get("state")).toBe(state);
    expect((await exchange(started, redirect.params.get("code")!)).claims.sub).toBe("alice");
  });

  it("a failing userinfo is reported, not thrown, and the ID token's claims stay", async () => {
    const { started, redirect } = await signIn();
    const exchanged = await exchange(started, redirect.params.get("code")!);
    const merged = await mergeUserinfo(provider, op.clientId, "not-the-access-token", exchanged.claims);
    expect(merged.problem).not.toBeNull();
    expect(merged.claims).toEqual(exchanged.claims);
    expect(await mergeUserinfo({ ...provider, userinfoEndpoint: "" }, op.clientId, "x", { sub: "a" })).toEqual({
      claims: { sub: "a" },
      problem: null,
    });
  });
});

describe("Vault's redirect-URI rule (validRedirect)", () => {
  const allowed = ["http://localhost:8250/oidc/callback", "https://vault.example.com/ui/vault/auth/oidc/oidc/callback"];
  it("exact match for other hosts; loopback hosts match on any port (RFC 8252 §7.3)", () => {
    expect(redirectAllowed("https://vault.example.com/ui/vault/auth/oidc/oidc/callback", allowed)).toBe(true);
    expect(redirectAllowed("https://vault.example.com:8443/ui/vault/auth/oidc/oidc/callback", allowed)).toBe(false);
    expect(redirectAllowed("https://vault.example.com/ui/vault/auth/oidc/oidc/callback/", allowed)).toBe(false);
    expect(redirectAllowed("http://localhost:8250/oidc/callback", allowed)).toBe(true);
    expect(redirectAllowed("http://localhost:51234/oidc/callback", allowed)).toBe(true);
    expect(redirectAllowed("http://localhost/oidc/callback", allowed)).toBe(true);
    expect(redirectAllowed("http://localhost:51234/other", allowed)).toBe(false);
    expect(redirectAllowed("https://localhost:51234/oidc/callback", allowed)).toBe(false);
    expect(redirectAllowed("http://127.0.0.1:9/cb", ["http://127.0.0.1/cb"])).toBe(true);
    expect(redirectAllowed("http://[::1]:9/cb", ["http://[::1]:8250/cb"])).toBe(true);
    expect(redirectAllowed("http://127.0.0.1:9/cb", ["http://localhost:9/cb"])).toBe(false);
    expect(redirectAllowed("not a url", ["not a url"])).toBe(false);
  });
});

describe("the provider fetch bounds (S26: 5 s, no redirects, 64 KiB)", () => {
  let server: Server;
  let origin: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === "/redirect") res.writeHead(302, { location: "/ok" }).end();
      else if (req.url === "/big") res.writeHead(200).end("x".repeat(PROVIDER_MAX_BYTES + 1));
      else if (req.url === "/slow") setTimeout(() => res.writeHead(200).end("late"), 6_000);
      else res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it("answers within the bounds; refuses redirects, oversized bodies, late answers and plain http elsewhere", async () => {
    expect(await (await boundedProviderFetch(`${origin}/ok`, { method: "GET" })).json()).toEqual({ ok: true });
    await expect(boundedProviderFetch(`${origin}/redirect`, { method: "GET" })).rejects.toThrow(/redirect/);
    await expect(boundedProviderFetch(`${origin}/big`, { method: "GET" })).rejects.toThrow(/larger than 65536/);
    await expect(boundedProviderFetch("http://example.com/x", { method: "GET" })).rejects.toBeInstanceOf(
      ProviderFetchError,
    );
    const started = Date.now();
    await expect(boundedProviderFetch(`${origin}/slow`, { method: "GET" })).rejects.toThrow(/5000 ms/);
    expect(Date.now() - started).toBeLessThan(5_900);
  }, 15_000);
});
