/**
 * The token store's queries (decisions S5, S5a, S5b): the D1 statements tokens.ts runs and
 * batches, and the store's accessor.
 */
import { eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { identityEntities, vaultSettings, vaultTokens } from "../../db/schema/ssh";
import { randomBytes, toHex } from "../../lib/bytes";

export type TokenRow = typeof vaultTokens.$inferSelect;

export interface EntityPoliciesRow {
  policies: string;
  disabled: boolean;
}

/** The row of the token with this id (the keyed hash of a presented token). */
export function tokenRowQuery(db: Db, id: string) {
  return db.select().from(vaultTokens).where(eq(vaultTokens.id, id)).limit(1);
}

/** Policies and state of the entity of the token with this id; no row when it has none. */
export function tokenEntityQuery(db: Db, id: string) {
  return db
    .select({ policies: identityEntities.policies, disabled: identityEntities.disabled })
    .from(vaultTokens)
    .innerJoin(identityEntities, eq(identityEntities.id, vaultTokens.entityId))
    .where(eq(vaultTokens.id, id))
    .limit(1);
}

/**
 * Expiry times of a token's ancestors, from `parentAccessor` up to the token created by
 * root (S5b: a child never outlives any of them). One statement, one bound parameter.
 */
export function ancestorsQuery(db: Db, parentAccessor: string) {
  return db
    .select({ accessor: vaultTokens.accessor, expireAt: vaultTokens.expireAt })
    .from(vaultTokens)
    .where(
      sql`${vaultTokens.accessor} IN (
        WITH RECURSIVE chain(accessor) AS (
          SELECT ${parentAccessor}
          UNION
          SELECT t.parent_accessor FROM vault_tokens t JOIN chain c ON t.accessor = c.accessor
          WHERE t.parent_accessor IS NOT NULL
        )
        SELECT accessor FROM chain
      )`,
    );
}

/** The token store's accessor, `auth_token_<8 hex>` (S5a), created once and kept in D1. */
export async function tokenStoreAccessor(db: Db): Promise<string> {
  const key = "token_store_accessor";
  const existing = await settingValue(db, key);
  if (existing !== null) return existing;
  const value = `auth_token_${toHex(randomBytes(4))}`;
  await db.insert(vaultSettings).values({ key, value }).onConflictDoNothing();
  return (await settingValue(db, key)) ?? value;
}

async function settingValue(db: Db, key: string): Promise<string | null> {
  const rows = await db
    .select({ value: vaultSettings.value })
    .from(vaultSettings)
    .where(eq(vaultSettings.key, key))
    .limit(1);
  return rows[0]?.value ?? null;
}

/** Whether an identity entity has this id. */
export async function entityExists(db: Db, id: string): Promise<boolean> {
  const rows = await db
    .select({ id: identityEntities.id })
    .from(identityEntities)
    .where(eq(identityEntities.id, id))
    .limit(1);
  return rows.length > 0;
}

/** Deletes the row of the token with this id, if there is one. */
export async function deleteTokenRow(db: Db, id: string): Promise<void> {
  await db.delete(vaultTokens).where(eq(vaultTokens.id, id));
}

/**
 * Reads one row of the token store, a table every request of the service needs: it fails
 * when D1 is unreachable and when the database lacks Keyway's schema (migrations not
 * applied), either of which leaves the service unable to answer (sys/health's probe).
 */
export async function probeTokenStore(db: Db): Promise<void> {
  await db.select({ one: sql`1` }).from(vaultTokens).limit(1).get();
}
