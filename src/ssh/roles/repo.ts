/**
 * Role storage in D1. Writing a role also rewrites its rows in the CIDR index that
 * `lookup` reads (S14), in one batch so the two never disagree.
 */
import { and, asc, eq, sql } from "drizzle-orm";
import { type Db, nonEmptyBatch } from "../../db/client";
import { sshRoleCidrs, sshRoles, sshZeroAddress } from "../../db/schema/ssh";
import { parseCidr } from "../../lib/net/ip";
import { invalidateMountContexts } from "../context-cache";
import { defaultRole, type Role } from "./model";

/** Read one role; null when absent. */
export async function getRole(db: Db, mount: string, name: string): Promise<Role | null> {
  const rows = await roleQuery(db, mount, name);
  return roleFromRows(rows);
}

/**
 * The select behind getRole, for callers that put it in a `db.batch` with other reads
 * (sign and issue read role, CA and mount TTLs in one round trip). Decode with roleFromRows.
 */
export function roleQuery(db: Db, mount: string, name: string) {
  return db
    .select({ config: sshRoles.config })
    .from(sshRoles)
    .where(and(eq(sshRoles.mount, mount), eq(sshRoles.name, name)))
    .limit(1);
}

/** Decode roleQuery's rows. Fields added to Role later read as their defaults. */
export function roleFromRows(rows: { config: string }[]): Role | null {
  const row = rows[0];
  if (!row) return null;
  const stored = JSON.parse(row.config) as Role;
  return { ...defaultRole(stored.name, stored.keyType), ...stored };
}

/** Create or fully replace a role (Vault's POST semantics) and its CIDR index rows. */
export async function putRole(db: Db, mount: string, role: Role): Promise<void> {
  const cidrRows = role.keyType === "otp" ? cidrIndexRows(mount, role) : [];
  const statements = [
    db
      .insert(sshRoles)
      .values({ mount, name: role.name, keyType: role.keyType, config: JSON.stringify(role), updatedAt: Date.now() })
      .onConflictDoUpdate({
        target: [sshRoles.mount, sshRoles.name],
        set: { keyType: role.keyType, config: JSON.stringify(role), updatedAt: Date.now() },
      }),
    db.delete(sshRoleCidrs).where(and(eq(sshRoleCidrs.mount, mount), eq(sshRoleCidrs.role, role.name))),
    // D1 limits bound parameters per statement; 5 columns × 16 rows stays well inside.
    ...chunk(cidrRows, 16).map((rows) => db.insert(sshRoleCidrs).values(rows)),
  ];
  await db.batch(nonEmptyBatch(statements));
  invalidateMountContexts(mount);
}

/**
 * Delete a role and its CIDR index rows. Deleting an absent role is not an error. As in
 * Vault (Vault's path_roles.go) the name also leaves the mount's zero-address list, in the same
 * batch; a list that becomes empty stays as `[]`.
 */
export async function deleteRole(db: Db, mount: string, name: string): Promise<void> {
  await db.batch([
    db.delete(sshRoles).where(and(eq(sshRoles.mount, mount), eq(sshRoles.name, name))),
    db.delete(sshRoleCidrs).where(and(eq(sshRoleCidrs.mount, mount), eq(sshRoleCidrs.role, name))),
    db
      .update(sshZeroAddress)
      .set({
        roles: sql`(SELECT json_group_array(value) FROM json_each(${sshZeroAddress.roles}) WHERE value <> ${name})`,
      })
      .where(eq(sshZeroAddress.mount, mount)),
  ]);
  invalidateMountContexts(mount);
}

/** Names, key types and issuer references (S20) of every role of a mount, sorted by name (byte order). */
export async function listRoles(
  db: Db,
  mount: string,
): Promise<{ name: string; keyType: string; issuerRef: string }[]> {
  return db
    .select({
      name: sshRoles.name,
      keyType: sshRoles.keyType,
      // Roles stored before S20 have no issuerRef: they sign with the default issuer.
      issuerRef: sql<string>`coalesce(json_extract(${sshRoles.config}, '$.issuerRef'), 'default')`,
    })
    .from(sshRoles)
    .where(eq(sshRoles.mount, mount))
    .orderBy(asc(sshRoles.name));
}

function cidrIndexRows(mount: string, role: Role) {
  const rows: (typeof sshRoleCidrs.$inferInsert)[] = [];
  for (const [list, included] of [
    [role.cidrList, true],
    [role.excludeCidrList, false],
  ] as const) {
    for (const block of list) {
      const range = parseCidr(block);
      if (range) rows.push({ mount, role: role.name, included, rangeStart: range.start, rangeEnd: range.end });
    }
  }
  return rows;
}

function chunk<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
