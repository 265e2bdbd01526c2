/**
 * The Durable Object that holds one-time passwords (decision S13).
 *
 * Each instance is one shard of one mount (see shard.ts): the Worker picks the instance
 * from the OTP's keyed hash, so the OTP itself never reaches this object, and nothing
 * here can turn a stored row back into an OTP (decision B2).
 *
 * Storage is the object's own SQLite database:
 *
 *   otps(hash PK, lease_key UNIQUE, role_name, username, ip, expires_at) WITHOUT ROWID
 *
 * - `hash` is hex HMAC-SHA-256 of the OTP under KEYWAY_HASH_KEY (purpose `ssh-otp:<mount>`);
 * - `lease_key` is the last segment of the lease id `<mount>/creds/<role>/<lease_key>`,
 *   the index that lets `sys/leases/revoke` find the row without the OTP;
 * - `expires_at` (ms since the epoch) is the end of the lease; an alarm deletes expired
 *   rows, and `consume` never returns one even if the alarm has not run yet.
 *
 * Every method is a typed RPC method returning a Result-like value; nothing throws across
 * the stub for an expected outcome.
 */
import { DurableObject } from "cloudflare:workers";

/** What a verified OTP was issued for (Vault's path_verify.go). */
export interface OtpGrant {
  roleName: string;
  username: string;
  ip: string;
}

/** A new OTP as the store keeps it. */
export interface OtpEntry extends OtpGrant {
  /** Keyed hash of the OTP (hex). */
  hash: string;
  leaseKey: string;
  /** End of the lease, ms since the epoch. */
  expiresAt: number;
}

export type OtpStoreResult<T, E extends string> = { ok: true; value: T } | { ok: false; error: E };

export class OtpStore extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  /** When the alarm is set for (ms), null for none; kept here so `put` needs no storage read. */
  private alarmAt: number | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    // Synchronous SQL inside blockConcurrencyWhile: no request runs before the table exists.
    // WITHOUT ROWID keeps rows in the hash's own B-tree, so each put and consume updates
    // three B-trees instead of four. Shards created before this layout keep their rowid
    // table; every statement below reads and writes both layouts alike.
    ctx.blockConcurrencyWhile(async () => {
      this.sql.exec(`CREATE TABLE IF NOT EXISTS otps (
        hash TEXT PRIMARY KEY,
        lease_key TEXT NOT NULL UNIQUE,
        role_name TEXT NOT NULL,
        username TEXT NOT NULL,
        ip TEXT NOT NULL,
        expires_at INTEGER NOT NULL
      ) WITHOUT ROWID`);
      this.sql.exec("CREATE INDEX IF NOT EXISTS otps_expires_at ON otps (expires_at)");
      this.alarmAt = await ctx.storage.getAlarm();
    });
  }

  /**
   * Store a new OTP. `collision` when its hash or lease key is already present (the
   * caller draws a new OTP, as Vault does on a salted-hash collision, Vault's path_creds_create.go).
   */
  async put(entry: OtpEntry): Promise<OtpStoreResult<null, "collision">> {
    const inserted = this.sql
      .exec(
        `INSERT INTO otps (hash, lease_key, role_name, username, ip, expires_at)
         VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING hash`,
        entry.hash,
        entry.leaseKey,
        entry.roleName,
        entry.username,
        entry.ip,
        entry.expiresAt,
      )
      .toArray();
    if (inserted.length === 0) return { ok: false, error: "collision" };
    if (this.alarmAt === null || this.alarmAt > entry.expiresAt) {
      this.alarmAt = entry.expiresAt;
      await this.ctx.storage.setAlarm(entry.expiresAt);
    }
    return { ok: true, value: null };
  }

  /**
   * Verify-once (S13): read and delete the OTP in one statement. A Durable Object runs
   * one synchronous SQL statement at a time, so of any number of concurrent callers
   * exactly one gets the row. An expired row is deleted too but reported as not found.
   */
  async consume(hash: string): Promise<OtpStoreResult<OtpGrant, "not_found">> {
    const rows = this.sql
      .exec<{ role_name: string; username: string; ip: string; expires_at: number }>(
        "DELETE FROM otps WHERE hash = ? RETURNING role_name, username, ip, expires_at",
        hash,
      )
      .toArray();
    const row = rows[0];
    if (!row || row.expires_at <= Date.now()) return { ok: false, error: "not_found" };
    return { ok: true, value: { roleName: row.role_name, username: row.username, ip: row.ip } };
  }

  /**
   * Lease revocation (S13): delete the OTP of lease `<mount>/creds/<role>/<leaseKey>`.
   * The role must match too, so a lease id with another role's name revokes nothing.
   * `not_found` when there was nothing to delete (already verified, expired, or revoked).
   */
  async revoke(leaseKey: string, roleName: string): Promise<OtpStoreResult<null, "not_found">> {
    const rows = this.sql
      .exec("DELETE FROM otps WHERE lease_key = ? AND role_name = ? RETURNING hash", leaseKey, roleName)
      .toArray();
    return rows.length > 0 ? { ok: true, value: null } : { ok: false, error: "not_found" };
  }

  /** Lease expiry (S13): delete every expired OTP, then wake again at the next expiry. */
  override async alarm(): Promise<void> {
    this.sql.exec("DELETE FROM otps WHERE expires_at <= ?", Date.now());
    const next = this.sql.exec<{ next: number | null }>("SELECT min(expires_at) AS next FROM otps").one().next;
    this.alarmAt = next;
    if (next !== null) await this.ctx.storage.setAlarm(next);
  }
}
