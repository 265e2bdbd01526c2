/**
 * D1 queries of auth mounts (S24) and the JWT/OIDC method's config and roles (S25).
 *
 * Logins read the mount, its config and the role through a per-isolate cache (one D1
 * round trip saved per login); every write here drops it in this isolate at once, and
 * other isolates see a write within MOUNT_LOGIN_CONTEXT_TTL_MS. Only found roles are kept,
 * so unauthenticated logins cannot add entries under names they choose (N2b).
 */
import { and, asc, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import {
  authJwtConfigs,
  authJwtRoles,
  authMounts,
  identityEntityAliases,
  identityGroupAliases,
  identityGroupMembers,
  vaultTokens,
} from "../../db/schema/ssh";
import { decryptSecret, encryptSecret } from "../../lib/crypto/kek";
import { IsolateCache, MAX_CACHE_BYTES } from "../../lib/isolate-cache";
import { invalidateTokenContexts } from "../access/token-cache";
import type { AuthMount, JwtConfig, JwtRole } from "./model";

/** How long a login may use a cached (mount, config, role) without re-reading D1. */
const MOUNT_LOGIN_CONTEXT_TTL_MS = 1000;

/** What a login needs: the mount, its config (null until written) and the role (null when absent). */
export interface LoginContext {
  mount: AuthMount;
  config: JwtConfig | null;
  role: JwtRole | null;
}

/**
 * (mount path, role name) → LoginContext. Bounded; the IsolateCache of src/lib is
 * the project's one bounded per-isolate cache.
 */
const loginContexts = new IsolateCache<LoginContext | null>({
  name: "jwt-auth-login-contexts",
  ttlMs: MOUNT_LOGIN_CONTEXT_TTL_MS,
  maxEntries: 1024,
  // Configs vary in size (static keys): the estimated bytes of all entries stay within 4 MiB.
  maxBytes: MAX_CACHE_BYTES,
});

function invalidateLoginContexts(): void {
  loginContexts.clear();
}

function mountFromRow(row: typeof authMounts.$inferSelect): AuthMount {
  return {
    path: row.path,
    type: row.type as AuthMount["type"],
    accessor: row.accessor,
    description: row.description,
    createdAt: row.createdAt,
  };
}

/** Every enabled auth mount, by path. */
export async function listAuthMounts(db: Db): Promise<AuthMount[]> {
  const rows = await db.select().from(authMounts).orderBy(asc(authMounts.path));
  return rows.map(mountFromRow);
}

/** The mount at `path` (below `auth/`), or null. */
export async function findAuthMount(db: Db, path: string): Promise<AuthMount | null> {
  const rows = await db.select().from(authMounts).where(eq(authMounts.path, path)).limit(1);
  return rows[0] ? mountFromRow(rows[0]) : null;
}

/**
 * Insert a mount unless its path is taken, or lies under or above an enabled mount (S24),
 * in one statement, so two concurrent enables of overlapping paths cannot both succeed.
 * False when it was not inserted.
 */
export async function insertAuthMount(db: Db, mount: AuthMount): Promise<boolean> {
  const p = mount.path;
  const rows = await db
    .insert(authMounts)
    .select(
      sql`SELECT ${p}, ${mount.type}, ${mount.accessor}, ${mount.description}, ${mount.createdAt}
          WHERE NOT EXISTS (
            SELECT 1 FROM ${authMounts} m
            WHERE m.path = ${p}
              OR substr(${p}, 1, length(m.path) + 1) = m.path || '/'
              OR substr(m.path, 1, length(${p}) + 1) = ${p} || '/'
          )`,
    )
    .onConflictDoNothing()
    .returning({ path: authMounts.path });
  invalidateLoginContexts();
  return rows.length === 1;
}

/**
 * S24: disable a mount: its config, roles, entity aliases and group aliases go (entities
 * and groups stay, and lose the external memberships the mount's logins set); every token
 * created through it is revoked with its children. One D1 batch (atomic).
 */
export async function deleteAuthMount(db: Db, mount: AuthMount): Promise<void> {
  const accessor = mount.accessor;
  await db.batch([
    db.delete(vaultTokens).where(
      sql`${vaultTokens.accessor} IN (
        WITH RECURSIVE subtree(accessor) AS (
          SELECT accessor FROM vault_tokens WHERE auth_accessor = ${accessor}
          UNION
          SELECT t.accessor FROM vault_tokens t JOIN subtree s ON t.parent_accessor = s.accessor
        )
        SELECT accessor FROM subtree
      )`,
    ),
    db.delete(authJwtRoles).where(eq(authJwtRoles.accessor, accessor)),
    db.delete(authJwtConfigs).where(eq(authJwtConfigs.accessor, accessor)),
    db.delete(identityEntityAliases).where(eq(identityEntityAliases.mountAccessor, accessor)),
    db.delete(identityGroupAliases).where(eq(identityGroupAliases.mountAccessor, accessor)),
    db.delete(identityGroupMembers).where(eq(identityGroupMembers.source, accessor)),
    db.delete(authMounts).where(eq(authMounts.path, mount.path)),
  ]);
  invalidateLoginContexts();
  invalidateTokenContexts();
}

const secretContext = (accessor: string) => `auth-jwt:${accessor}`;

/** The stored config of a mount, or null. */
export async function loadJwtConfig(db: Db, accessor: string): Promise<JwtConfig | null> {
  const rows = await db.select().from(authJwtConfigs).where(eq(authJwtConfigs.accessor, accessor)).limit(1);
  return rows[0] ? (JSON.parse(rows[0].config) as JwtConfig) : null;
}

/** The mount's `oidc_client_secret`, decrypted (for the OIDC code exchange); null when none is stored. */
export async function loadOidcClientSecret(env: Env, db: Db, accessor: string): Promise<string | null> {
  const rows = await db
    .select({ secret: authJwtConfigs.oidcClientSecretEncrypted })
    .from(authJwtConfigs)
    .where(eq(authJwtConfigs.accessor, accessor))
    .limit(1);
  const encrypted = rows[0]?.secret;
  return encrypted ? decryptSecret(env.KEYWAY_KEK, secretContext(accessor), encrypted) : null;
}

/** Replace a mount's config (Vault's config write replaces, it does not merge). */
export async function saveJwtConfig(env: Env, db: Db, accessor: string, config: JwtConfig, secret: string) {
  const encrypted = secret ? await encryptSecret(env.KEYWAY_KEK, secretContext(accessor), secret) : null;
  const row = {
    accessor,
    config: JSON.stringify(config),
    oidcClientSecretEncrypted: encrypted,
    updatedAt: Date.now(),
  };
  await db
    .insert(authJwtConfigs)
    .values(row)
    .onConflictDoUpdate({
      target: authJwtConfigs.accessor,
      set: { config: row.config, oidcClientSecretEncrypted: row.oidcClientSecretEncrypted, updatedAt: row.updatedAt },
    });
  invalidateLoginContexts();
}

export async function loadJwtRole(db: Db, accessor: string, name: string): Promise<JwtRole | null> {
  const rows = await db
    .select({ role: authJwtRoles.role })
    .from(authJwtRoles)
    .where(and(eq(authJwtRoles.accessor, accessor), eq(authJwtRoles.name, name)))
    .limit(1);
  return rows[0] ? (JSON.parse(rows[0].role) as JwtRole) : null;
}

/** The role `name` of the mount at `mountPath` (below `auth/`), or null: one statement. */
export async function loadJwtRoleAt(db: Db, mountPath: string, name: string): Promise<JwtRole | null> {
  const rows = await db
    .select({ role: authJwtRoles.role })
    .from(authMounts)
    .innerJoin(authJwtRoles, and(eq(authJwtRoles.accessor, authMounts.accessor), eq(authJwtRoles.name, name)))
    .where(eq(authMounts.path, mountPath))
    .limit(1);
  return rows[0] ? (JSON.parse(rows[0].role) as JwtRole) : null;
}

export async function saveJwtRole(db: Db, accessor: string, name: string, role: JwtRole): Promise<void> {
  const row = { accessor, name, role: JSON.stringify(role), updatedAt: Date.now() };
  await db
    .insert(authJwtRoles)
    .values(row)
    .onConflictDoUpdate({
      target: [authJwtRoles.accessor, authJwtRoles.name],
      set: { role: row.role, updatedAt: row.updatedAt },
    });
  invalidateLoginContexts();
}

export async function deleteJwtRole(db: Db, accessor: string, name: string): Promise<void> {
  await db.delete(authJwtRoles).where(and(eq(authJwtRoles.accessor, accessor), eq(authJwtRoles.name, name)));
  invalidateLoginContexts();
}

export async function listJwtRoles(db: Db, accessor: string): Promise<string[]> {
  const rows = await db
    .select({ name: authJwtRoles.name })
    .from(authJwtRoles)
    .where(eq(authJwtRoles.accessor, accessor))
    .orderBy(asc(authJwtRoles.name));
  return rows.map((r) => r.name);
}

/**
 * The mount at `path`, its config and the role `roleName` (or, when empty, the config's
 * `default_role`), in one D1 round trip, through the per-isolate cache. Null when no mount
 * is at `path`.
 */
export async function loadLoginContext(db: Db, path: string, roleName: string): Promise<LoginContext | null> {
  const load = async (): Promise<LoginContext | null> => {
    // The role named, or else the config's default_role: one statement.
    const wanted = sql`CASE WHEN ${roleName} <> '' THEN ${roleName} ELSE json_extract(${authJwtConfigs.config}, '$.default_role') END`;
    const rows = await db
      .select({ mount: authMounts, config: authJwtConfigs.config, role: authJwtRoles.role })
      .from(authMounts)
      .leftJoin(authJwtConfigs, eq(authJwtConfigs.accessor, authMounts.accessor))
      .leftJoin(authJwtRoles, and(eq(authJwtRoles.accessor, authMounts.accessor), eq(authJwtRoles.name, wanted)))
      .where(eq(authMounts.path, path))
      .limit(1);
    const row = rows[0];
    if (!row) return null;
    return {
      mount: mountFromRow(row.mount),
      config: row.config ? (JSON.parse(row.config) as JwtConfig) : null,
      role: row.role ? (JSON.parse(row.role) as JwtRole) : null,
    };
  };
  return loginContexts.get(`${path}\u0000${roleName}`, load, { keep: (c) => c !== null && c.role !== null });
}
