/**
 * The queries of identity entities and their aliases (decisions S24, S27): the rows behind
 * `identity/entity*` and `identity/entity-alias`, and the entity a signing request's
 * templates read.
 */
import { and, asc, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { authMounts, identityEntities, identityEntityAliases, identityGroupMembers } from "../../db/schema/ssh";
import { MAX_GROUP_DEPTH } from "../access/acl";

/** An entity with its aliases, as identity templates see it. */
export interface Entity {
  id: string;
  name: string;
  metadata: Record<string, string>;
  policies: string[];
  disabled: boolean;
  createdAt: number;
  updatedAt: number;
  aliases: EntityAlias[];
}

interface EntityAlias {
  id: string;
  name: string;
  canonicalId: string;
  mountAccessor: string;
  metadata: Record<string, string>;
  createdAt: number;
}

type EntityRow = typeof identityEntities.$inferSelect;

/** Load an entity (with aliases) by id; null when absent. */
export async function loadEntity(db: Db, id: string): Promise<Entity | null> {
  const row = (await db.select().from(identityEntities).where(eq(identityEntities.id, id)).limit(1))[0];
  if (!row) return null;
  const aliases = await db.select().from(identityEntityAliases).where(eq(identityEntityAliases.canonicalId, id));
  return {
    id: row.id,
    name: row.name,
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    policies: JSON.parse(row.policies) as string[],
    disabled: row.disabled,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    aliases: aliases.map((a) => ({
      id: a.id,
      name: a.name,
      canonicalId: a.canonicalId,
      mountAccessor: a.mountAccessor,
      metadata: JSON.parse(a.metadata) as Record<string, string>,
      createdAt: a.createdAt,
    })),
  };
}

/** The id of the entity with this name; null when none. */
export async function entityIdByName(db: Db, name: string): Promise<string | null> {
  const rows = await db
    .select({ id: identityEntities.id })
    .from(identityEntities)
    .where(eq(identityEntities.name, name))
    .limit(1);
  return rows[0]?.id ?? null;
}

/** Every entity, by id. */
export function listEntityRows(db: Db): Promise<EntityRow[]> {
  return db.select().from(identityEntities).orderBy(asc(identityEntities.id));
}

export async function insertEntity(db: Db, row: EntityRow): Promise<void> {
  await db.insert(identityEntities).values(row);
}

/** Rewrites an entity's name, metadata, policies and disabled flag (JSON texts as stored). */
export async function updateEntity(
  db: Db,
  id: string,
  set: Pick<EntityRow, "name" | "metadata" | "policies" | "disabled" | "updatedAt">,
): Promise<void> {
  await db.update(identityEntities).set(set).where(eq(identityEntities.id, id));
}

/** Deletes an entity, its aliases and (S27) its group memberships, in one batch. */
export async function deleteEntity(db: Db, id: string): Promise<void> {
  await db.batch([
    db.delete(identityEntityAliases).where(eq(identityEntityAliases.canonicalId, id)),
    db
      .delete(identityGroupMembers)
      .where(and(eq(identityGroupMembers.memberType, "entity"), eq(identityGroupMembers.memberId, id))),
    db.delete(identityEntities).where(eq(identityEntities.id, id)),
  ]);
}

/** Type of each auth mount by accessor (S24), for `mount_type` of aliases; the token store's is `token`. */
export async function authMountTypes(db: Db): Promise<Map<string, string>> {
  const rows = await db.select({ accessor: authMounts.accessor, type: authMounts.type }).from(authMounts);
  return new Map(rows.map((r) => [r.accessor, r.type]));
}

/** Whether an auth mount has this accessor. */
export async function authMountExists(db: Db, accessor: string): Promise<boolean> {
  const rows = await db
    .select({ accessor: authMounts.accessor })
    .from(authMounts)
    .where(eq(authMounts.accessor, accessor));
  return rows.length > 0;
}

/** The entity's groups (S27): direct (internal or external membership), and those they are nested in. */
export interface EntityGroups {
  direct: string[];
  inherited: string[];
}

export async function entityGroups(db: Db, entityId: string): Promise<EntityGroups> {
  const rows = await db.all<{ id: string; depth: number }>(
    sql`WITH RECURSIVE grp(id, depth) AS (
          SELECT group_id, 0 FROM ${identityGroupMembers} WHERE member_type = 'entity' AND member_id = ${entityId}
          UNION
          SELECT m.group_id, grp.depth + 1 FROM ${identityGroupMembers} m JOIN grp ON m.member_id = grp.id
          WHERE m.member_type = 'group' AND grp.depth < ${MAX_GROUP_DEPTH}
        )
        SELECT id, min(depth) AS depth FROM grp GROUP BY id ORDER BY id`,
  );
  return {
    direct: rows.filter((r) => r.depth === 0).map((r) => r.id),
    inherited: rows.filter((r) => r.depth > 0).map((r) => r.id),
  };
}

/** Whether a mount already has an alias with this name. */
export async function entityAliasExists(db: Db, mountAccessor: string, name: string): Promise<boolean> {
  const clash = await db
    .select({ id: identityEntityAliases.id })
    .from(identityEntityAliases)
    .where(and(eq(identityEntityAliases.mountAccessor, mountAccessor), eq(identityEntityAliases.name, name)));
  return clash.length > 0;
}

export async function insertEntityAlias(db: Db, row: typeof identityEntityAliases.$inferInsert): Promise<void> {
  await db.insert(identityEntityAliases).values(row);
}
