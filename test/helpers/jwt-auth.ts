/**
 * Helpers for tests of the JWT/OIDC auth method (decisions S24, S25, S27): key pairs and
 * tokens minted by `jose`, and mounts enabled and configured through the API.
 */
import { exportJWK, exportSPKI, type GenerateKeyPairResult, generateKeyPair, type JWK, SignJWT } from "jose";
import { inject } from "vitest";
import { uniqueName, vault } from "./vault";

export type TestAlg = "RS256" | "ES256" | "EdDSA";

export interface TestKey {
  alg: TestAlg;
  kid: string;
  pair: GenerateKeyPairResult;
  /** SPKI PEM of the public key (`jwt_validation_pubkeys`). */
  pem: string;
  /** Public JWK with `kid` (a JWKS member). */
  jwk: JWK;
}

export async function testKey(alg: TestAlg, kid = uniqueName("kid")): Promise<TestKey> {
  const pair = await generateKeyPair(alg, { extractable: true });
  const jwk = { ...(await exportJWK(pair.publicKey)), kid, use: "sig" };
  return { alg, kid, pair, pem: await exportSPKI(pair.publicKey), jwk };
}

/** A JWT signed by `key`: `iat`/`exp` around now unless the claims set them; `kid` in the header unless `kid: null`. */
export async function mintJwt(
  key: TestKey,
  claims: Record<string, unknown>,
  options: { kid?: string | null; alg?: string } = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const header: { alg: string; kid?: string } = { alg: options.alg ?? key.alg };
  const kid = options.kid === undefined ? key.kid : options.kid;
  if (kid !== null) header.kid = kid;
  return new SignJWT({ iat: now, exp: now + 300, ...claims }).setProtectedHeader(header).sign(key.pair.privateKey);
}

/** Enable a JWT mount at a fresh path (or `path`) and return its path and accessor. */
export async function enableJwtMount(
  path = uniqueName("jwt"),
  type = "jwt",
): Promise<{ path: string; accessor: string }> {
  const enabled = await vault("POST", `sys/auth/${path}`, { body: { type } });
  if (enabled.status !== 204) throw new Error(`enable failed: ${enabled.status} ${enabled.text}`);
  const list = await vault("GET", "sys/auth");
  return { path, accessor: list.json.data[`${path}/`].accessor as string };
}

/** Write a mount's config; throws unless 204. */
export async function configure(path: string, config: Record<string, unknown>): Promise<void> {
  const answer = await vault("POST", `auth/${path}/config`, { body: config });
  if (answer.status !== 204) throw new Error(`config failed: ${answer.status} ${answer.text}`);
}

/** Write a role; throws unless 204 or 200. */
export async function writeRole(path: string, role: string, body: Record<string, unknown>): Promise<void> {
  const answer = await vault("POST", `auth/${path}/role/${role}`, { body });
  if (answer.status !== 204 && answer.status !== 200) throw new Error(`role failed: ${answer.status} ${answer.text}`);
}

/** POST auth/<path>/login without a token. */
export function login(path: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return vault("POST", `auth/${path}/login`, { token: null, body, headers });
}

/** The fixture HTTP server of test/worker/setup/fixture-http-server.ts. */
export const fixtureBase = (): string => inject("fixtureHttpUrl");

/** Serve `body` (JSON) at `path` of the fixture server, with options. */
export async function serveDoc(
  path: string,
  doc: { status?: number; body?: unknown; headers?: Record<string, string>; delayMs?: number; location?: string },
): Promise<string> {
  const answer = await fetch(`${fixtureBase()}/_ctl/doc?path=${encodeURIComponent(path)}`, {
    method: "PUT",
    body: JSON.stringify(doc),
  });
  if (answer.status !== 204) throw new Error(`fixture server: ${answer.status}`);
  return `${fixtureBase()}${path}`;
}

/**
 * An OpenID provider's discovery document and JWKS (`keys`) under a fresh issuer path on
 * the fixture server, its other endpoints unserved; returns the issuer URL.
 */
export async function serveProvider(keys: JWK[] = []): Promise<string> {
  const base = `/${uniqueName("idp")}`;
  const issuer = `${fixtureBase()}${base}`;
  const jwksUri = await serveDoc(`${base}/keys`, { body: { keys } });
  await serveDoc(`${base}/.well-known/openid-configuration`, {
    body: {
      issuer,
      jwks_uri: jwksUri,
      authorization_endpoint: `${issuer}/auth`,
      token_endpoint: `${issuer}/token`,
      userinfo_endpoint: `${issuer}/me`,
    },
  });
  return issuer;
}

/** How many GETs the fixture server answered at `path`. */
export async function hitsOf(path: string): Promise<number> {
  const answer = await fetch(`${fixtureBase()}/_ctl/hits?path=${encodeURIComponent(path)}`);
  return ((await answer.json()) as { hits: number }).hits;
}
