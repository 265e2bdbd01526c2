/**
 * Private registry modules (decision N9; reference §5.1): create (private, no VCS),
 * read by id and by address, list, delete. Permissions (N10, N10a): writes need
 * `manage-registry-modules` (the organization token has it), the legacy `no-code: true`
 * also `manage-no-code-modules` (it does not); reads need membership; anything not
 * permitted is 404.
 */
import { Hono } from "hono";
import { createDb, type Db } from "../../db/client";
import { registryModules } from "../../db/schema";
import type { NocodeEnv } from "../env";
import type { NocodeCaller } from "../auth";
import { badRequest, invalidAttribute, notFound } from "../errors";
import { newId } from "../ids";
import { MAX_PAGE_NUMBER } from "../jsonapi";
import { hasOrgPermission, requireOrgPermission } from "../permissions";
import { jsonApi, noContent } from "../respond";
import { attributePointer, FieldErrors, readResourceAttributes } from "./body";
import { beforeRegistryModuleDelete, createLegacyNoCodeModule, includedNoCodeModules, noCodeModulesOf } from "./no-code-hooks";
import {
  deleteRegistryModuleRows,
  findRegistryModule,
  findRegistryModuleById,
  listRegistryModules,
  PRIVATE_REGISTRY,
  type RegistryModuleRow,
  versionStatusesOf,
} from "./repo";
import { paginationOf, registryModuleResource } from "./serialize";
import { rights } from "../route-rights";

/** Module names: letters, digits, inner `-` and `_`, at most 64 characters (reference §5.1). */
const MODULE_NAME_RE = /^[A-Za-z0-9](?:[A-Za-z0-9_-]{0,62}[A-Za-z0-9])?$/;
/** Provider names: lower-case letters and digits, at most 64 (reference §5.1). */
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
 * Resolve the module a path addresses, after checking the caller's permission in the
 * organization; 404 for an unknown module or a caller without the permission (N10).
 */
export async function resolveModule(
  db: Db,
  caller: NocodeCaller,
  p: ModuleAddressParams,
  permission: "member" | "manage-registry-modules",
): Promise<RegistryModuleRow> {
  await requireOrgPermission(db, caller, p.org, permission);
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

/** Serialize one module with its version statuses and the caller's rights. */
export async function renderModule(db: Db, caller: NocodeCaller, module: RegistryModuleRow) {
  const [statuses, noCode, canManage] = await Promise.all([
    versionStatusesOf(db, [module.id]),
    noCodeModulesOf(db, [module.id]),
    hasOrgPermission(db, caller, module.organization, "manage-registry-modules"),
  ]);
  return registryModuleResource(module, {
    versionStatuses: statuses.get(module.id) ?? [],
    noCodeModules: noCode.get(module.id) ?? [],
    canManage,
  });
}

/** Validated create attributes. */
interface ModuleCreate {
  name: string;
  provider: string;
  noCode: boolean;
}

function parseModuleCreate(org: string, attrs: Record<string, unknown>): ModuleCreate {
  const errors = new FieldErrors();
  const { name, provider } = attrs;
  if (typeof name !== "string" || name === "") errors.add(attributePointer("name"), "Name can't be blank");
  else if (!MODULE_NAME_RE.test(name)) {
    errors.add(
      attributePointer("name"),
      "Name may contain only letters, digits, dashes and underscores, must start and end with a letter or digit, and be at most 64 characters",
    );
  }
  if (typeof provider !== "string" || provider === "") errors.add(attributePointer("provider"), "Provider can't be blank");
  else if (!PROVIDER_RE.test(provider)) {
    errors.add(attributePointer("provider"), "Provider may contain only lower-case letters and digits, at most 64 characters");
  }
  const registryName = attrs["registry-name"] ?? PRIVATE_REGISTRY;
  if (registryName !== PRIVATE_REGISTRY) {
    errors.add(attributePointer("registry-name"), 'Registry name must be "private": only private modules can be created here');
  }
  const namespace = attrs.namespace;
  if (namespace !== undefined && namespace !== null && namespace !== org) {
    errors.add(attributePointer("namespace"), "Namespace of a private module must be its organization's name");
  }
  const noCode = attrs["no-code"] ?? false;
  if (typeof noCode !== "boolean") errors.add(attributePointer("no-code"), "No-code must be a boolean");
  const vcsRepo = attrs["vcs-repo"];
  if (vcsRepo !== undefined && vcsRepo !== null) {
    errors.add(attributePointer("vcs-repo"), "VCS-backed modules are not supported; publish versions through the API instead");
  }
  errors.throwIfAny();
  return { name: name as string, provider: provider as string, noCode: noCode as boolean };
}

/** Page parameters (reference §1.4): default size 20, at most 100; bad values fall back. */
export function pageParams(url: URL): { number: number; size: number } {
  const int = (raw: string | null, fallback: number, max: number) => {
    if (raw === null || !/^\d{1,9}$/.test(raw)) return fallback;
    const n = Number(raw);
    return n < 1 ? fallback : Math.min(n, max);
  };
  // B9: a well-formed page number above the bound is refused (400), not clamped.
  const rawNumber = url.searchParams.get("page[number]");
  if (rawNumber !== null && /^\d+$/.test(rawNumber) && Number(rawNumber) > MAX_PAGE_NUMBER) {
    throw badRequest(`page[number] must be at most ${MAX_PAGE_NUMBER}`);
  }
  return {
    number: int(rawNumber, 1, MAX_PAGE_NUMBER),
    size: int(url.searchParams.get("page[size]"), 20, 100),
  };
}

/** Routes of registry modules. */
export const moduleRoutes = new Hono<NocodeEnv>();

moduleRoutes.post("/organizations/:org/registry-modules", rights({ right: "manage-registry-modules" }), async (c) => {
  const org = c.req.param("org");
  const db = createDb(c.env.DB);
  const caller = c.var.caller;
  // N10: registry-module writes need manage-registry-modules (the organization token has it).
  await requireOrgPermission(db, caller, org, "manage-registry-modules");
  const attrs = await readResourceAttributes(c.req.raw, MODULE_TYPES);
  const input = parseModuleCreate(org, attrs);
  // N10a: the legacy `no-code: true` enables no-code provisioning as E1 does, so it needs
  // E1's right (the organization token lacks it → 404, as E1 answers it).
  if (input.noCode) await requireOrgPermission(db, caller, org, "manage-no-code-modules");
  const address = { organization: org, registryName: PRIVATE_REGISTRY, namespace: org, name: input.name, provider: input.provider };
  const taken = () => invalidAttribute("name", "Name has already been taken for this provider");
  if (await findRegistryModule(db, address)) throw taken();
  const now = Date.now();
  const row: RegistryModuleRow = { id: newId("mod"), ...address, noCode: input.noCode, createdAt: now, updatedAt: now };
  try {
    await db.insert(registryModules).values(row).run();
  } catch (err) {
    // A concurrent create of the same address loses on the unique index.
    if (await findRegistryModule(db, address)) throw taken();
    throw err;
  }
  // N9: the legacy `no-code: true` also creates an enabled no-code module (issue #7 hook).
  if (input.noCode) await createLegacyNoCodeModule(db, row, caller);
  return jsonApi({ data: await renderModule(db, caller, row) }, 201);
});

moduleRoutes.get("/organizations/:org/registry-modules", rights({ right: "member" }), async (c) => {
  const org = c.req.param("org");
  const db = createDb(c.env.DB);
  const caller = c.var.caller;
  await requireOrgPermission(db, caller, org, "member");
  const url = new URL(c.req.url);
  const include = url.searchParams.get("include");
  const includes = include === null ? [] : include.split(",").map((s) => s.trim());
  if (includes.some((s) => s !== "no-code-modules" && s !== "no_code_modules")) throw badRequest("Invalid include parameter");
  const page = pageParams(url);
  const filter = {
    q: url.searchParams.get("q") ?? undefined,
    provider: url.searchParams.get("filter[provider]") ?? undefined,
    registryName: url.searchParams.get("filter[registry_name]") ?? undefined,
  };
  const { rows, total } = await listRegistryModules(db, org, filter, { offset: (page.number - 1) * page.size, limit: page.size });
  const ids = rows.map((r) => r.id);
  const [statuses, noCode, canManage] = await Promise.all([
    versionStatusesOf(db, ids),
    noCodeModulesOf(db, ids),
    hasOrgPermission(db, caller, org, "manage-registry-modules"),
  ]);
  const data = rows.map((m) =>
    registryModuleResource(m, { versionStatuses: statuses.get(m.id) ?? [], noCodeModules: noCode.get(m.id) ?? [], canManage }),
  );
  const doc: Record<string, unknown> = { data, ...paginationOf(url, page, total) };
  if (includes.length > 0) doc.included = await includedNoCodeModules(db, [...noCode.values()].flat());
  return jsonApi(doc);
});

moduleRoutes.get("/registry-modules/:id", rights({ right: "member" }), async (c) => {
  const db = createDb(c.env.DB);
  const module = await findRegistryModuleById(db, c.req.param("id"));
  if (!module) throw notFound();
  await requireOrgPermission(db, c.var.caller, module.organization, "member");
  return jsonApi({ data: await renderModule(db, c.var.caller, module) });
});

moduleRoutes.get("/organizations/:org/registry-modules/:registry/:namespace/:name/:provider", rights({ right: "member" }), async (c) => {
  const db = createDb(c.env.DB);
  const module = await resolveModule(db, c.var.caller, c.req.param(), "member");
  return jsonApi({ data: await renderModule(db, c.var.caller, module) });
});

moduleRoutes.delete("/organizations/:org/registry-modules/:registry/:namespace/:name/:provider", rights({ right: "manage-registry-modules" }), async (c) => {
  const db = createDb(c.env.DB);
  const module = await resolveModule(db, c.var.caller, c.req.param(), "manage-registry-modules");
  await beforeRegistryModuleDelete(db, module);
  const keys = await deleteRegistryModuleRows(db, module.id);
  if (keys.length > 0) await c.env.MODULES.delete(keys);
  return noContent();
});
