/**
 * The single-use sign-in state store and the sign-in rate limiter (decisions B21, S26, S28).
 *
 * One instance per scope: an SSH auth mount (`ssh:<mount accessor>`) or a no-code
 * organization (`nocode:<organization>`), named by `signInStore` in ./sign-in.ts. So the
 * cap on outstanding states and the rate limit, both per mount or per organization, are
 * counted by the one object that holds them, with no cross-object coordination.
 *
 * Storage is the object's own SQLite database:
 *
 *   states(state PK, record, code, expires_at) WITHOUT ROWID
 *   hits(address, at)                              (one row per counted request)
 *
 * - `record` is the caller's JSON (an OIDC flow's nonce, PKCE verifier, redirect URI, …);
 *   this object never reads it.
 * - `code` is set by `attachCode` (OIDC `form_post`, S26): stored without consuming the state.
 * - `expires_at` (ms since the epoch): `consume` never returns an expired state, and the
 *   alarm deletes expired states and hits older than the longest rate window.
 *
 * Every method is a typed RPC method returning a Result-like value; nothing throws across
 * the stub for an expected outcome (as the OTP store does).
 */
import { DurableObject } from "cloudflare:workers";

/** S26: a state lives at most 10 minutes. */
export const MAX_STATE_TTL_MS = 10 * 60_000;
/** S28: at most 10,000 outstanding states per scope. */
export const MAX_OUTSTANDING_STATES = 10_000;
/** A stored record's JSON is at most this long (the caller's own data, never a client's body). */
export const MAX_RECORD_BYTES = 16 * 1024;
/** S28: at most RATE_LIMIT requests per client address in any RATE_WINDOW_MS, per scope. */
export const RATE_LIMIT = 60;
export const RATE_WINDOW_MS = 60_000;
/** What a client chose (a state, a code, an address key) is at most this long. */
const MAX_KEY_LENGTH = 2048;

export type SignInStoreResult<T, E extends string> = { ok: true; value: T } | { ok: false; error: E };

/** `hit`'s refusal: the address has used its RATE_LIMIT requests of the window. */
export interface RateLimited {
  ok: false;
  error: "limited";
  retryAfterSeconds: number;
}

/**
 * What a state carries: named strings (a nonce, a PKCE verifier, a redirect URI, a role or
 * an organization…), stored as JSON text. Flat on purpose: it crosses the RPC boundary.
 */
export type SignInRecord = Record<string, string>;

/** A consumed state: the record it was stored with and the code `attachCode` added, if any. */
export interface ConsumedState {
  /** The record as `put` stored it; the caller knows its shape. */
  record: SignInRecord;
  code: string | null;
}

export class SignInStore extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  /** When the alarm is set for (ms), null for none; kept here so writes need no storage read. */
  private alarmAt: number | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    ctx.blockConcurrencyWhile(async () => {
      this.sql.exec(`CREATE TABLE IF NOT EXISTS states (
        state TEXT PRIMARY KEY,
        record TEXT NOT NULL,
        code TEXT,
        expires_at INTEGER NOT NULL
      ) WITHOUT ROWID`);
      this.sql.exec("CREATE INDEX IF NOT EXISTS states_expires_at ON states (expires_at)");
      this.sql.exec("CREATE TABLE IF NOT EXISTS hits (address TEXT NOT NULL, at INTEGER NOT NULL)");
      this.sql.exec("CREATE INDEX IF NOT EXISTS hits_address_at ON hits (address, at)");
      this.sql.exec("CREATE INDEX IF NOT EXISTS hits_at ON hits (at)");
      this.alarmAt = await ctx.storage.getAlarm();
    });
  }

  /**
   * Store a new state for `ttlMs` (at most 10 minutes). `full` when the scope already has
   * MAX_OUTSTANDING_STATES unexpired states (S28); `collision` when the state exists
   * (the caller draws a new one); `invalid` for an empty or oversized state or record.
   */
  async put(
    state: string,
    record: SignInRecord,
    ttlMs: number,
  ): Promise<SignInStoreResult<null, "full" | "collision" | "invalid">> {
    const json = JSON.stringify(record);
    if (!validKey(state) || json === undefined || json.length > MAX_RECORD_BYTES)
      return { ok: false, error: "invalid" };
    if (!Number.isInteger(ttlMs) || ttlMs <= 0 || ttlMs > MAX_STATE_TTL_MS) return { ok: false, error: "invalid" };
    const now = Date.now();
    // Lazy expiry first, so the cap counts only states that could still be used.
    this.sql.exec("DELETE FROM states WHERE expires_at <= ?", now);
    const outstanding = this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM states").one().n;
    if (outstanding >= MAX_OUTSTANDING_STATES) return { ok: false, error: "full" };
    const expiresAt = now + ttlMs;
    const inserted = this.sql
      .exec(
        "INSERT INTO states (state, record, code, expires_at) VALUES (?, ?, NULL, ?) ON CONFLICT DO NOTHING RETURNING state",
        state,
        json,
        expiresAt,
      )
      .toArray();
    if (inserted.length === 0) return { ok: false, error: "collision" };
    await this.wakeBy(expiresAt);
    return { ok: true, value: null };
  }

  /**
   * Consume-once (S26): read and delete the state in one statement. A Durable Object runs
   * one synchronous SQL statement at a time, so of any number of concurrent callers exactly
   * one gets the record. An expired state is deleted too but reported as not found.
   */
  async consume(state: string): Promise<SignInStoreResult<ConsumedState, "not_found">> {
    if (!validKey(state)) return { ok: false, error: "not_found" };
    const row = this.sql
      .exec<{ record: string; code: string | null; expires_at: number }>(
        "DELETE FROM states WHERE state = ? RETURNING record, code, expires_at",
        state,
      )
      .toArray()[0];
    if (!row || row.expires_at <= Date.now()) return { ok: false, error: "not_found" };
    return { ok: true, value: { record: JSON.parse(row.record) as SignInRecord, code: row.code } };
  }

  /**
   * Store-without-consume (S26's `form_post`): keep `code` with an unexpired state for the
   * GET that follows. A second POST replaces the code (the state is still single-use: only
   * one `consume` can return it). `not_found` for an unknown or expired state.
   */
  async attachCode(state: string, code: string): Promise<SignInStoreResult<null, "not_found" | "invalid">> {
    if (!validKey(code)) return { ok: false, error: "invalid" };
    if (!validKey(state)) return { ok: false, error: "not_found" };
    const updated = this.sql
      .exec("UPDATE states SET code = ? WHERE state = ? AND expires_at > ? RETURNING state", code, state, Date.now())
      .toArray();
    return updated.length > 0 ? { ok: true, value: null } : { ok: false, error: "not_found" };
  }

  /**
   * Count one request of `address` (S28) and answer whether it is within RATE_LIMIT
   * requests in the last RATE_WINDOW_MS. A refused request is not counted, so a client that
   * keeps hammering is admitted again as soon as its oldest counted request leaves the
   * window; `retryAfterSeconds` says when that is. At most RATE_LIMIT rows per address.
   */
  async hit(address: string): Promise<SignInStoreResult<null, "invalid"> | RateLimited> {
    if (!validKey(address)) return { ok: false, error: "invalid" };
    const now = Date.now();
    const windowStart = now - RATE_WINDOW_MS;
    // One statement on the common path: count the window and record this request only when
    // it is within the limit. Rows that left the window are the alarm's to delete (at most
    // one window later, so an address never has more than 2 × RATE_LIMIT rows).
    const counted = this.sql
      .exec(
        `INSERT INTO hits (address, at) SELECT ?, ? WHERE (SELECT count(*) FROM hits WHERE address = ? AND at > ?) < ${RATE_LIMIT} RETURNING at`,
        address,
        now,
        address,
        windowStart,
      )
      .toArray();
    if (counted.length === 0) {
      const oldest =
        this.sql
          .exec<{ oldest: number | null }>(
            "SELECT min(at) AS oldest FROM hits WHERE address = ? AND at > ?",
            address,
            windowStart,
          )
          .one().oldest ?? now;
      const retryAfterSeconds = Math.max(1, Math.ceil((oldest + RATE_WINDOW_MS - now) / 1000));
      return { ok: false, error: "limited", retryAfterSeconds };
    }
    await this.wakeBy(now + RATE_WINDOW_MS);
    return { ok: true, value: null };
  }

  /** Expiry: delete expired states and hits out of the window, then wake at the next expiry. */
  override async alarm(): Promise<void> {
    const now = Date.now();
    this.sql.exec("DELETE FROM states WHERE expires_at <= ?", now);
    this.sql.exec("DELETE FROM hits WHERE at <= ?", now - RATE_WINDOW_MS);
    const next = this.sql
      .exec<{ next: number | null }>(
        `SELECT min(t) AS next FROM (SELECT min(expires_at) AS t FROM states UNION ALL SELECT min(at) + ${RATE_WINDOW_MS} FROM hits)`,
      )
      .one().next;
    this.alarmAt = next;
    if (next !== null) await this.ctx.storage.setAlarm(next);
  }

  /** Make sure the alarm fires no later than `at`. */
  private async wakeBy(at: number): Promise<void> {
    if (this.alarmAt !== null && this.alarmAt <= at) return;
    this.alarmAt = at;
    await this.ctx.storage.setAlarm(at);
  }
}

function validKey(value: unknown): value is string {
  return typeof value === "string" && value.length > 0 && value.length <= MAX_KEY_LENGTH;
}
