/**
 * Vault's claim rules for the JWT/OIDC auth method (decision S25), as Vault's JWT plugin
 * applies them after the signature is verified (hashicorp/vault-plugin-auth-jwt,
 * claims.go and path_login.go; hashicorp/cap jwt.Validate for the registered claims).
 * Pure: no I/O. Messages are Vault's texts.
 */

/** A claims set: the JWT's payload. */
export type Claims = Record<string, unknown>;

/** A login refused by a claim rule; `message` is Vault's text. */
export class ClaimError extends Error {}

/**
 * A claim by name: a name starting with `/` is a JSON pointer (RFC 6901) into the claims,
 * any other a top-level key (Vault's getClaim). Undefined when absent.
 */
export function getClaim(claims: Claims, name: string): unknown {
  if (!name.startsWith("/")) return Object.hasOwn(claims, name) ? claims[name] : undefined;
  let node: unknown = claims;
  for (const raw of name.slice(1).split("/")) {
    const token = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (Array.isArray(node)) {
      if (!/^(0|[1-9]\d*)$/.test(token)) return undefined;
      node = node[Number(token)];
    } else if (node !== null && typeof node === "object") {
      node = Object.hasOwn(node, token) ? (node as Record<string, unknown>)[token] : undefined;
    } else {
      return undefined;
    }
    if (node === undefined) return undefined;
  }
  return node;
}

/** The user claim: a top-level key unless `user_claim_json_pointer` is set. */
export function getUserClaim(claims: Claims, name: string, jsonPointer: boolean): unknown {
  if (jsonPointer) return getClaim(claims, name);
  return Object.hasOwn(claims, name) ? claims[name] : undefined;
}

/** Vault's normalizeList: a list as is, a scalar as a one-element list, anything else null. */
export function normalizeList(value: unknown): unknown[] | null {
  if (Array.isArray(value)) return value;
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return [value];
  return null;
}

/**
 * ryanuber/go-glob: `*` matches any run of characters (the only wildcard); without `*`
 * the pattern must equal the subject.
 */
export function globMatch(pattern: string, subject: string): boolean {
  if (pattern === "") return subject === pattern;
  if (pattern === "*") return true;
  const parts = pattern.split("*");
  if (parts.length === 1) return subject === pattern;
  const leadingGlob = pattern.startsWith("*");
  const trailingGlob = pattern.endsWith("*");
  const end = parts.length - 1;
  let rest = subject;
  for (let i = 0; i < end; i++) {
    const idx = rest.indexOf(parts[i]!);
    if (i === 0) {
      if (!leadingGlob && idx !== 0) return false;
    } else if (idx < 0) {
      return false;
    }
    rest = rest.slice(idx + parts[i]!.length);
  }
  return trailingGlob || rest.endsWith(parts[end]!);
}

function goValue(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(goValue).join(" ")}]`;
  if (value === null || value === undefined) return "<nil>";
  if (typeof value === "object") return `map[${Object.keys(value as object).join(" ")}]`;
  return String(value);
}

/**
 * Vault's validateBoundClaims: every bound claim must be present and one of its values
 * must equal (or, with `glob`, match) one of the token's values. JSON numbers compare by
 * value, strings by text, booleans by value; a string never equals a number.
 * @throws ClaimError `claim "x" does not match any associated bound claim values` and the others
 */
export function validateBoundClaims(type: "string" | "glob", bound: Record<string, unknown>, claims: Claims): void {
  for (const [claim, expected] of Object.entries(bound)) {
    const actual = getClaim(claims, claim);
    if (actual === undefined || actual === null) throw new ClaimError(`claim "${claim}" is missing`);
    const actualValues = normalizeList(actual);
    if (!actualValues) throw new ClaimError(`received claim is not a string or list: ${goValue(actual)}`);
    const expectedValues = normalizeList(expected);
    if (!expectedValues) throw new ClaimError(`bound claim is not a string or list: ${goValue(expected)}`);
    if (!matchFound(expectedValues, actualValues, type === "glob")) {
      throw new ClaimError(`claim "${claim}" does not match any associated bound claim values`);
    }
  }
}

function matchFound(expected: unknown[], actual: unknown[], useGlobs: boolean): boolean {
  for (const e of expected) {
    for (const a of actual) {
      if (useGlobs) {
        if (typeof e !== "string") throw new ClaimError(`received claim is not a glob string: ${goValue(e)}`);
        if (typeof a === "string" && globMatch(e, a)) return true;
      } else if (e === a) {
        return true;
      }
    }
  }
  return false;
}

/**
 * Vault's extractMetadata: each mapped claim present in the token becomes a metadata
 * value (strings as they are, numbers and booleans as text); a claim of another kind
 * refuses the login.
 */
export function extractMetadata(claims: Claims, mappings: Record<string, string> | null): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (const [source, target] of Object.entries(mappings ?? {})) {
    const value = getClaim(claims, source);
    if (value === undefined || value === null) continue;
    if (typeof value === "string") metadata[target] = value;
    else if (typeof value === "number" || typeof value === "boolean") metadata[target] = String(value);
    else throw new ClaimError(`error converting claim '${source}' to string`);
  }
  return metadata;
}

/** S27: at most this many group names are taken from a groups claim. */
export const MAX_GROUPS = 1000;
/** S27: longest group name taken from a groups claim. */
export const MAX_GROUP_NAME = 256;

/**
 * The names in the role's groups claim (Vault's createIdentity): a list of strings or one
 * string; empty names are skipped.
 * @throws ClaimError `"groups" claim not found in token` and the others
 */
export function groupNames(claims: Claims, groupsClaim: string): string[] {
  const raw = getClaim(claims, groupsClaim);
  if (raw === undefined || raw === null) throw new ClaimError(`"${groupsClaim}" claim not found in token`);
  const values = normalizeList(raw);
  if (!values) throw new ClaimError(`"${groupsClaim}" claim could not be converted to string list`);
  if (values.length > MAX_GROUPS) throw new ClaimError(`"${groupsClaim}" claim has more than ${MAX_GROUPS} values`);
  const names: string[] = [];
  for (const value of values) {
    if (typeof value !== "string")
      throw new ClaimError(`value ${goValue(value)} in groups claim could not be parsed as string`);
    if (value.length > MAX_GROUP_NAME)
      throw new ClaimError(`a value in the "${groupsClaim}" claim is longer than ${MAX_GROUP_NAME} characters`);
    if (value !== "") names.push(value);
  }
  return [...new Set(names)];
}

/** The three leeways of a role, in seconds: 0 = the default, negative = none (hashicorp/cap). */
export interface Leeways {
  expiration: number;
  notBefore: number;
  clockSkew: number;
}

/** What the registered claims must satisfy (hashicorp/cap jwt.Expected). */
export interface ExpectedClaims {
  issuer: string;
  subject: string;
  audiences: string[];
  leeways: Leeways;
  /** Seconds since the epoch. */
  now: number;
}

const DEFAULT_LEEWAY = 150;
const DEFAULT_CLOCK_SKEW = 60;

function effectiveLeeway(value: number, fallback: number): number {
  if (value < 0) return 0;
  return value === 0 ? fallback : value;
}

function numericDate(claims: Claims, name: string): number {
  const value = claims[name];
  return typeof value === "number" && Number.isFinite(value) ? Math.trunc(value) : 0;
}

/** The `aud` claim as a list (a string is a one-element list); null when of another kind. */
export function audiences(claims: Claims): string[] | null {
  const aud = claims.aud;
  if (aud === undefined || aud === null) return [];
  if (typeof aud === "string") return [aud];
  if (Array.isArray(aud) && aud.every((a) => typeof a === "string")) return aud as string[];
  return null;
}

/**
 * hashicorp/cap's claim checks after the signature, in its order: issuer, subject,
 * audience, then the time claims with the leeways (the expiration leeway applies only to
 * a token without `exp`, the not-before leeway only to one without `nbf` and `iat`).
 * Messages are cap's, which Vault prefixes with `error validating token: `.
 * @throws ClaimError
 */
export function validateRegisteredClaims(claims: Claims, expected: ExpectedClaims): void {
  if (expected.issuer !== "" && claims.iss !== expected.issuer) throw new ClaimError("invalid issuer (iss) claim");
  if (expected.subject !== "" && claims.sub !== expected.subject) throw new ClaimError("invalid subject (sub) claim");
  const aud = audiences(claims);
  if (aud === null)
    throw new ClaimError("invalid audience (aud) claim: audience claim must be a string or a list of strings");
  if (expected.audiences.length > 0 && !expected.audiences.some((a) => aud.includes(a))) {
    throw new ClaimError("invalid audience (aud) claim: audience claim does not match any expected audience");
  }
  const iat = numericDate(claims, "iat");
  let exp = numericDate(claims, "exp");
  let nbf = numericDate(claims, "nbf");
  if (iat === 0 && exp === 0 && nbf === 0) {
    throw new ClaimError("no issued at (iat), not before (nbf), or expiration time (exp) claims in token");
  }
  if (exp === 0) exp = Math.max(iat, nbf) + effectiveLeeway(expected.leeways.expiration, DEFAULT_LEEWAY);
  if (nbf === 0) nbf = iat !== 0 ? iat : exp - effectiveLeeway(expected.leeways.notBefore, DEFAULT_LEEWAY);
  const skew = effectiveLeeway(expected.leeways.clockSkew, DEFAULT_CLOCK_SKEW);
  if (expected.now + skew < nbf) throw new ClaimError("invalid not before (nbf) claim: token not yet valid");
  if (expected.now - skew > exp) throw new ClaimError("invalid expiration time (exp) claim: token is expired");
  if (iat !== 0 && expected.now + skew < iat) {
    throw new ClaimError("invalid issued at (iat) claim: token issued in the future");
  }
}
