/**
 * Stored ACL policies (decision S5a): the queries of `sys/policies/acl/*`. A row holds the
 * policy's text and its parsed rules (B8: together at most one D1 row).
 */
import { asc, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { vaultPolicies } from "../../db/schema/ssh";

export interface PolicyRow {
  name: string;
  policy: string;
  rules: string;
  updatedAt: number;
}

/** The stored policy with this name; null when absent. */
export async function findPolicy(db: Db, name: string): Promise<{ name: string; policy: string } | null> {
  const rows = await db
    .select({ name: vaultPolicies.name, policy: vaultPolicies.policy })
    .from(vaultPolicies)
    .where(eq(vaultPolicies.name, name))
    .limit(1);
  return rows[0] ?? null;
}

/** Creates or replaces a policy. */
export async function savePolicy(db: Db, row: PolicyRow): Promise<void> {
  await db
    .insert(vaultPolicies)
    .values(row)
    .onConflictDoUpdate({
      target: vaultPolicies.name,
      set: { policy: row.policy, rules: row.rules, updatedAt: row.updatedAt },
    });
}

/** Deletes a policy (nothing when absent). */
export async function deletePolicy(db: Db, name: string): Promise<void> {
  await db.delete(vaultPolicies).where(eq(vaultPolicies.name, name));
}

/** The names of every stored policy, in order. */
export async function policyNames(db: Db): Promise<string[]> {
  const rows = await db.select({ name: vaultPolicies.name }).from(vaultPolicies).orderBy(asc(vaultPolicies.name));
  return rows.map((r) => r.name);
}
