/**
 * Identity entities and aliases (decision S5a). A token created with `entity_id`
 * renders identity templates from its entity and gains the entity's policies.
 */
import type { Db } from "../../db/client";
import { invalidateTokenContexts } from "../access/token-cache";
import { tokenStoreAccessor } from "../access/token-repo";
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
} from "../openapi/schemas";
import { keyedList, vaultJson, vaultNoContent } from "../respond";
import type { VaultRequest, VaultRoute } from "../router";
import {
  authMountExists,
  authMountTypes,
  deleteEntity,
  type Entity,
  type EntityGroups,
  entityAliasExists,
  entityGroups,
  entityIdByName,
  insertEntity,
  insertEntityAlias,
  listEntityRows,
  loadEntity,
  updateEntity,
} from "./entity-repo";

async function entityAnswer(db: Db, entity: Entity) {
  const [types, groups] = await Promise.all([authMountTypes(db), entityGroups(db, entity.id)]);
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
    const clashId = await entityIdByName(req.db, name);
    if (clashId !== null && clashId !== existingId) throw badRequest("entity name is already in use");
  }
  const policies = [...new Set((f.values.policies as string[]).map((p) => p.toLowerCase()))].sort();
  if (policies.includes("root")) throw badRequest('the "root" policy cannot be attached to an entity');
  const warnings = unknownFieldWarnings(f.unknown.filter((u) => u !== "id"));
  if (existing) {
    await updateEntity(req.db, existing.id, {
      name: name || existing.name,
      metadata: f.provided.has("metadata") ? JSON.stringify(f.values.metadata) : JSON.stringify(existing.metadata),
      policies: f.provided.has("policies") ? JSON.stringify(policies) : JSON.stringify(existing.policies),
      disabled: f.provided.has("disabled") ? (f.values.disabled as boolean) : existing.disabled,
      updatedAt: now,
    });
    invalidateTokenContexts(); // cached callers hold their entity's policies (token-cache.ts)
    return vaultJson(req, { data: { id: existing.id, name: name || existing.name }, warnings });
  }
  const id = crypto.randomUUID();
  const entityName = name || `entity_${id.slice(0, 8)}`;
  await insertEntity(req.db, {
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
        const rows = await listEntityRows(req.db);
        if (rows.length === 0) throw notFound();
        return vaultJson(req, {
          data: keyedList(
            rows,
            (r) => r.id,
            (r) => ({ name: r.name, aliases: [] }),
          ),
        });
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
        await deleteEntity(req.db, id); // S27: the entity also leaves every group it was in
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
        const id = await entityIdByName(req.db, req.params.name ?? "");
        const entity = id !== null ? await loadEntity(req.db, id) : null;
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
        const isAuthMount = await authMountExists(req.db, mountAccessor);
        if (mountAccessor !== (await tokenStoreAccessor(req.db)) && !isAuthMount) {
          throw badRequest("invalid mount accessor");
        }
        if (!(await loadEntity(req.db, canonicalId))) throw badRequest("invalid canonical ID");
        if (await entityAliasExists(req.db, mountAccessor, name))
          throw badRequest("alias already exists for requested entity and mount accessor");
        const id = crypto.randomUUID();
        await insertEntityAlias(req.db, {
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
