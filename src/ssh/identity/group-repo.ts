/**
 * The queries of identity groups, their members and their aliases (decision S27): the rows
 * behind `identity/group*` and `identity/group-alias*`, and the groups a signing request's
 * templates read.
 */
import { and, asc, eq, or, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { type Db, nonEmptyBatch } from "../../db/client";
import { inJsonList } from "../../db/json-list";
import {
  authMounts,
  identityEntities,
  identityGroupAliases,
  identityGroupMembers,
  identityGroups,
} from "../../db/schema/ssh";
import { MAX_GROUP_DEPTH } from "../access/acl";
import type { TemplateGroup } from "./templates";

export type GroupRow = typeof identityGroups.$inferSelect;
export type GroupAliasRow = typeof identityGroupAliases.$inferSelect;
type GroupMemberRow = typeof identityGroupMembers.$inferSelect;
type AuthMountRow = typeof authMounts.$inferSelect;

/**
 * The groups an entity is in for identity templates (`{{identity.groups.names.<n>.id}}`,
 * …): directly and through nesting up to MAX_GROUP_DEPTH levels, as Vault's
 * GroupsForEntity gives them to its templating. One statement.
 */
export async function templateGroupsOf(db: Db, entityId: string): Promise<TemplateGroup[]> {
  const rows = await db.all<{ id: string; name: string; metadata: string }>(
    sql`WITH RECURSIVE grp(id, depth) AS (
          SELECT group_id, 0 FROM ${identityGroupMembers} WHERE member_type = 'entity' AND member_id = ${entityId}
          UNION
          SELECT m.group_id, grp.depth + 1 FROM ${identityGroupMembers} m JOIN grp ON m.member_id = grp.id
          WHERE m.member_type = 'group' AND grp.depth < ${MAX_GROUP_DEPTH}
        )
        SELECT g.id, g.name, g.metadata FROM ${identityGroups} g WHERE g.id IN (SELECT id FROM grp) ORDER BY g.name`,
  );
  return rows.map((r) => ({ id: r.id, name: r.name, metadata: JSON.parse(r.metadata) as Record<string, string> }));
}

/** The auth mount with this accessor; null when none. */
export async function authMountByAccessor(db: Db, accessor: string): Promise<AuthMountRow | null> {
  return (await db.select().from(authMounts).where(eq(authMounts.accessor, accessor)).limit(1))[0] ?? null;
}

/** A group's member rows, the ids of the groups it is a member of, and its aliases: one batch. */
export async function groupRelations(
  db: Db,
  groupId: string,
): Promise<{ members: GroupMemberRow[]; parents: { id: string }[]; aliases: GroupAliasRow[] }> {
  const [members, parents, aliases] = await db.batch([
    db.select().from(identityGroupMembers).where(eq(identityGroupMembers.groupId, groupId)),
    db
      .select({ id: identityGroupMembers.groupId })
      .from(identityGroupMembers)
      .where(and(eq(identityGroupMembers.memberType, "group"), eq(identityGroupMembers.memberId, groupId))),
    db.select().from(identityGroupAliases).where(eq(identityGroupAliases.canonicalId, groupId)),
  ]);
  return { members, parents, aliases };
}

export async function findGroup(db: Db, by: { id?: string; name?: string }): Promise<GroupRow | null> {
  const where = by.id !== undefined ? eq(identityGroups.id, by.id) : eq(identityGroups.name, by.name ?? "");
  return (await db.select().from(identityGroups).where(where).limit(1))[0] ?? null;
}

/** Every group, by id. */
export function listGroupRows(db: Db): Promise<GroupRow[]> {
  return db.select().from(identityGroups).orderBy(asc(identityGroups.id));
}

/** Every group's name, in order. */
export function listGroupNames(db: Db): Promise<{ name: string }[]> {
  return db.select({ name: identityGroups.name }).from(identityGroups).orderBy(asc(identityGroups.name));
}

/** Every membership row. */
export function listGroupMemberRows(db: Db): Promise<GroupMemberRow[]> {
  return db.select().from(identityGroupMembers);
}

/** Every nesting edge: a group `parent` with the group `child` as a member. */
export function groupNestingEdges(db: Db): Promise<{ parent: string; child: string }[]> {
  return db
    .select({ parent: identityGroupMembers.groupId, child: identityGroupMembers.memberId })
    .from(identityGroupMembers)
    .where(eq(identityGroupMembers.memberType, "group"));
}

/** Those of `ids` that name an entity. */
export function existingEntityIds(db: Db, ids: string[]): Promise<{ id: string }[]> {
  return db.select({ id: identityEntities.id }).from(identityEntities).where(inJsonList(identityEntities.id, ids));
}

/** Those of `ids` that name a group. */
export function existingGroupIds(db: Db, ids: string[]): Promise<{ id: string }[]> {
  return db.select({ id: identityGroups.id }).from(identityGroups).where(inJsonList(identityGroups.id, ids));
}

/** What writeGroupRows writes: a group to update or to insert, and the member lists it replaces. */
export interface GroupWrite {
  group: { update: Pick<GroupRow, "id" | "name" | "policies" | "metadata" | "updatedAt"> } | { insert: GroupRow };
  /** The manual (`source` '') members of these types are replaced by these ids. */
  members: { memberType: "entity" | "group"; ids: string[] }[];
}

/** Writes a group and replaces its manual members, in one batch. */
export async function writeGroupRows(db: Db, write: GroupWrite): Promise<void> {
  const statements: BatchItem<"sqlite">[] = [];
  let id: string;
  if ("update" in write.group) {
    const { id: groupId, ...set } = write.group.update;
    id = groupId;
    statements.push(db.update(identityGroups).set(set).where(eq(identityGroups.id, id)));
  } else {
    id = write.group.insert.id;
    statements.push(db.insert(identityGroups).values(write.group.insert));
  }
  for (const { memberType, ids } of write.members) {
    statements.push(
      db
        .delete(identityGroupMembers)
        .where(
          and(
            eq(identityGroupMembers.groupId, id),
            eq(identityGroupMembers.memberType, memberType),
            eq(identityGroupMembers.source, ""),
          ),
        ),
    );
    if (ids.length > 0) {
      statements.push(
        db
          .insert(identityGroupMembers)
          .select(sql`SELECT ${id}, ${memberType}, value, '' FROM json_each(${JSON.stringify(ids)}) WHERE true`)
          .onConflictDoNothing(),
      );
    }
  }
  await db.batch(nonEmptyBatch(statements));
}

/** Deletes a group, its memberships (as group and as member) and its aliases, in one batch. */
export async function deleteGroupRows(db: Db, groupId: string): Promise<void> {
  await db.batch([
    db
      .delete(identityGroupMembers)
      .where(
        or(
          eq(identityGroupMembers.groupId, groupId),
          and(eq(identityGroupMembers.memberType, "group"), eq(identityGroupMembers.memberId, groupId)),
        ),
      ),
    db.delete(identityGroupAliases).where(eq(identityGroupAliases.canonicalId, groupId)),
    db.delete(identityGroups).where(eq(identityGroups.id, groupId)),
  ]);
}

/** The group alias with this id; null when absent. */
export async function findGroupAlias(db: Db, id: string): Promise<GroupAliasRow | null> {
  return (await db.select().from(identityGroupAliases).where(eq(identityGroupAliases.id, id)).limit(1))[0] ?? null;
}

/** Every group alias, by id. */
export function listGroupAliasRows(db: Db): Promise<GroupAliasRow[]> {
  return db.select().from(identityGroupAliases).orderBy(asc(identityGroupAliases.id));
}

/** The aliases with this mount and name, or of this group. */
export function groupAliasClashes(
  db: Db,
  mountAccessor: string,
  name: string,
  canonicalId: string,
): Promise<GroupAliasRow[]> {
  return db
    .select()
    .from(identityGroupAliases)
    .where(
      or(
        and(eq(identityGroupAliases.mountAccessor, mountAccessor), eq(identityGroupAliases.name, name)),
        eq(identityGroupAliases.canonicalId, canonicalId),
      ),
    );
}

export async function updateGroupAlias(
  db: Db,
  id: string,
  set: Pick<GroupAliasRow, "name" | "mountAccessor" | "canonicalId" | "updatedAt">,
): Promise<void> {
  await db.update(identityGroupAliases).set(set).where(eq(identityGroupAliases.id, id));
}

export async function insertGroupAlias(db: Db, row: GroupAliasRow): Promise<void> {
  await db.insert(identityGroupAliases).values(row);
}

export async function deleteGroupAlias(db: Db, id: string): Promise<void> {
  await db.delete(identityGroupAliases).where(eq(identityGroupAliases.id, id));
}
