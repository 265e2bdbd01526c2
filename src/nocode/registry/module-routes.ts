/**
 * Private registry modules (decision N9; HCP Terraform's private registry API): create (private, no VCS),
 * read by id and by address, list, delete. Permissions (N10, N10a): writes need
 * `manage-registry-modules` (the organization token has it), the legacy `no-code: true`
 * also `manage-no-code-modules` (it does not); reads need membership; anything not
 * permitted is 404.
 */
import { Hono } from "hono";
import * as v from "valibot";
import type { Db } from "../../db/client";
import { insertUnique } from "../../db/unique";
import type { OrgPermission } from "../access/permissions";
import type { NocodeEnv } from "../env";
import { invalidAttribute, notFound } from "../errors";
import { newId } from "../ids";
import { single } from "../request/answers";
import { requiredText, resourceDocument } from "../request/document";
import { operation } from "../request/operation";
import { includeParameter, pageOf, pageParameters } from "../request/query";
import { jsonApi, jsonApiPage, noContent } from "../respond";
import { rights, scope } from "../route-rights";
import type { RegistryNoCodeHooks } from "./no-code-hooks";
import {
  deleteRegistryModuleRows,
  findRegistryModule,
  findRegistryModuleById,
  insertRegistryModule,
  listRegistryModules,
  PRIVATE_REGISTRY,
  type RegistryModuleRow,
  versionStatusesOf,
} from "./repo";
import { registryModuleAnswer, registryModuleListAnswer, registryModuleResource } from "./serialize";

/** Module names: letters, digits, inner `-` and `_`, at most 64 characters (HCP Terraform's private registry API). */
const MODULE_NAME_RE = /^[A-Za-z0-9](?:[A-Za-z0-9_-]{0,62}[A-Za-z0-9])?$/;
/** Provider names: lower-case letters and digits, at most 64 (HCP Terraform's private registry API). */
const PROVIDER_RE = /^[a-z0-9]{1,64}$/;

/** Accepted `data.type` of a module create (N1: tolerant input). */
const MODULE_TYPES = ["registry-modules", "registry-module"] as const;

/** Path parameters that address a module. */
export interface ModuleAddressParams {
  org: string;
  registry: string;
  namespace: string;
  name: string;
  provider: string;
}

/**
 * The module a path addresses (its route's rights have checked the organization `p.org`);
 * 404 for an unknown module (N10).
 */
export async function resolveModule(db: Db, p: ModuleAddressParams): Promise<RegistryModuleRow> {
  // Only the private registry exists; a private module's namespace is its organization.
  if (p.registry !== PRIVATE_REGISTRY || p.namespace !== p.org) throw notFound();
  const module = await findRegistryModule(db, {
    organization: p.org,
    registryName: p.registry,
    namespace: p.namespace,
    name: p.name,
    provider: p.provider,
  });
  if (!module) throw notFound();
  return module;
}

/** Serialize one module with its version statuses, its no-code modules and the caller's rights. */
async function renderModule(
  db: Db,
  noCodeHooks: RegistryNoCodeHooks,
  rights: ReadonlySet<OrgPermission>,
  module: RegistryModuleRow,
) {
  const canManage = rights.has("manage-registry-modules");
  const [statuses, noCode] = await Promise.all([
    versionStatusesOf(db, [module.id]),
    noCodeHooks.noCodeModulesOf(db, [module.id]),
  ]);
  return registryModuleResource(module, {
    versionStatuses: statuses.get(module.id) ?? [],
    noCodeModules: noCode.get(module.id) ?? [],
    canManage,
  });
}

/** The attributes of a module create (HCP Terraform's private registry API); only private, API-published modules. */
const moduleCreateAttributes = {
  name: v.pipe(
    requiredText("name"),
    v.regex(
      MODULE_NAME_RE,
      "Name may contain only letters, digits, dashes and underscores, must start and end with a letter or digit, and be at most 64 characters",
    ),
  ),
  provider: v.pipe(
    requiredText("provider"),
    v.regex(PROVIDER_RE, "Provider may contain only lower-case letters and digits, at most 64 characters"),
  ),
  "registry-name": v.optional(
    v.nullable(
      v.literal(PRIVATE_REGISTRY, 'Registry name must be "private": only private modules can be created here'),
    ),
  ),
  namespace: v.optional(v.nullable(v.string("Namespace of a private module must be its organization's name"))),
  "no-code": v.optional(v.nullable(v.boolean("No-code must be a boolean"))),
  "vcs-repo": v.optional(v.null("VCS-backed modules are not supported; publish versions through the API instead")),
};

const moduleCreate = operation({
  tag: "registry",
  summary:
    "Create a private registry module (manage-registry-modules; `no-code: true` also manage-no-code-modules: N10a)",
  body: resourceDocument({ types: MODULE_TYPES, attributes: moduleCreateAttributes }),
  answers: { 201: { description: "The module", schema: single(registryModuleAnswer) } },
});

const moduleList = operation({
  tag: "registry",
  summary: "List an organization's registry modules (members)",
  query: v.looseObject({
    ...pageParameters,
    include: includeParameter(["no-code-modules", "no_code_modules"]),
    q: v.optional(v.string()),
    "filter[provider]": v.optional(v.string()),
    "filter[registry_name]": v.optional(v.string()),
  }),
  answers: {
    200: {
      description: "One page of modules (with `included` no-code modules when asked)",
      schema: registryModuleListAnswer,
    },
  },
});

const moduleShow = operation({
  tag: "registry",
  summary: "Show a registry module (members)",
  answers: { 200: { description: "The module", schema: single(registryModuleAnswer) } },
});

const moduleDelete = operation({
  tag: "registry",
  summary: "Delete a registry module with its versions and tarballs (manage-registry-modules)",
  answers: { 204: { description: "Deleted" } },
});

/** The registry module `:id`. */
const registryModuleById = scope(async (c) => {
  const module = await findRegistryModuleById(c.var.db, c.req.param("id") ?? "");
  return module && { resource: module, organization: module.organization };
});

/**
 * Routes of registry modules. `noCodeHooks` answers for the no-code modules built on them
 * (the `no-code-modules` relationship and include, the legacy `no-code: true`, the cascade
 * on delete): the no-code modules feature provides it, since it imports the registry.
 */
export function registryModuleRoutes(noCodeHooks: RegistryNoCodeHooks): Hono<NocodeEnv> {
  const routes = new Hono<NocodeEnv>();

  routes.post(
    "/organizations/:org/registry-modules",
    rights({ right: "manage-registry-modules" }),
    moduleCreate,
    async (c) => {
      const org = c.req.param("org");
      const db = c.var.db;
      const caller = c.var.caller;
      const attributes = (await moduleCreate.body(c)).data.attributes;
      // A private module's namespace is its organization (N9).
      if (attributes.namespace !== undefined && attributes.namespace !== null && attributes.namespace !== org) {
        throw invalidAttribute("namespace", "Namespace of a private module must be its organization's name");
      }
      const input = { name: attributes.name, provider: attributes.provider, noCode: attributes["no-code"] ?? false };
      // N10a: the legacy `no-code: true` enables no-code provisioning as E1 does, so it needs
      // E1's right (the organization token lacks it → 404, as E1 answers it).
      // The one right that depends on the body: read from the rights the route's check loaded.
      if (input.noCode && !c.var.orgRights.has("manage-no-code-modules")) throw notFound();
      const address = {
        organization: org,
        registryName: PRIVATE_REGISTRY,
        namespace: org,
        name: input.name,
        provider: input.provider,
      };
      const taken = () => invalidAttribute("name", "Name has already been taken for this provider");
      if (await findRegistryModule(db, address)) throw taken();
      const now = Date.now();
      const row: RegistryModuleRow = {
        id: newId("mod"),
        ...address,
        noCode: input.noCode,
        createdAt: now,
        updatedAt: now,
      };
      // A concurrent create of the same address loses on the unique index.
      await insertUnique(insertRegistryModule(db, row), taken);
      // N9: the legacy `no-code: true` also creates an enabled no-code module.
      if (input.noCode) await noCodeHooks.createLegacyNoCodeModule(db, row, caller);
      return jsonApi({ data: await renderModule(db, noCodeHooks, c.var.orgRights, row) }, 201);
    },
  );

  routes.get("/organizations/:org/registry-modules", rights({ right: "member" }), moduleList, async (c) => {
    const org = c.req.param("org");
    const db = c.var.db;
    const query = moduleList.query(c);
    const includes = query.include ?? [];
    const page = pageOf(query);
    const filter = { q: query.q, provider: query["filter[provider]"], registryName: query["filter[registry_name]"] };
    const listed = await listRegistryModules(db, org, filter, page);
    const ids = listed.rows.map((r) => r.id);
    const canManage = c.var.orgRights.has("manage-registry-modules");
    const [statuses, noCode] = await Promise.all([versionStatusesOf(db, ids), noCodeHooks.noCodeModulesOf(db, ids)]);
    const included =
      includes.length > 0 ? { included: await noCodeHooks.includedNoCodeModules(db, [...noCode.values()].flat()) } : {};
    return jsonApiPage(
      c.req.url,
      page,
      listed,
      (m) =>
        registryModuleResource(m, {
          versionStatuses: statuses.get(m.id) ?? [],
          noCodeModules: noCode.get(m.id) ?? [],
          canManage,
        }),
      included,
    );
  });

  routes.get(
    "/registry-modules/:id",
    rights({ right: "member" }, { scope: registryModuleById }),
    moduleShow,
    async (c) =>
      jsonApi({ data: await renderModule(c.var.db, noCodeHooks, c.var.orgRights, registryModuleById.of(c)) }),
  );

  routes.get(
    "/organizations/:org/registry-modules/:registry/:namespace/:name/:provider",
    rights({ right: "member" }),
    moduleShow,
    async (c) => {
      const db = c.var.db;
      const module = await resolveModule(db, c.req.param());
      return jsonApi({ data: await renderModule(db, noCodeHooks, c.var.orgRights, module) });
    },
  );

  routes.delete(
    "/organizations/:org/registry-modules/:registry/:namespace/:name/:provider",
    rights({ right: "manage-registry-modules" }),
    moduleDelete,
    async (c) => {
      const db = c.var.db;
      const module = await resolveModule(db, c.req.param());
      await noCodeHooks.beforeRegistryModuleDelete(db, module);
      const keys = await deleteRegistryModuleRows(db, module.id);
      if (keys.length > 0) await c.env.MODULES.delete(keys);
      return noContent();
    },
  );

  return routes;
}
