/**
 * Identity entities and aliases (decision S5a). A token created with `entity_id`
 * renders identity templates from its entity and gains the entity's policies.
 */
import { and, asc, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { authMounts, identityEntities, identityEntityAliases, identityGroupMembers } from "../../db/schema";
import { MAX_GROUP_DEPTH } from "../auth/acl";
import { invalidateTokenContexts } from "../auth/token-cache";
import { tokenStoreAccessor } from "../auth/token-queries";
import { badRequest, notFound } from "../errors";
import { parseFields, unknownFieldWarnings } from "../fields";
import {
  arrayOf,
  bool,
  dateTime,
  envelope,
  listData,
  nullable,
  object,
  str,
  stringMap,
  strings,
  written,
} from "../openapi-schemas";
import { vaultJson, vaultNoContent } from "../respond";
import type { VaultRequest, VaultRoute } from "../router";

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

export interface EntityAlias {
  id: string;
  name: string;
  canonicalId: string;
  mountAccessor: string;
  metadata: Record<string, string>;
  createdAt: number;
}

/** Load an entity (with aliases) by id; null when absent. */
export async function loadEntity(db: Db, id: string): Promise<Entity | null> {
  const row = await db.query.identityEntities.findFirst({ where: eq(identityEntities.id, id) });
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

/** Type of each auth mount by accessor (S24), for `mount_type` of aliases; the token store's is `token`. */
async function mountTypes(db: Db): Promise<Map<string, string>> {
  const rows = await db.select({ accessor: authMounts.accessor, type: authMounts.type }).from(authMounts);
  return new Map(rows.map((r) => [r.accessor, r.type]));
}

/** The entity's groups (S27): direct (internal or external membership), and those they are nested in. */
interface EntityGroups {
  direct: string[];
  inherited: string[];
}

async function entityGroups(db: Db, entityId: string): Promise<EntityGroups> {
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

async function entityAnswer(db: Db, entity: Entity) {
  const [types, groups] = await Promise.all([mountTypes(db), entityGroups(db, entity.id)]);
  return entityData(entity, types, groups);
}

function entityData(e: Entity, types: Map<string, string>, groups: EntityGroups) {
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    id: e.id,
    name: e.name,
    metadata: Object.keys(e.metadata).length > 0 ? e.metadata : null,
    policies: e.policies,
    disabled: e.disabled,
    aliases: e.aliases.map((a) => ({
      id: a.id,
      name: a.name,
      canonical_id: a.canonicalId,
      mount_accessor: a.mountAccessor,
      mount_type: types.get(a.mountAccessor) ?? "token",
      metadata: Object.keys(a.metadata).length > 0 ? a.metadata : null,
      creation_time: iso(a.createdAt),
    })),
    creation_time: iso(e.createdAt),
    last_update_time: iso(e.updatedAt),
    namespace_id: "root",
    direct_group_ids: groups.direct,
    group_ids: [...groups.direct, ...groups.inherited],
    inherited_group_ids: groups.inherited,
    merged_entity_ids: null,
    mfa_secrets: {},
  };
}

const ENTITY_FIELDS = {
  name: { type: "string" },
  metadata: { type: "map" },
  policies: { type: "commaList" },
  disabled: { type: "bool" },
  id: { type: "string" },
} as const;

const ENTITY_ALIAS_FIELDS = {
  name: { type: "string" },
  canonical_id: { type: "string" },
  mount_accessor: { type: "string" },
  custom_metadata: { type: "map" },
} as const;

/** B14: the schema of `entityData`. */
const entityDataSchema = object({
  id: str(),
  name: str(),
  metadata: nullable(stringMap()),
  policies: strings(),
  disabled: bool(),
  aliases: arrayOf(
    object({
      id: str(),
      name: str(),
      canonical_id: str(),
      mount_accessor: str(),
      mount_type: str("`token`, `jwt` or `oidc`"),
      metadata: nullable(stringMap()),
      creation_time: dateTime(),
    }),
  ),
  creation_time: dateTime(),
  last_update_time: dateTime(),
  namespace_id: str(),
  direct_group_ids: strings(),
  group_ids: strings(),
  inherited_group_ids: strings(),
  merged_entity_ids: { type: "null" },
  mfa_secrets: object({}),
});

/** A write's answer: the id and name (`aliases: null` when it created the entity). */
const entityWrittenSchema = object({ id: str(), name: str(), aliases: { type: "null" } }, ["aliases"]);

const ENTITY_NAME = /^[A-Za-z0-9_.@-][A-Za-z0-9_.@ -]*$/;

async function writeEntity(req: VaultRequest, existingId: string | null): Promise<Response> {
  const f = parseFields(req.body, ENTITY_FIELDS);
  const now = Date.now();
  const name = String(f.values.name).trim();
  const existing = existingId ? await loadEntity(req.db, existingId) : null;
  if (existingId && !existing) throw badRequest("entity not found from id");
  if (name && !ENTITY_NAME.test(name)) throw badRequest(`invalid entity name "${name}"`);
  if (name) {
    const clash = await req.db.query.identityEntities.findFirst({ where: eq(identityEntities.name, name) });
    if (clash && clash.id !== existingId) throw badRequest("entity name is already in use");
  }
  const policies = [...new Set((f.values.policies as string[]).map((p) => p.toLowerCase()))].sort();
  if (policies.includes("root")) throw badRequest('the "root" policy cannot be attached to an entity');
  const warnings = unknownFieldWarnings(f.unknown.filter((u) => u !== "id"));
  if (existing) {
    await req.db
      .update(identityEntities)
      .set({
        name: name || existing.name,
        metadata: f.provided.has("metadata") ? JSON.stringify(f.values.metadata) : JSON.stringify(existing.metadata),
        policies: f.provided.has("policies") ? JSON.stringify(policies) : JSON.stringify(existing.policies),
        disabled: f.provided.has("disabled") ? (f.values.disabled as boolean) : existing.disabled,
        updatedAt: now,
      })
      .where(eq(identityEntities.id, existing.id));
    invalidateTokenContexts(); // cached callers hold their entity's policies (token-cache.ts)
    return vaultJson(req, { data: { id: existing.id, name: name || existing.name }, warnings });
  }
  const id = crypto.randomUUID();
  const entityName = name || `entity_${id.slice(0, 8)}`;
  await req.db.insert(identityEntities).values({
    id,
    name: entityName,
    metadata: JSON.stringify(f.values.metadata),
    policies: JSON.stringify(policies),
    disabled: f.values.disabled as boolean,
    createdAt: now,
    updatedAt: now,
  });
  invalidateTokenContexts(); // no token names a new entity yet; cleared anyway so every entity write is alike
  return vaultJson(req, { data: { id, name: entityName, aliases: null }, warnings });
}

async function readEntityById(req: VaultRequest): Promise<Response> {
  const entity = await loadEntity(req.db, req.params.id ?? "");
  if (!entity) throw notFound();
  return vaultJson(req, { data: await entityAnswer(req.db, entity) });
}

const ID = "[A-Za-z0-9-]+";

export const identityRoutes: VaultRoute[] = [
  {
    pattern: "identity/entity",
    operations: { update: (req) => writeEntity(req, null) },
    docs: {
      operations: {
        update: {
          summary: "Create an entity",
          body: ENTITY_FIELDS,
          responses: envelope("the entity's id and name", entityWrittenSchema),
        },
      },
    },
  },
  {
    pattern: "identity/entity/id",
    docs: {
      operations: {
        list: {
          summary: "List entity ids",
          responses: envelope("entity ids", listData(object({ name: str(), aliases: arrayOf(true) }))),
        },
      },
    },
    operations: {
      list: async (req) => {
        const rows = await req.db.select().from(identityEntities).orderBy(asc(identityEntities.id));
        if (rows.length === 0) throw notFound();
        const keyInfo: Record<string, unknown> = {};
        for (const row of rows) keyInfo[row.id] = { name: row.name, aliases: [] };
        return vaultJson(req, { data: { keys: rows.map((r) => r.id), key_info: keyInfo } });
      },
    },
  },
  {
    pattern: "identity/entity/id/:id",
    docs: {
      params: { id: "the entity id" },
      operations: {
        read: { summary: "Read an entity", responses: envelope("the entity", entityDataSchema) },
        update: {
          summary: "Update an entity",
          body: ENTITY_FIELDS,
          responses: envelope("the entity's id and name", entityWrittenSchema),
        },
        delete: { summary: "Delete an entity and its aliases", responses: written("deleted") },
      },
    },
    params: { id: ID },
    operations: {
      read: readEntityById,
      update: (req) => writeEntity(req, req.params.id ?? ""),
      delete: async (req) => {
        const id = req.params.id ?? "";
        await req.db.batch([
          req.db.delete(identityEntityAliases).where(eq(identityEntityAliases.canonicalId, id)),
          // S27: the entity leaves every group it was in.
          req.db
            .delete(identityGroupMembers)
            .where(and(eq(identityGroupMembers.memberType, "entity"), eq(identityGroupMembers.memberId, id))),
          req.db.delete(identityEntities).where(eq(identityEntities.id, id)),
        ]);
        invalidateTokenContexts(); // cached callers hold their entity's policies (token-cache.ts)
        return vaultNoContent(req);
      },
    },
  },
  {
    pattern: "identity/entity/name/:name",
    docs: {
      params: { name: "the entity name" },
      operations: { read: { summary: "Read an entity by name", responses: envelope("the entity", entityDataSchema) } },
    },
    params: { name: "[^/]+" },
    operations: {
      read: async (req) => {
        const row = await req.db.query.identityEntities.findFirst({
          where: eq(identityEntities.name, req.params.name ?? ""),
        });
        const entity = row ? await loadEntity(req.db, row.id) : null;
        if (!entity) throw notFound();
        return vaultJson(req, { data: await entityAnswer(req.db, entity) });
      },
    },
  },
  {
    pattern: "identity/entity-alias",
    docs: {
      operations: {
        update: {
          summary: "Create an entity alias (token store)",
          body: ENTITY_ALIAS_FIELDS,
          responses: envelope("the alias id and its entity", object({ id: str(), canonical_id: str() })),
        },
      },
    },
    operations: {
      update: async (req) => {
        const f = parseFields(req.body, ENTITY_ALIAS_FIELDS);
        const name = String(f.values.name).trim();
        const canonicalId = String(f.values.canonical_id).trim();
        const mountAccessor = String(f.values.mount_accessor).trim();
        if (!name) throw badRequest("missing alias name");
        if (!mountAccessor) throw badRequest("missing mount_accessor");
        if (!canonicalId) throw badRequest("missing canonical_id");
        // The token store's accessor, or an auth mount's (S24: an alias made ahead of a first login).
        const authMount = await req.db
          .select({ accessor: authMounts.accessor })
          .from(authMounts)
          .where(eq(authMounts.accessor, mountAccessor));
        if (mountAccessor !== (await tokenStoreAccessor(req.db)) && authMount.length === 0) {
          throw badRequest("invalid mount accessor");
        }
        if (!(await loadEntity(req.db, canonicalId))) throw badRequest("invalid canonical ID");
        const clash = await req.db
          .select({ id: identityEntityAliases.id })
          .from(identityEntityAliases)
          .where(and(eq(identityEntityAliases.mountAccessor, mountAccessor), eq(identityEntityAliases.name, name)));
        if (clash.length > 0) throw badRequest("alias already exists for requested entity and mount accessor");
        const id = crypto.randomUUID();
        await req.db.insert(identityEntityAliases).values({
          id,
          name,
          canonicalId,
          mountAccessor,
          metadata: JSON.stringify(f.values.custom_metadata),
          createdAt: Date.now(),
        });
        return vaultJson(req, { data: { id, canonical_id: canonicalId }, warnings: unknownFieldWarnings(f.unknown) });
      },
    },
  },
];
