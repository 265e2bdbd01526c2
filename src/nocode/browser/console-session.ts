/**
 * Sessions of the self-service console (decision N14).
 *
 * - Signing in with a user or team token opens a session: a random 32-byte id in an
 *   `HttpOnly`, `SameSite=Strict` cookie (`Secure` except on loopback, where the browser
 *   talks plain HTTP), stored only as `keyedHash(KEYWAY_HASH_KEY, "console-session", id)`
 *   (B2), beside the stored hash of the token (never the token) and an expiry of 12 h.
 * - Every request resolves that token hash again through {@link resolveStoredToken}, the
 *   resolution the API's Bearer tokens use: a revoked, replaced or expired token (N13)
 *   ends the session within the same second as it stops the API, and the caller's rights
 *   (N10) are read afresh by each page.
 * - Single sign-on (N16) opens a session without a token: the row keeps the user, the
 *   organization it is scoped to, the SSO configuration's generation and the time of the
 *   provider sign-in. Every request re-checks, in one D1 statement, that the user is still
 *   in a team of that organization, that SSO is still enabled there and that the
 *   generation is unchanged (changing the issuer, the client id or `enabled` bumps it);
 *   otherwise the row is deleted. The caller carries that organization's rights only.
 * - CSRF: every state-changing form carries `HMAC(KEYWAY_HASH_KEY, "console-csrf", id)`,
 *   bound to the session; the sign-in form, which has no session yet, carries the HMAC of
 *   a random pre-session cookie instead (double submit, so nobody can sign a victim in
 *   with the attacker's token).
 */
import { and, eq, gt, inArray, lte } from "drizzle-orm";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { CookieOptions } from "hono/utils/cookie";
import type { AppEnv } from "../../app-env";
import { createDb } from "../../db/client";
import { consoleSessions } from "../../db/schema/nocode";
import { randomBytes, toBase64Url } from "../../lib/bytes";
import { keyedHash, presentedValuesEqual } from "../../lib/crypto/hmac";
import { hashNocodeToken, type NocodeCaller, resolveStoredToken } from "../access/auth";
import { ssoSessionFacts } from "../sso/repo";

/** N14: a session lasts 12 hours at most. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
/** How long the sign-in form's pre-session cookie lives. */
const SIGN_IN_TTL_SECONDS = 60 * 60;
/** N16: the SSO cookie lives 10 minutes, as the state it is bound to. */
const SSO_COOKIE_TTL_SECONDS = 10 * 60;

const SESSION_PURPOSE = "console-session";
const CSRF_PURPOSE = "console-csrf";
const SIGN_IN_CSRF_PURPOSE = "console-sign-in-csrf";

/** 32 random bytes, base64url: 43 characters. */
const COOKIE_VALUE = /^[A-Za-z0-9_-]{43}$/;

/** A signed-in person: the caller its token resolves to, and the session's CSRF token. */
export interface ConsoleSession {
  caller: Extract<NocodeCaller, { kind: "user" } | { kind: "team" }>;
  csrf: string;
  expiresAt: number;
  /**
   * N16: set when the session was opened by the organization's single sign-on:
   * `organizationId` is the organization's name (its id in /api/v2), `signedInAt` when the
   * provider sign-in completed (ms since the epoch). Null for a token session.
   */
  sso: null | { organizationId: string; signedInAt: number };
}

/** Whether the request reached us on a loopback host (no TLS there: cookies cannot be `Secure`). */
function isLoopback(url: URL): boolean {
  return url.hostname === "127.0.0.1" || url.hostname === "localhost" || url.hostname === "[::1]";
}

/**
 * The console's cookies: the session, the sign-in form's pre-session cookie (CSRF double
 * submit) and N16's SSO binding. Any Hono context of a request under /app can read and set them.
 */
type ConsoleCookie = "session" | "signIn" | "sso";
const COOKIE_NAMES: Record<ConsoleCookie, string> = {
  session: "keyway_console",
  signIn: "keyway_console_sign_in",
  sso: "keyway_sso",
};

/** A cookie's name: `__Host-` (Secure, no Domain, Path=/) wherever the cookie can be Secure. */
function cookieName<E extends AppEnv>(c: Context<E>, cookie: ConsoleCookie): string {
  return isLoopback(new URL(c.req.url)) ? COOKIE_NAMES[cookie] : `__Host-${COOKIE_NAMES[cookie]}`;
}

/**
 * N14's attributes: `HttpOnly`, `Path=/`, `Secure` except on loopback, `SameSite=Strict`;
 * `Lax` only for N16's SSO cookie, which must come back with the provider's cross-site
 * redirect to the callback.
 */
function cookieOptions<E extends AppEnv>(c: Context<E>, cookie: ConsoleCookie): CookieOptions {
  return {
    path: "/",
    httpOnly: true,
    sameSite: cookie === "sso" ? "Lax" : "Strict",
    secure: !isLoopback(new URL(c.req.url)),
  };
}

/** How long each cookie lives, in seconds. */
const COOKIE_MAX_AGE: Record<ConsoleCookie, number> = {
  session: Math.floor(SESSION_TTL_MS / 1000),
  signIn: SIGN_IN_TTL_SECONDS,
  sso: SSO_COOKIE_TTL_SECONDS,
};

/** Set `cookie` to `value` on the answer, for its lifetime. */
export function setConsoleCookie<E extends AppEnv>(c: Context<E>, cookie: ConsoleCookie, value: string): void {
  setCookie(c, cookieName(c, cookie), value, { ...cookieOptions(c, cookie), maxAge: COOKIE_MAX_AGE[cookie] });
}

/** Clear `cookie` in the browser (an empty value with `Max-Age=0`, the same attributes). */
export function clearConsoleCookie<E extends AppEnv>(c: Context<E>, cookie: ConsoleCookie): void {
  deleteCookie(c, cookieName(c, cookie), cookieOptions(c, cookie));
}

/** The request's `cookie`, or null when it has none, or not one we could have set. */
function readConsoleCookie<E extends AppEnv>(c: Context<E>, cookie: ConsoleCookie): string | null {
  const value = getCookie(c, cookieName(c, cookie));
  return value !== undefined && COOKIE_VALUE.test(value) ? value : null;
}

const newCookieValue = () => toBase64Url(randomBytes(32));

/** Only user and team tokens may sign in (N14); the organization token and ADMIN_TOKEN may not. */
export function mayOpenSession(caller: NocodeCaller | null): caller is ConsoleSession["caller"] {
  return caller?.kind === "user" || caller?.kind === "team";
}

/**
 * Open a session for `token` (already resolved to a user or team caller). Returns the
 * cookie value; the caller sets it ({@link setConsoleCookie}). Expired sessions are swept here, a bounded number
 * per sign-in.
 */
export async function openSession(env: Env, token: string, now = Date.now()): Promise<string> {
  return insertSession(env, { tokenHash: await hashNocodeToken(env, token) }, now);
}

/**
 * Open an SSO session (N16) for `userId`, scoped to `organization` and the configuration
 * `generation` it signed in under. Returns the cookie value; the caller sets it.
 */
export async function openSsoSession(
  env: Env,
  sso: { userId: string; organization: string; generation: number },
  now = Date.now(),
): Promise<string> {
  return insertSession(
    env,
    { userId: sso.userId, ssoOrganization: sso.organization, ssoGeneration: sso.generation, ssoSignedInAt: now },
    now,
  );
}

/** Insert a session row (sweeping a bounded number of expired ones) and return its cookie value. */
async function insertSession(
  env: Env,
  fields: Omit<typeof consoleSessions.$inferInsert, "idHash" | "createdAt" | "expiresAt">,
  now: number,
): Promise<string> {
  const db = createDb(env.DB);
  const id = newCookieValue();
  const idHash = await keyedHash(env.KEYWAY_HASH_KEY, SESSION_PURPOSE, id);
  const expired = db
    .select({ idHash: consoleSessions.idHash })
    .from(consoleSessions)
    .where(lte(consoleSessions.expiresAt, now))
    .limit(50);
  await db.batch([
    db.delete(consoleSessions).where(inArray(consoleSessions.idHash, expired)),
    db.insert(consoleSessions).values({ ...fields, idHash, createdAt: now, expiresAt: now + SESSION_TTL_MS }),
  ]);
  return id;
}

/**
 * The session of the request, or null: no cookie, an unknown or expired session, or a
 * token that no longer resolves to a user or team (then the session row is deleted).
 */
export async function currentSession<E extends AppEnv>(
  c: Context<E>,
  now = Date.now(),
): Promise<ConsoleSession | null> {
  const env = c.env;
  const id = readConsoleCookie(c, "session");
  if (!id) return null;
  const db = createDb(env.DB);
  const idHash = await keyedHash(env.KEYWAY_HASH_KEY, SESSION_PURPOSE, id);
  const row = await db
    .select()
    .from(consoleSessions)
    .where(and(eq(consoleSessions.idHash, idHash), gt(consoleSessions.expiresAt, now)))
    .get();
  if (!row) return null;
  let caller: ConsoleSession["caller"] | null = null;
  let sso: ConsoleSession["sso"] = null;
  if (row.tokenHash !== null) {
    const resolved = await resolveStoredToken(env, row.tokenHash);
    if (mayOpenSession(resolved)) caller = resolved;
  } else if (row.userId !== null && row.ssoOrganization !== null) {
    // N16: re-checked on every request, straight from D1 (so well within N13's 1 s).
    const facts = await ssoSessionFacts(db, row.userId, row.ssoOrganization);
    if (facts?.enabled && facts.generation === row.ssoGeneration && facts.member) {
      caller = { kind: "user", userId: row.userId, username: facts.username, onlyOrganization: row.ssoOrganization };
      sso = { organizationId: row.ssoOrganization, signedInAt: row.ssoSignedInAt ?? row.createdAt };
    }
  }
  if (!caller) {
    await db.delete(consoleSessions).where(eq(consoleSessions.idHash, idHash)).run();
    return null;
  }
  return { caller, csrf: await keyedHash(env.KEYWAY_HASH_KEY, CSRF_PURPOSE, id), expiresAt: row.expiresAt, sso };
}

/**
 * End the request's session (sign-out): its row is deleted, so the cookie opens nothing any
 * more, and the answer clears the cookie.
 */
export async function endSession<E extends AppEnv>(c: Context<E>): Promise<void> {
  const id = readConsoleCookie(c, "session");
  if (id) {
    const idHash = await keyedHash(c.env.KEYWAY_HASH_KEY, SESSION_PURPOSE, id);
    await createDb(c.env.DB).delete(consoleSessions).where(eq(consoleSessions.idHash, idHash)).run();
  }
  clearConsoleCookie(c, "session");
}

/** Whether `given` is the session's CSRF token (constant-time comparison). */
export async function csrfMatches(session: ConsoleSession, given: string | undefined): Promise<boolean> {
  if (typeof given !== "string" || given.length !== session.csrf.length) return false;
  return presentedValuesEqual(given, session.csrf);
}

/**
 * The CSRF token the sign-in form carries for its pre-session cookie; the answer sets that
 * cookie when the request came without one.
 */
export async function signInChallenge<E extends AppEnv>(c: Context<E>): Promise<string> {
  let value = readConsoleCookie(c, "signIn");
  if (value === null) {
    value = newCookieValue();
    setConsoleCookie(c, "signIn", value);
  }
  return keyedHash(c.env.KEYWAY_HASH_KEY, SIGN_IN_CSRF_PURPOSE, value);
}

/** Whether a sign-in POST carries the CSRF token of its pre-session cookie. */
export async function signInCsrfMatches<E extends AppEnv>(c: Context<E>, given: string | undefined): Promise<boolean> {
  const value = readConsoleCookie(c, "signIn");
  if (!value || typeof given !== "string") return false;
  return presentedValuesEqual(given, await keyedHash(c.env.KEYWAY_HASH_KEY, SIGN_IN_CSRF_PURPOSE, value));
}

const SSO_COOKIE_PURPOSE = "console-sso";

/**
 * N16's browser binding of an SSO sign-in: a new random `__Host-keyway_sso` value and its
 * HMAC, which the state stores (the value itself is never stored).
 */
export async function newSsoBinding(env: Env): Promise<{ value: string; hash: string }> {
  const value = newCookieValue();
  return { value, hash: await keyedHash(env.KEYWAY_HASH_KEY, SSO_COOKIE_PURPOSE, value) };
}

/** The HMAC of the request's SSO cookie, or null when it has none (or not one we could have set). */
export async function ssoBindingOf<E extends AppEnv>(c: Context<E>): Promise<string | null> {
  const value = readConsoleCookie(c, "sso");
  if (!value) return null;
  return keyedHash(c.env.KEYWAY_HASH_KEY, SSO_COOKIE_PURPOSE, value);
}
