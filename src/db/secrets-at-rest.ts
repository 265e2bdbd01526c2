/**
 * Every secret stored encrypted under KEYWAY_KEK (B2), in one list, and their rewrap
 * (decision B11): `POST /v1/sys/rotate/rewrap` re-encrypts, under
 * KEYWAY_KEK's first (primary) key, at most REWRAP_BATCH of the ciphertexts still under
 * another listed key, and counts the secrets left under any other key. Once that count is
 * 0, an old key may be removed from KEYWAY_KEK.
 *
 * Both wings store secrets, so the list lives here, beside the schema, not in a wing:
 * - `ssh_issuers.private_key_encrypted`, context `ssh-ca:<mount>` (src/ssh/issuers/keys.ts);
 * - `workspace_vars.value_encrypted`, context `workspace-var:<var id>`
 *   (src/nocode/workspaces/vars.ts);
 * - `auth_jwt_configs.oidc_client_secret_encrypted`, context `auth-jwt:<accessor>`
 *   (src/ssh/jwt-auth/repo.ts);
 * - the pending sensitive vars of an upgrade run, `runs.configuration` →
 *   `$.varChanges[*].valueEncrypted`, same context (src/nocode/upgrade/vars.ts);
 * - N18: the variables an agent receives for a run, `runs.agent_inputs`, context
 *   `run-inputs:<run id>` (src/nocode/agents/inputs.ts);
 * - N16: an organization's SSO client secret, `sso_configurations.client_secret_encrypted`,
 *   context `sso-client-secret:<organization>` (src/nocode/sso/repo.ts);
 * - N20: the data keys of run data in R2, `run_data_objects.data_key_encrypted`, context
 *   `data-key:<object id>` (src/nocode/agents/run-data.ts): rewrapping a data key never
 *   touches the R2 object it opens.
 * A new encrypted column must be added here in the same change (its test enumerates them).
 *
 * Every write is a compare-and-swap on the old ciphertext, so a value written meanwhile
 * (by a request on any isolate) is never replaced by an older one.
 */

import { decryptSecret, encryptSecret, keyring } from "../lib/crypto/kek";
import { IsolateCache } from "../lib/isolate-cache";
import { logError } from "../lib/log";

/** Most secrets re-encrypted by one call (B11), so one call stays within a request's limits. */
export const REWRAP_BATCH = 500;

/** One encrypted column whose row has a single-column key. */
interface EncryptedColumn {
  table: string;
  key: string;
  column: string;
  /** The column whose value names the AES-GCM context (default: the key column). */
  contextColumn?: string;
  context: (value: string) => string;
}

export const ENCRYPTED_COLUMNS: readonly EncryptedColumn[] = [
  // An issuer's key is bound to its mount (S20 kept the former single CA's context).
  {
    table: "ssh_issuers",
    key: "id",
    column: "private_key_encrypted",
    contextColumn: "mount",
    context: (mount) => `ssh-ca:${mount}`,
  },
  { table: "workspace_vars", key: "id", column: "value_encrypted", context: (id) => `workspace-var:${id}` },
  // A JWT/OIDC auth mount's client secret is bound to the mount's accessor (S25).
  {
    table: "auth_jwt_configs",
    key: "accessor",
    column: "oidc_client_secret_encrypted",
    context: (accessor) => `auth-jwt:${accessor}`,
  },
  { table: "runs", key: "id", column: "agent_inputs", context: (id) => `run-inputs:${id}` },
  // N16: an organization's SSO client secret is bound to the organization.
  {
    table: "sso_configurations",
    key: "organization",
    column: "client_secret_encrypted",
    context: (organization) => `sso-client-secret:${organization}`,
  },
  { table: "run_data_objects", key: "id", column: "data_key_encrypted", context: (id) => `data-key:${id}` },
];

/** The AES-GCM context of a pending var change (the var id it will have, as workspace_vars). */
const pendingVarContext = (varId: string) => `workspace-var:${varId}`;

/** SQL that is true when `expr` (a ciphertext) starts with one of `prefixes`, and its parameters. */
function startsWithAny(expr: string, prefixes: string[]): { sql: string; params: (string | number)[] } {
  if (prefixes.length === 0) return { sql: "0", params: [] };
  return {
    sql: `(${prefixes.map(() => `substr(${expr}, 1, ?) = ?`).join(" OR ")})`,
    params: prefixes.flatMap((p) => [p.length, p]),
  };
}

/** Ciphertext prefixes of KEYWAY_KEK's keys: the primary's, and the others' (still decryptable). */
function prefixesOf(secret: string): { primary: string; older: string[] } {
  const ring = keyring(secret);
  return {
    primary: `v1.${ring.primaryId}.`,
    older: [...ring.keys.keys()].filter((id) => id !== ring.primaryId).map((id) => `v1.${id}.`),
  };
}

/**
 * `ciphertext` re-encrypted under the primary key, or null when it does not decrypt (an
 * altered value: left as is and still counted as remaining, never a failed call).
 */
async function reencrypt(secret: string, context: string, ciphertext: string): Promise<string | null> {
  let plaintext: string;
  try {
    plaintext = await decryptSecret(secret, context, ciphertext);
  } catch {
    return null;
  }
  return encryptSecret(secret, context, plaintext);
}

/** Replace a ciphertext only if it is still the one read (a newer write wins). */
function casUpdate(db: D1Database, col: EncryptedColumn, key: string, old: string, fresh: string): D1PreparedStatement {
  return db
    .prepare(`UPDATE ${col.table} SET ${col.column} = ? WHERE ${col.key} = ? AND ${col.column} = ?`)
    .bind(fresh, key, old);
}

/**
 * B11 on read: re-encrypt one stored secret found under an older key, if it still holds
 * that ciphertext. Meant for `waitUntil`; it never throws (a failure leaves the old
 * ciphertext, which still decrypts, for the next read or `sys/rotate/rewrap`).
 *
 * @example
 * if (needsRewrap(env.KEYWAY_KEK, row.privateKeyEncrypted)) waitUntil(rewrapStoredSecret(env, "ssh_issuers", row.id, row.privateKeyEncrypted, row.mount));
 */
export async function rewrapStoredSecret(
  env: Pick<Env, "DB" | "KEYWAY_KEK">,
  table: string,
  key: string,
  ciphertext: string,
  contextValue: string = key,
): Promise<void> {
  // Concurrent reads of one stale secret in this isolate schedule one rewrap, not one each.
  const slot = `${table}\u0000${key}\u0000${ciphertext}`;
  if (rewrapsUnderWay.peek(slot)) return;
  rewrapsUnderWay.set(slot, true);
  try {
    const col = ENCRYPTED_COLUMNS.find((c) => c.table === table);
    if (!col) throw new Error(`no encrypted column in table ${table}`);
    const fresh = await reencrypt(env.KEYWAY_KEK, col.context(contextValue), ciphertext);
    if (fresh) await casUpdate(env.DB, col, key, ciphertext, fresh).run();
  } catch (err) {
    logError("rewrap", `rewrap of a ${table} secret failed`, err);
  } finally {
    rewrapsUnderWay.delete(slot);
  }
}

/**
 * Rewraps on read under way in this isolate (B18: bounded; an evicted slot only lets a
 * second, idempotent rewrap of the same secret start).
 */
const rewrapsUnderWay = new IsolateCache<true>({ name: "rewraps-under-way", maxEntries: 1024 });

export interface RewrapResult {
  /** Secrets re-encrypted under the primary key by this call. */
  rewrapped: number;
  /** Secrets still under another key than the primary (listed or not). */
  remaining: number;
  /** Secrets under a key id KEYWAY_KEK no longer lists: they cannot be rewrapped. */
  unknownKey: number;
}

/**
 * Re-encrypt up to `limit` secrets under the primary key, then count what is left.
 *
 * @example
 * const { rewrapped, remaining } = await rewrapSecrets(env);
 */
export async function rewrapSecrets(
  env: Pick<Env, "DB" | "KEYWAY_KEK">,
  limit: number = REWRAP_BATCH,
): Promise<RewrapResult> {
  const { primary, older } = prefixesOf(env.KEYWAY_KEK);
  /** Compare-and-swap writes, each with the number of secrets it re-encrypts. */
  const writes: { statement: D1PreparedStatement; secrets: number }[] = [];
  let planned = 0;

  for (const col of ENCRYPTED_COLUMNS) {
    if (planned >= limit) break;
    const stale = startsWithAny(col.column, older);
    const { results } = await env.DB.prepare(
      `SELECT ${col.key} AS k, ${col.contextColumn ?? col.key} AS ctx, ${col.column} AS c FROM ${col.table} WHERE ${stale.sql} LIMIT ?`,
    )
      .bind(...stale.params, limit - planned)
      .all<{ k: string; ctx: string; c: string }>();
    for (const row of results) {
      const fresh = await reencrypt(env.KEYWAY_KEK, col.context(row.ctx), row.c);
      if (!fresh) continue;
      writes.push({ statement: casUpdate(env.DB, col, row.k, row.c, fresh), secrets: 1 });
      planned++;
    }
  }

  // Pending var changes of upgrade runs: each run's configuration is rewritten whole.
  if (planned < limit) {
    const stale = startsWithAny("json_extract(j.value, '$.valueEncrypted')", older);
    const { results } = await env.DB.prepare(
      `SELECT r.id AS id, r.configuration AS configuration FROM runs r WHERE EXISTS (SELECT 1 FROM json_each(r.configuration, '$.varChanges') j WHERE ${stale.sql}) LIMIT ?`,
    )
      .bind(...stale.params, limit - planned)
      .all<{ id: string; configuration: string }>();
    for (const run of results) {
      const configuration = JSON.parse(run.configuration) as {
        varChanges?: { id: string; valueEncrypted?: string | null }[];
      };
      let secrets = 0;
      for (const change of configuration.varChanges ?? []) {
        const ct = change.valueEncrypted;
        if (!ct || !older.some((p) => ct.startsWith(p))) continue;
        const fresh = await reencrypt(env.KEYWAY_KEK, pendingVarContext(change.id), ct);
        if (!fresh) continue;
        change.valueEncrypted = fresh;
        secrets++;
      }
      if (secrets === 0) continue;
      // A run is rewritten whole: one that would pass the limit waits for the next call
      // (unless it alone holds more than the limit, which must still make progress).
      if (planned > 0 && planned + secrets > limit) break;
      const statement = env.DB.prepare("UPDATE runs SET configuration = ? WHERE id = ? AND configuration = ?").bind(
        JSON.stringify(configuration),
        run.id,
        run.configuration,
      );
      writes.push({ statement, secrets });
      planned += secrets;
      if (planned >= limit) break;
    }
  }

  let rewrapped = 0;
  if (writes.length > 0) {
    const results = await env.DB.batch(writes.map((w) => w.statement));
    results.forEach((result, i) => {
      if ((result.meta.changes ?? 0) > 0) rewrapped += writes[i]!.secrets;
    });
  }
  const counts = await countNotUnderPrimary(env.DB, primary, older);
  return { rewrapped, ...counts };
}

/** Secrets not under the primary key, and among them those under no listed key. */
async function countNotUnderPrimary(
  db: D1Database,
  primary: string,
  older: string[],
): Promise<{ remaining: number; unknownKey: number }> {
  const statements: D1PreparedStatement[] = [];
  const count = (expr: string, from: string) => {
    const notPrimary = startsWithAny(expr, [primary]);
    const listed = startsWithAny(expr, [primary, ...older]);
    statements.push(
      db
        .prepare(
          `SELECT count(*) AS remaining, coalesce(sum(CASE WHEN ${listed.sql} THEN 0 ELSE 1 END), 0) AS unknown FROM ${from} WHERE ${expr} IS NOT NULL AND NOT ${notPrimary.sql}`,
        )
        .bind(...listed.params, ...notPrimary.params),
    );
  };
  for (const col of ENCRYPTED_COLUMNS) count(col.column, col.table);
  count("json_extract(j.value, '$.valueEncrypted')", "runs r, json_each(r.configuration, '$.varChanges') j");
  let remaining = 0;
  let unknownKey = 0;
  for (const result of await db.batch<{ remaining: number; unknown: number }>(statements)) {
    remaining += result.results[0]?.remaining ?? 0;
    unknownKey += result.results[0]?.unknown ?? 0;
  }
  return { remaining, unknownKey };
}
