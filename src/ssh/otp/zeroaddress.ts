/**
 * `config/zeroaddress` (Vault's path_config_zeroaddress.go): OTP roles that accept any IP.
 * The list is stored per mount as a JSON array, in the order written (no merge, no
 * de-duplication, as Vault).
 *
 * Deleting a role removes it from the list (Vault's path_roles.go); the roles repository does
 * that in the same batch as the deletion (`deleteRole`). Every change drops the mount's
 * cached creds contexts, its cached list and lookup answers (context-cache.ts), which hold the list.
 */
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { sshRoles, sshZeroAddress } from "../../db/schema/ssh";
import { invalidateMountContexts, mountContextCache } from "../context-cache";
import { badRequest, notFound } from "../errors";
import { parseFields, unknownFieldWarnings } from "../fields";
import { vaultJson, vaultNoContent } from "../respond";
import type { VaultRequest } from "../router";

/** The stored list of a mount; null when not configured. */
export async function readZeroAddress(db: Db, mount: string): Promise<string[] | null> {
  return zeroAddressFromRows(await zeroAddressQuery(db, mount));
}

/** Each mount's list, per isolate for 1 s (context-cache.ts); every change below drops it at once here. */
const zeroAddressLists = mountContextCache<string[] | null>();

/**
 * The list as readZeroAddress reads it, from the per-isolate cache (for authenticated
 * readers on a hot path: lookup). The value is shared: callers must not change it.
 */
export function readZeroAddressCached(db: Db, mount: string): Promise<string[] | null> {
  // The key within the mount is empty: this cache holds one list per mount.
  return zeroAddressLists.get(mount, "", () => readZeroAddress(db, mount));
}

/** The select behind readZeroAddress, for callers that batch it with other reads. */
export function zeroAddressQuery(db: Db, mount: string) {
  return db
    .select({ roles: sshZeroAddress.roles })
    .from(sshZeroAddress)
    .where(eq(sshZeroAddress.mount, mount))
    .limit(1);
}

/** Decode zeroAddressQuery's rows: the list, or null when not configured. */
export function zeroAddressFromRows(rows: { roles: string }[]): string[] | null {
  const row = rows[0];
  return row ? (JSON.parse(row.roles) as string[]) : null;
}

async function existingRoles(db: Db, mount: string, names: string[]): Promise<Set<string>> {
  const unique = [...new Set(names)];
  // One statement with two bound parameters however long the list (B8: D1 allows 100).
  const rows = await db
    .select({ name: sshRoles.name })
    .from(sshRoles)
    .where(
      and(eq(sshRoles.mount, mount), sql`${sshRoles.name} IN (SELECT value FROM json_each(${JSON.stringify(unique)}))`),
    );
  return new Set(rows.map((r) => r.name));
}

/** GET config/zeroaddress: 404 `{"errors":[]}` until configured. */
export async function readZeroAddressHandler(req: VaultRequest): Promise<Response> {
  const roles = await readZeroAddress(req.db, req.mount);
  if (roles === null) throw notFound();
  return vaultJson(req, { data: { roles } });
}

/** POST config/zeroaddress `{roles}`: replaces the list; every role must exist. */
/** The fields `config/zeroaddress` takes. */
export const ZERO_ADDRESS_FIELDS = { roles: { type: "commaList" } } as const;

export async function writeZeroAddressHandler(req: VaultRequest): Promise<Response> {
  const f = parseFields(req.body, ZERO_ADDRESS_FIELDS);
  const roles = f.values.roles as string[];
  if (roles.length === 0) throw badRequest("Missing roles");
  const existing = await existingRoles(req.db, req.mount, roles);
  for (const name of roles) {
    // Go's %q quoting: JSON string syntax agrees with it for quotes, backslashes and text.
    if (!existing.has(name)) throw badRequest(`Role ${JSON.stringify(name)} does not exist`);
  }
  await req.db
    .insert(sshZeroAddress)
    .values({ mount: req.mount, roles: JSON.stringify(roles) })
    .onConflictDoUpdate({ target: sshZeroAddress.mount, set: { roles: JSON.stringify(roles) } });
  invalidateMountContexts(req.mount);
  return vaultNoContent(req, unknownFieldWarnings(f.unknown));
}

/** DELETE config/zeroaddress: always 204. */
export async function deleteZeroAddressHandler(req: VaultRequest): Promise<Response> {
  await req.db.delete(sshZeroAddress).where(eq(sshZeroAddress.mount, req.mount));
  invalidateMountContexts(req.mount);
  return vaultNoContent(req);
}
