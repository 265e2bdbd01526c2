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
 * - CSRF: every state-changing form carries `HMAC(KEYWAY_HASH_KEY, "console-csrf", id)`,
 *   bound to the session; the sign-in form, which has no session yet, carries the HMAC of
 *   a random pre-session cookie instead (double submit, so nobody can sign a victim in
 *   with the attacker's token).
 */
import { and, eq, gt, inArray, lte } from "drizzle-orm";
import { createDb } from "../db/client";
import { consoleSessions } from "../db/schema";
import { randomBytes, toBase64Url } from "../lib/bytes";
import { keyedHash, presentedValuesEqual } from "../lib/crypto/hmac";
import { hashNocodeToken, type NocodeCaller, resolveStoredToken } from "./auth";

/** N14: a session lasts 12 hours at most. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
/** How long the sign-in form's pre-session cookie lives. */
const SIGN_IN_TTL_SECONDS = 60 * 60;

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
   * N16: for a session opened by signing in with an organization's identity provider, that
   * organization and when the provider sign-in happened (ms since the epoch), which rules
   * what the person may do with their tokens; null for a session opened with a token.
   */
  sso: null | { organizationId: string; signedInAt: number };
}

/** Whether the request reached us on a loopback host (no TLS there: cookies cannot be `Secure`). */
export function isLoopback(url: URL): boolean {
  return url.hostname === "127.0.0.1" || url.hostname === "localhost" || url.hostname === "[::1]";
}

/** Cookie names: `__Host-` (Secure, no Domain, Path=/) wherever the cookie can be Secure. */
export function cookieNames(url: URL): { session: string; signIn: string } {
  return isLoopback(url)
    ? { session: "keyway_console", signIn: "keyway_console_sign_in" }
    : { session: "__Host-keyway_console", signIn: "__Host-keyway_console_sign_in" };
}

/** A `Set-Cookie` value with N14's attributes. */
export function cookieHeader(url: URL, name: string, value: string, maxAgeSeconds: number): string {
  const secure = isLoopback(url) ? "" : "; Secure";
  return `${name}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure}`;
}

/** The value of cookie `name`, or null. */
export function readCookie(headers: Headers, name: string): string | null {
  const raw = headers.get("cookie");
  if (!raw) return null;
  for (const part of raw.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

const newCookieValue = () => toBase64Url(randomBytes(32));

/** Only user and team tokens may sign in (N14); the organization token and ADMIN_TOKEN may not. */
export function mayOpenSession(caller: NocodeCaller | null): caller is ConsoleSession["caller"] {
  return caller?.kind === "user" || caller?.kind === "team";
}

/**
 * Open a session for `token` (already resolved to a user or team caller). Returns the
 * cookie value; the caller sets it. Expired sessions are swept here, a bounded number
 * per sign-in.
 */
export async function openSession(env: Env, token: string, now = Date.now()): Promise<string> {
  const db = createDb(env.DB);
  const id = newCookieValue();
  const [idHash, tokenHash] = await Promise.all([
    keyedHash(env.KEYWAY_HASH_KEY, SESSION_PURPOSE, id),
    hashNocodeToken(env, token),
  ]);
  const expired = db
    .select({ idHash: consoleSessions.idHash })
    .from(consoleSessions)
    .where(lte(consoleSessions.expiresAt, now))
    .limit(50);
  await db.batch([
    db.delete(consoleSessions).where(inArray(consoleSessions.idHash, expired)),
    db.insert(consoleSessions).values({ idHash, tokenHash, createdAt: now, expiresAt: now + SESSION_TTL_MS }),
  ]);
  return id;
}

/**
 * The session of the request, or null: no cookie, an unknown or expired session, or a
 * token that no longer resolves to a user or team (then the session row is deleted).
 */
export async function currentSession(env: Env, request: Request, now = Date.now()): Promise<ConsoleSession | null> {
  const id = readCookie(request.headers, cookieNames(new URL(request.url)).session);
  if (!id || !COOKIE_VALUE.test(id)) return null;
  const db = createDb(env.DB);
  const idHash = await keyedHash(env.KEYWAY_HASH_KEY, SESSION_PURPOSE, id);
  const row = await db
    .select()
    .from(consoleSessions)
    .where(and(eq(consoleSessions.idHash, idHash), gt(consoleSessions.expiresAt, now)))
    .get();
  if (!row) return null;
  const caller = await resolveStoredToken(env, row.tokenHash);
  if (!mayOpenSession(caller)) {
    await db.delete(consoleSessions).where(eq(consoleSessions.idHash, idHash)).run();
    return null;
  }
  return {
    caller,
    csrf: await keyedHash(env.KEYWAY_HASH_KEY, CSRF_PURPOSE, id),
    expiresAt: row.expiresAt,
    sso: null,
  };
}

/** End the request's session (sign-out): its row is deleted, so the cookie opens nothing any more. */
export async function endSession(env: Env, request: Request): Promise<void> {
  const id = readCookie(request.headers, cookieNames(new URL(request.url)).session);
  if (!id || !COOKIE_VALUE.test(id)) return;
  const idHash = await keyedHash(env.KEYWAY_HASH_KEY, SESSION_PURPOSE, id);
  await createDb(env.DB).delete(consoleSessions).where(eq(consoleSessions.idHash, idHash)).run();
}

/** Whether `given` is the session's CSRF token (constant-time comparison). */
export async function csrfMatches(session: ConsoleSession, given: string | undefined): Promise<boolean> {
  if (typeof given !== "string" || given.length !== session.csrf.length) return false;
  return presentedValuesEqual(given, session.csrf);
}

/** The sign-in form's pre-session cookie and the CSRF token the form carries for it. */
export async function signInChallenge(env: Env, request: Request): Promise<{ cookie: string | null; csrf: string }> {
  const names = cookieNames(new URL(request.url));
  const existing = readCookie(request.headers, names.signIn);
  const value = existing && COOKIE_VALUE.test(existing) ? existing : newCookieValue();
  const csrf = await keyedHash(env.KEYWAY_HASH_KEY, SIGN_IN_CSRF_PURPOSE, value);
  return {
    cookie: value === existing ? null : cookieHeader(new URL(request.url), names.signIn, value, SIGN_IN_TTL_SECONDS),
    csrf,
  };
}

/** Whether a sign-in POST carries the CSRF token of its pre-session cookie. */
export async function signInCsrfMatches(env: Env, request: Request, given: string | undefined): Promise<boolean> {
  const value = readCookie(request.headers, cookieNames(new URL(request.url)).signIn);
  if (!value || !COOKIE_VALUE.test(value) || typeof given !== "string") return false;
  return presentedValuesEqual(given, await keyedHash(env.KEYWAY_HASH_KEY, SIGN_IN_CSRF_PURPOSE, value));
}

export { SIGN_IN_TTL_SECONDS };
