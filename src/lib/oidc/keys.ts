/**
 * The keys a JWT/OIDC mount (decision S25) and an organization's single sign-on (N16)
 * verify signatures with, and the signature check itself. JWS verification and JWK parsing are panva's `jose`
 * (https://github.com/panva/jose, WebCrypto, runs in workerd); which keys to use, and
 * when to fetch them, are Vault's rules and S25's bounds:
 *
 * - `jwt_validation_pubkeys` (PEM) are converted to JWKs once, when the config is written.
 * - A JWKS (`jwks_url`, each of `jwks_pairs`, or the discovery document's `jwks_uri`) is
 *   fetched with a 5 s deadline, no redirects, at most 256 KiB and 100 keys, and kept per
 *   isolate for 10 minutes. A token whose `kid` no cached key has triggers one refetch, at
 *   most one fetch per 30 s per URL; when a fetch fails, the cached set keeps serving for
 *   at most 1 h more.
 *
 * Both per-isolate collections are the bounded IsolateCache of src/lib: at most
 * MAX_CACHED_SETS key sets of at most 256 KiB each (4 MiB in all), and one attempt time per
 * URL. URLs come only from configs written by authenticated callers.
 */
import {
  compactVerify,
  createLocalJWKSet,
  exportJWK,
  importJWK,
  importSPKI,
  type JSONWebKeySet,
  type JWK,
  errors as joseErrors,
} from "jose";
import { fromUtf8 } from "../bytes";
import { IsolateCache } from "../isolate-cache";
import { BoundedFetchError, fetchJsonBounded } from "../net/bounded-fetch";

/** A JWT's claims, as the caller reads them. */
type Claims = Record<string, unknown>;

/** S25: a JWT longer than this is refused before any key is looked at. */
export const MAX_JWT_BYTES = 16 * 1024;
/** S25: bounds of outbound fetches. */
export const FETCH_TIMEOUT_MS = 5000;
export const MAX_DISCOVERY_BYTES = 64 * 1024;
export const MAX_JWKS_BYTES = 256 * 1024;
export const MAX_JWKS_KEYS = 100;
/** S25: how long a fetched key set is used before it is fetched again. */
export const JWKS_FRESH_MS = 10 * 60 * 1000;
/** S25: the least time between two fetches of one URL. */
export const JWKS_REFETCH_COOLDOWN_MS = 30 * 1000;
/** S25: how long past its freshness a key set serves while fetches fail. */
export const JWKS_STALE_GRACE_MS = 60 * 60 * 1000;

const MAX_CACHED_SETS = 16;

/** Vault's default `jwt_supported_algs` for logins (hashicorp/cap jwt algs). */
export const DEFAULT_SUPPORTED_ALGS = [
  "RS256",
  "RS384",
  "RS512",
  "ES256",
  "ES384",
  "ES512",
  "PS256",
  "PS384",
  "PS512",
  "EdDSA",
] as const;

/** A signature that did not verify; `message` is the text after `error validating token: `. */
export class SignatureError extends Error {}

type LocalKeySet = ReturnType<typeof createLocalJWKSet>;

interface CachedKeySet {
  keys: LocalKeySet;
  fetchedAt: number;
  /** Length of the set's JSON text: its size in the cache's byte bound. */
  bytes: number;
}

const keySets = new IsolateCache<CachedKeySet>({
  name: "jwt-auth-jwks",
  ttlMs: JWKS_FRESH_MS + JWKS_STALE_GRACE_MS,
  maxEntries: MAX_CACHED_SETS,
  maxBytes: MAX_CACHED_SETS * MAX_JWKS_BYTES,
  sizeOf: (set) => set.bytes,
});
const fetchAttempts = new IsolateCache<number>({
  name: "jwt-auth-jwks-fetches",
  ttlMs: JWKS_REFETCH_COOLDOWN_MS,
  maxEntries: 1024,
});
const staticKeySets = new IsolateCache<CryptoKey[]>({
  name: "jwt-auth-static-keys",
  ttlMs: JWKS_FRESH_MS,
  maxEntries: 256,
});

/** Where a mount's keys come from. */
export type KeySource = { kind: "static"; cacheKey: string; jwks: JWK[] } | { kind: "remote"; urls: string[] };

/**
 * Fetch and parse a JWKS within S25's bounds.
 * @throws Error with the reason
 */
export async function fetchJwks(url: string): Promise<JSONWebKeySet> {
  const doc = await fetchJsonBounded(url, { timeoutMs: FETCH_TIMEOUT_MS, maxBytes: MAX_JWKS_BYTES });
  const keys = (doc as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) throw new Error(`${url}: not a JSON Web Key Set`);
  if (keys.length > MAX_JWKS_KEYS) throw new Error(`${url}: more than ${MAX_JWKS_KEYS} keys`);
  const set = { keys } as JSONWebKeySet;
  createLocalJWKSet(set); // throws on a malformed set
  return set;
}

/**
 * The key set of a JWKS URL (S25's caching). `kidMissed` asks for a refetch because a
 * token named a key the cached set lacks; it is honoured at most once per cooldown.
 */
async function remoteKeySet(url: string, now: number, kidMissed: boolean): Promise<LocalKeySet> {
  const cached = keySets.peek(url, now);
  if (cached && now - cached.fetchedAt < JWKS_FRESH_MS && !kidMissed) return cached.keys;
  const usableStale = cached && now - cached.fetchedAt < JWKS_FRESH_MS + JWKS_STALE_GRACE_MS ? cached.keys : null;
  if (fetchAttempts.peek(url, now) !== undefined) {
    if (usableStale) return usableStale;
    throw new SignatureError("error verifying token signature: fetching keys: a recent fetch failed, retrying later");
  }
  // Recorded before the fetch: concurrent misses of this isolate do not fetch again.
  fetchAttempts.set(url, now, now);
  try {
    const set = await fetchJwks(url);
    const keys = createLocalJWKSet(set);
    keySets.set(url, { keys, fetchedAt: now, bytes: JSON.stringify(set).length }, now);
    return keys;
  } catch (err) {
    if (usableStale) return usableStale;
    const reason = err instanceof BoundedFetchError || err instanceof Error ? err.message : String(err);
    throw new SignatureError(`error verifying token signature: fetching keys: ${reason}`);
  }
}

/**
 * The static keys imported for one algorithm (Vault tries every configured key, whatever
 * `kid` the token names). Keys that cannot serve the algorithm are left out.
 */
async function staticKeys(
  source: Extract<KeySource, { kind: "static" }>,
  alg: string,
  now: number,
): Promise<CryptoKey[]> {
  // The token's header names `alg`: only algorithms Keyway knows are looked up (and cached),
  // so a client cannot fill this cache with names it makes up.
  if (!(DEFAULT_SUPPORTED_ALGS as readonly string[]).includes(alg)) return [];
  const cacheKey = `${source.cacheKey}\u0000${alg}`;
  const hit = staticKeySets.peek(cacheKey, now);
  if (hit) return hit;
  const keys: CryptoKey[] = [];
  for (const jwk of source.jwks) {
    try {
      const key = await importJWK(jwk, alg);
      if (key instanceof CryptoKey) keys.push(key);
    } catch {
      // not a key of this algorithm
    }
  }
  staticKeySets.set(cacheKey, keys, now);
  return keys;
}

/** Verify with one key set; null when no key of the set verifies it. `noKey` when no key matched the header. */
async function verifyWith(jwt: string, keys: LocalKeySet): Promise<Uint8Array | "noKey" | null> {
  try {
    return (await compactVerify(jwt, keys)).payload;
  } catch (err) {
    if (err instanceof joseErrors.JWKSMultipleMatchingKeys) {
      for await (const key of err as unknown as AsyncIterable<CryptoKey>) {
        try {
          return (await compactVerify(jwt, key)).payload;
        } catch {
          // the next candidate
        }
      }
      return null;
    }
    if (err instanceof joseErrors.JWKSNoMatchingKey) return "noKey";
    if (err instanceof joseErrors.JWSInvalid)
      throw new SignatureError(`error verifying token signature: ${err.message}`);
    return null;
  }
}

/**
 * Verify a compact JWS with the mount's keys and return its claims and `alg`. Only the
 * signature is checked here; claims are Vault's rules (claims.ts).
 * @throws SignatureError with the text after `error validating token: `
 */
export async function verifySignature(
  jwt: string,
  source: KeySource,
  now: number = Date.now(),
): Promise<{ claims: Claims; alg: string }> {
  if (jwt.split(".").length !== 3) {
    throw new SignatureError("error verifying token signature: compact JWS format must have three parts");
  }
  let payload: Uint8Array | null = null;
  if (source.kind === "static") {
    for (const key of await staticKeys(source, headerAlg(jwt), now)) {
      try {
        payload = (await compactVerify(jwt, key)).payload;
        break;
      } catch (err) {
        if (err instanceof joseErrors.JWSInvalid) {
          throw new SignatureError(`error verifying token signature: ${err.message}`);
        }
      }
    }
    if (!payload) {
      throw new SignatureError(
        "error verifying token signature: no known key successfully validated the token signature",
      );
    }
  } else {
    for (const url of source.urls) {
      let result = await verifyWith(jwt, await remoteKeySet(url, now, false));
      if (result === "noKey") result = await verifyWith(jwt, await remoteKeySet(url, now, true));
      if (result instanceof Uint8Array) {
        payload = result;
        break;
      }
    }
    if (!payload) throw new SignatureError("error verifying token signature: failed to verify id token signature");
  }
  let claims: unknown;
  try {
    claims = JSON.parse(fromUtf8(payload));
  } catch {
    throw new SignatureError("error verifying token signature: the payload is not JSON");
  }
  if (claims === null || typeof claims !== "object" || Array.isArray(claims)) {
    throw new SignatureError("error verifying token signature: the payload is not a JSON object");
  }
  return { claims: claims as Claims, alg: headerAlg(jwt) };
}

function headerAlg(jwt: string): string {
  try {
    const header = JSON.parse(fromUtf8(base64UrlDecode(jwt.slice(0, jwt.indexOf("."))))) as { alg?: unknown };
    return typeof header.alg === "string" ? header.alg : "";
  } catch {
    return "";
  }
}

function base64UrlDecode(text: string): Uint8Array {
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/");
  const bin = atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Algorithms a PEM public key may be, tried in order to learn its kind (RSA, EC curves, Ed25519). */
const PEM_PROBE_ALGS = ["RS256", "ES256", "ES384", "ES512", "EdDSA"];

/**
 * A PEM public key (`jwt_validation_pubkeys`) as a JWK without `alg`, so any algorithm of
 * its kind verifies with it. Null when it is not a public key jose can use.
 */
export async function pemToJwk(pem: string): Promise<JWK | null> {
  for (const alg of PEM_PROBE_ALGS) {
    try {
      const key = await importSPKI(pem.trim(), alg, { extractable: true });
      const jwk = await exportJWK(key);
      delete jwk.alg;
      return jwk;
    } catch {
      // not this kind
    }
  }
  return null;
}
