/**
 * Identity from logins (decision S27): the entity that owns a login's alias (mount
 * accessor, user claim value), found or created; the alias's metadata kept equal to the
 * claim mappings plus `role` (an unchanged alias is not rewritten); and the entity's
 * external group memberships set from the role's groups claim.
 */
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { inJsonList } from "../../db/json-list";
import {
  identityEntities,
  identityEntityAliases,
  identityGroupAliases,
  identityGroupMembers,
  identityGroups,
} from "../../db/schema/ssh";
import { randomBytes, toHex } from "../../lib/bytes";
import { invalidateTokenContexts } from "../access/token-cache";

export interface LoginEntity {
  entityId: string;
  disabled: boolean;
}

function aliasQuery(db: Db, accessor: string, name: string) {
  return db
    .select({
      aliasId: identityEntityAliases.id,
      entityId: identityEntityAliases.canonicalId,
      metadata: identityEntityAliases.metadata,
      disabled: identityEntities.disabled,
    })
    .from(identityEntityAliases)
    .innerJoin(identityEntities, eq(identityEntities.id, identityEntityAliases.canonicalId))
    .where(and(eq(identityEntityAliases.mountAccessor, accessor), eq(identityEntityAliases.name, name)))
    .limit(1);
}

/** Metadata as stored: keys sorted, so equal maps store equal text. */
export function metadataText(metadata: Record<string, string>): string {
  const sorted: Record<string, string> = {};
  for (const key of Object.keys(metadata).sort()) sorted[key] = metadata[key]!;
  return JSON.stringify(sorted);
}

/**
 * The entity owning alias (accessor, name), created with the alias when there is none;
 * the alias's metadata is set to `metadata` when it differs.
 */
export async function entityForLogin(
  db: Db,
  accessor: string,
  name: string,
  metadata: Record<string, string>,
  now = Date.now(),
): Promise<LoginEntity> {
  const wanted = metadataText(metadata);
  const found = (await aliasQuery(db, accessor, name))[0];
  if (found) {
    if (found.metadata !== wanted) {
      await db
        .update(identityEntityAliases)
        .set({ metadata: wanted })
        .where(eq(identityEntityAliases.id, found.aliasId));
    }
    return { entityId: found.entityId, disabled: found.disabled };
  }
  const entityId = crypto.randomUUID();
  const [, inserted] = await db.batch([
    db.insert(identityEntities).values({
      id: entityId,
      // 64 random bits: a name clash (a UNIQUE index) stays out of reach at any number of entities.
      name: `entity_${toHex(randomBytes(8))}`,
      metadata: "{}",
      policies: "[]",
      disabled: false,
      createdAt: now,
      updatedAt: now,
    }),
    db
      .insert(identityEntityAliases)
      .values({
        id: crypto.randomUUID(),
        name,
        canonicalId: entityId,
        mountAccessor: accessor,
        metadata: wanted,
        createdAt: now,
      })
      .onConflictDoNothing()
      .returning({ id: identityEntityAliases.id }),
  ]);
  if (inserted.length === 1) return { entityId, disabled: false };
  // A concurrent login made the alias first: use its entity, drop ours.
  await db.delete(identityEntities).where(eq(identityEntities.id, entityId));
  const winner = (await aliasQuery(db, accessor, name))[0];
  if (!winner) throw new Error("entity alias vanished during login");
  return { entityId: winner.entityId, disabled: winner.disabled };
}

/**
 * S27: make the entity's external memberships set by logins through `accessor` exactly
 * the external groups whose alias (same accessor) is one of `names`; an empty list
 * removes them all. Writes only when something changes. Returns whether it did.
 */
export async function setExternalMemberships(
  db: Db,
  accessor: string,
  entityId: string,
  names: string[],
): Promise<boolean> {
  const [targets, current] = await db.batch([
    db
      .select({ id: identityGroups.id })
      .from(identityGroupAliases)
      .innerJoin(identityGroups, eq(identityGroups.id, identityGroupAliases.canonicalId))
      .where(
        and(
          eq(identityGroupAliases.mountAccessor, accessor),
          eq(identityGroups.type, "external"),
          inJsonList(identityGroupAliases.name, names),
        ),
      ),
    db
      .select({ groupId: identityGroupMembers.groupId })
      .from(identityGroupMembers)
      .where(
        and(
          eq(identityGroupMembers.memberType, "entity"),
          eq(identityGroupMembers.memberId, entityId),
          eq(identityGroupMembers.source, accessor),
        ),
      ),
  ]);
  const want = new Set(targets.map((t) => t.id));
  const have = new Set(current.map((c) => c.groupId));
  const added = [...want].filter((id) => !have.has(id));
  const removed = [...have].filter((id) => !want.has(id));
  if (added.length === 0 && removed.length === 0) return false;
  const keep = [...want];
  await db.batch([
    db
      .delete(identityGroupMembers)
      .where(
        and(
          eq(identityGroupMembers.memberType, "entity"),
          eq(identityGroupMembers.memberId, entityId),
          eq(identityGroupMembers.source, accessor),
          keep.length > 0 ? sql`NOT ${inJsonList(identityGroupMembers.groupId, keep)}` : sql`1 = 1`,
        ),
      ),
    db
      .insert(identityGroupMembers)
      .select(sql`SELECT value, 'entity', ${entityId}, ${accessor} FROM json_each(${JSON.stringify(added)}) WHERE true`)
      .onConflictDoNothing(),
  ]);
  // After the write (token-cache.ts): this isolate's cached callers see it at once.
  invalidateTokenContexts();
  return true;
}
