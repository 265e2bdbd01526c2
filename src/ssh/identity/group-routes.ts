/**
 * Identity groups and group aliases (decision S27), in Vault's shapes
 * (https://developer.hashicorp.com/vault/api-docs/secret/identity/group,
 * …/group-alias). An `internal` group's members are set here (`member_entity_ids`,
 * `member_group_ids`, nested at most MAX_GROUP_DEPTH levels, no cycles); an `external`
 * group's entity members are set by logins whose groups claim names its alias
 * (login-identity.ts). A group's policies reach every token of its entities, and of the
 * entities of groups nested in it, at request time (access/acl.ts).
 */
import type { Db } from "../../db/client";
import { MAX_GROUP_DEPTH } from "../access/acl";
import { invalidateTokenContexts } from "../access/token-cache";
import { badRequest, notFound } from "../errors";
import { parseFields, unknownFieldWarnings } from "../fields";
import {
  dateTime,
  envelope,
  int,
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
  authMountByAccessor,
  deleteGroupAlias,
  deleteGroupRows,
  existingEntityIds,
  existingGroupIds,
  findGroup,
  findGroupAlias,
  type GroupAliasRow,
  type GroupRow,
  type GroupWrite,
  groupAliasClashes,
  groupNestingEdges,
  groupRelations,
  insertGroupAlias,
  listGroupAliasRows,
  listGroupMemberRows,
  listGroupNames,
  listGroupRows,
  updateGroupAlias,
  writeGroupRows,
} from "./group-repo";

const GROUP_FIELDS = {
  name: { type: "string" },
  id: { type: "string" },
  type: { type: "string" },
  metadata: { type: "map" },
  policies: { type: "commaList" },
  member_entity_ids: { type: "commaList" },
  member_group_ids: { type: "commaList" },
} as const;

const GROUP_ALIAS_FIELDS = {
  name: { type: "string" },
  id: { type: "string" },
  mount_accessor: { type: "string" },
  canonical_id: { type: "string" },
} as const;

const GROUP_NAME = /^[A-Za-z0-9_.@-][A-Za-z0-9_.@ -]*$/;

const iso = (ms: number) => new Date(ms).toISOString();

async function aliasData(db: Db, alias: GroupAliasRow) {
  const mount = await authMountByAccessor(db, alias.mountAccessor);
  return {
    canonical_id: alias.canonicalId,
    creation_time: iso(alias.createdAt),
    id: alias.id,
    last_update_time: iso(alias.updatedAt),
    merged_from_canonical_ids: null,
    metadata: null,
    mount_accessor: alias.mountAccessor,
    mount_path: mount ? `auth/${mount.path}/` : "",
    mount_type: mount?.type ?? "",
    name: alias.name,
  };
}

async function groupData(db: Db, group: GroupRow) {
  const { members, parents, aliases } = await groupRelations(db, group.id);
  const metadata = JSON.parse(group.metadata) as Record<string, string>;
  return {
    alias: aliases[0] ? await aliasData(db, aliases[0]) : {},
    creation_time: iso(group.createdAt),
    id: group.id,
    last_update_time: iso(group.updatedAt),
    member_entity_ids: members
      .filter((m) => m.memberType === "entity")
      .map((m) => m.memberId)
      .sort(),
    member_group_ids: members
      .filter((m) => m.memberType === "group")
      .map((m) => m.memberId)
      .sort(),
    metadata: Object.keys(metadata).length > 0 ? metadata : null,
    modify_index: 0,
    name: group.name,
    namespace_id: "root",
    parent_group_ids: parents.map((p) => p.id).sort(),
    policies: JSON.parse(group.policies) as string[],
    type: group.type,
  };
}

const groupAliasSchema = object({
  canonical_id: str(),
  creation_time: dateTime(),
  id: str(),
  last_update_time: dateTime(),
  merged_from_canonical_ids: { type: "null" },
  metadata: { type: "null" },
  mount_accessor: str(),
  mount_path: str(),
  mount_type: str(),
  name: str(),
});

const groupSchema = object({
  alias: { anyOf: [groupAliasSchema, object({})] },
  creation_time: dateTime(),
  id: str(),
  last_update_time: dateTime(),
  member_entity_ids: strings(),
  member_group_ids: strings(),
  metadata: nullable(stringMap()),
  modify_index: int(),
  name: str(),
  namespace_id: str(),
  parent_group_ids: strings(),
  policies: strings(),
  type: { enum: ["internal", "external"] },
});

/**
 * S27: refuse member groups that would make a cycle or nest deeper than MAX_GROUP_DEPTH
 * levels once `groupId`'s member groups are `members`.
 */
async function checkNesting(db: Db, groupId: string, members: string[]): Promise<void> {
  const edges = await groupNestingEdges(db);
  const children = new Map<string, string[]>();
  const parents = new Map<string, string[]>();
  for (const { parent, child } of edges) {
    if (parent === groupId) continue; // replaced by `members`
    children.set(parent, [...(children.get(parent) ?? []), child]);
    parents.set(child, [...(parents.get(child) ?? []), parent]);
  }
  children.set(groupId, members);
  /** Longest path of edges from `start` following `next`, or Infinity on a cycle through `groupId`. */
  const longest = (start: string, next: Map<string, string[]>, seen: Set<string>): number => {
    let best = 0;
    for (const n of next.get(start) ?? []) {
      if (seen.has(n)) return Number.POSITIVE_INFINITY;
      best = Math.max(best, 1 + longest(n, next, new Set([...seen, n])));
      if (best > MAX_GROUP_DEPTH) return best;
    }
    return best;
  };
  for (const member of members) {
    if (member === groupId) throw badRequest(`member group ID "${member}" is same as the ID of the group`);
    if (longest(member, children, new Set([member])) === Number.POSITIVE_INFINITY) {
      throw badRequest(`cyclic relationship detected for member group ID "${member}"`);
    }
  }
  const depth = longest(groupId, parents, new Set([groupId])) + longest(groupId, children, new Set([groupId]));
  if (depth === Number.POSITIVE_INFINITY) throw badRequest("cyclic relationship detected among member groups");
  if (depth > MAX_GROUP_DEPTH) {
    throw badRequest(`groups may be nested at most ${MAX_GROUP_DEPTH} levels deep`);
  }
}

/**
 * Create or update a group. `answer`: `created` answers 200 with the id and name whether it
 * created or updated (writes by name); `noContent` answers 204 (writes by id).
 */
async function writeGroup(
  req: VaultRequest,
  existing: GroupRow | null,
  answer: "created" | "noContent",
): Promise<Response> {
  const f = parseFields(req.body, GROUP_FIELDS);
  const has = (field: string) => f.provided.has(field);
  let group = existing;
  const name = String(f.values.name).trim();
  if (!group && name) group = await findGroup(req.db, { name });
  if (name && !GROUP_NAME.test(name)) throw badRequest(`invalid group name "${name}"`);
  if (name && group && name !== group.name && (await findGroup(req.db, { name }))) {
    throw badRequest("group name is already in use");
  }
  const type = has("type") ? String(f.values.type).toLowerCase() || "internal" : (group?.type ?? "internal");
  if (type !== "internal" && type !== "external") throw badRequest(`invalid group type "${type}"`);
  if (group && type !== group.type) throw badRequest("group type cannot be changed");
  const policies = [...new Set((f.values.policies as string[]).map((p) => p.toLowerCase()))].sort();
  if (policies.includes("root")) throw badRequest('the "root" policy cannot be attached to a group');
  const memberEntities = [...new Set(f.values.member_entity_ids as string[])];
  const memberGroups = [...new Set(f.values.member_group_ids as string[])];
  if (type === "external" && memberEntities.length > 0) {
    throw badRequest("member entities can't be set manually for external groups");
  }
  if (type === "external" && memberGroups.length > 0)
    throw badRequest("member groups can't be set for external groups");
  const id = group?.id ?? crypto.randomUUID();
  if (memberEntities.length > 0) {
    const found = await existingEntityIds(req.db, memberEntities);
    const missing = memberEntities.find((e) => !found.some((r) => r.id === e));
    if (missing) throw badRequest(`invalid member entity ID "${missing}"`);
  }
  if (has("member_group_ids")) {
    const found = await existingGroupIds(req.db, memberGroups);
    const missing = memberGroups.find((g) => g !== id && !found.some((r) => r.id === g));
    if (missing) throw badRequest(`invalid member group ID "${missing}"`);
    await checkNesting(req.db, id, memberGroups);
  }
  const now = Date.now();
  const warnings = unknownFieldWarnings(f.unknown.filter((u) => u !== "id"));
  const write: GroupWrite = {
    group: group
      ? {
          update: {
            id,
            name: name || group.name,
            policies: has("policies") ? JSON.stringify(policies) : group.policies,
            metadata: has("metadata") ? JSON.stringify(f.values.metadata) : group.metadata,
            updatedAt: now,
          },
        }
      : {
          insert: {
            id,
            name: name || `group_${id.slice(0, 8)}`,
            type,
            policies: JSON.stringify(policies),
            metadata: JSON.stringify(f.values.metadata),
            createdAt: now,
            updatedAt: now,
          },
        },
    members: [],
  };
  for (const [field, memberType, members] of [
    ["member_entity_ids", "entity", memberEntities],
    ["member_group_ids", "group", memberGroups],
  ] as const) {
    if (!has(field) || type === "external") continue;
    write.members.push({ memberType, ids: members });
  }
  await writeGroupRows(req.db, write);
  invalidateTokenContexts(); // cached callers hold their groups' policies (token-cache.ts)
  if (answer === "noContent") return vaultNoContent(req, warnings);
  return vaultJson(req, { data: { id, name: name || group?.name || `group_${id.slice(0, 8)}` }, warnings });
}

async function deleteGroup(req: VaultRequest, group: GroupRow | null): Promise<Response> {
  if (group) {
    await deleteGroupRows(req.db, group.id);
    invalidateTokenContexts();
  }
  return vaultNoContent(req);
}

async function readGroup(req: VaultRequest, group: GroupRow | null): Promise<Response> {
  if (!group) throw notFound();
  return vaultJson(req, { data: await groupData(req.db, group) });
}

async function writeGroupAlias(req: VaultRequest, existingId: string | null): Promise<Response> {
  const f = parseFields(req.body, GROUP_ALIAS_FIELDS);
  const existing = existingId ? await findGroupAlias(req.db, existingId) : null;
  if (existingId && !existing) throw badRequest("invalid group alias ID");
  const name = String(f.values.name).trim() || existing?.name || "";
  const mountAccessor = String(f.values.mount_accessor).trim() || existing?.mountAccessor || "";
  const canonicalId = String(f.values.canonical_id).trim() || existing?.canonicalId || "";
  if (!name) throw badRequest("missing alias name");
  if (!mountAccessor) throw badRequest("missing mount_accessor");
  if (!canonicalId) throw badRequest("missing canonical_id");
  if (!(await authMountByAccessor(req.db, mountAccessor)))
    throw badRequest(`invalid mount accessor "${mountAccessor}"`);
  const group = await findGroup(req.db, { id: canonicalId });
  if (!group) throw badRequest("invalid canonical ID");
  if (group.type !== "external") throw badRequest("alias can't be set on an internal group");
  const clashes = await groupAliasClashes(req.db, mountAccessor, name, canonicalId);
  for (const clash of clashes) {
    if (clash.id === existing?.id) continue;
    if (clash.canonicalId === canonicalId && (clash.name !== name || clash.mountAccessor !== mountAccessor)) {
      throw badRequest(`group "${canonicalId}" already has an alias`);
    }
    throw badRequest("combination of mount and group alias name is already in use");
  }
  const now = Date.now();
  const warnings = unknownFieldWarnings(f.unknown.filter((u) => u !== "id"));
  if (existing) {
    await updateGroupAlias(req.db, existing.id, { name, mountAccessor, canonicalId, updatedAt: now });
    return vaultNoContent(req, warnings);
  }
  const id = crypto.randomUUID();
  await insertGroupAlias(req.db, { id, name, mountAccessor, canonicalId, createdAt: now, updatedAt: now });
  return vaultJson(req, { data: { id, canonical_id: canonicalId }, warnings });
}

const ID = "[A-Za-z0-9-]+";
const groupWritten = object({ id: str(), name: str() });

export const groupRoutes: VaultRoute[] = [
  {
    pattern: "identity/group",
    docs: {
      operations: {
        update: {
          summary: "Create a group (or update the group of that name)",
          body: GROUP_FIELDS,
          responses: envelope("the group's id and name", groupWritten),
        },
      },
    },
    operations: { update: (req) => writeGroup(req, null, "created") },
  },
  {
    pattern: "identity/group/id",
    docs: {
      operations: {
        list: {
          summary: "List group ids",
          responses: envelope(
            "group ids",
            listData(object({ name: str(), num_member_entities: int(), num_parent_groups: int() })),
          ),
        },
      },
    },
    operations: {
      list: async (req) => {
        const rows = await listGroupRows(req.db);
        if (rows.length === 0) throw notFound();
        const members = await listGroupMemberRows(req.db);
        const data = keyedList(
          rows,
          (row) => row.id,
          (row) => ({
            name: row.name,
            num_member_entities: members.filter((m) => m.groupId === row.id && m.memberType === "entity").length,
            num_parent_groups: members.filter((m) => m.memberType === "group" && m.memberId === row.id).length,
          }),
        );
        return vaultJson(req, { data });
      },
    },
  },
  {
    pattern: "identity/group/id/:id",
    params: { id: ID },
    docs: {
      params: { id: "the group id" },
      operations: {
        read: { summary: "Read a group", responses: envelope("the group", groupSchema) },
        update: { summary: "Update a group", body: GROUP_FIELDS, responses: written("updated") },
        delete: { summary: "Delete a group", responses: written("deleted") },
      },
    },
    operations: {
      read: async (req) => readGroup(req, await findGroup(req.db, { id: req.params.id ?? "" })),
      update: async (req) => {
        const group = await findGroup(req.db, { id: req.params.id ?? "" });
        if (!group) throw badRequest("group not found from id");
        return writeGroup(req, group, "noContent");
      },
      delete: async (req) => deleteGroup(req, await findGroup(req.db, { id: req.params.id ?? "" })),
    },
  },
  {
    pattern: "identity/group/name",
    docs: {
      operations: { list: { summary: "List group names", responses: envelope("group names", listData()) } },
    },
    operations: {
      list: async (req) => {
        const rows = await listGroupNames(req.db);
        if (rows.length === 0) throw notFound();
        return vaultJson(req, { data: { keys: rows.map((r) => r.name) } });
      },
    },
  },
  {
    pattern: "identity/group/name/:name",
    params: { name: "[^/]+" },
    docs: {
      params: { name: "the group name" },
      operations: {
        read: { summary: "Read a group by name", responses: envelope("the group", groupSchema) },
        update: {
          summary: "Create or update the group of this name",
          body: GROUP_FIELDS,
          responses: envelope("the group's id and name", groupWritten),
        },
        delete: { summary: "Delete a group by name", responses: written("deleted") },
      },
    },
    operations: {
      read: async (req) => readGroup(req, await findGroup(req.db, { name: req.params.name ?? "" })),
      update: async (req) => {
        const group = await findGroup(req.db, { name: req.params.name ?? "" });
        return writeGroup({ ...req, body: { ...req.body, name: req.params.name ?? "" } }, group, "created");
      },
      delete: async (req) => deleteGroup(req, await findGroup(req.db, { name: req.params.name ?? "" })),
    },
  },
  {
    pattern: "identity/group-alias",
    docs: {
      operations: {
        update: {
          summary: "Create a group alias (an external group's name at an auth mount)",
          body: GROUP_ALIAS_FIELDS,
          responses: envelope("the alias id and its group", object({ id: str(), canonical_id: str() })),
        },
      },
    },
    operations: { update: (req) => writeGroupAlias(req, null) },
  },
  {
    pattern: "identity/group-alias/id",
    docs: {
      operations: {
        list: {
          summary: "List group alias ids",
          responses: envelope(
            "group alias ids",
            listData(object({ name: str(), canonical_id: str(), mount_accessor: str() })),
          ),
        },
      },
    },
    operations: {
      list: async (req) => {
        const rows = await listGroupAliasRows(req.db);
        if (rows.length === 0) throw notFound();
        const data = keyedList(
          rows,
          (r) => r.id,
          (r) => ({ name: r.name, canonical_id: r.canonicalId, mount_accessor: r.mountAccessor }),
        );
        return vaultJson(req, { data });
      },
    },
  },
  {
    pattern: "identity/group-alias/id/:id",
    params: { id: ID },
    docs: {
      params: { id: "the group alias id" },
      operations: {
        read: { summary: "Read a group alias", responses: envelope("the alias", groupAliasSchema) },
        update: { summary: "Update a group alias", body: GROUP_ALIAS_FIELDS, responses: written("updated") },
        delete: { summary: "Delete a group alias", responses: written("deleted") },
      },
    },
    operations: {
      read: async (req) => {
        const row = await findGroupAlias(req.db, req.params.id ?? "");
        if (!row) throw notFound();
        return vaultJson(req, { data: await aliasData(req.db, row) });
      },
      update: (req) => writeGroupAlias(req, req.params.id ?? ""),
      delete: async (req) => {
        await deleteGroupAlias(req.db, req.params.id ?? "");
        return vaultNoContent(req);
      },
    },
  },
];
