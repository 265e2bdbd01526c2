/**
 * JSON:API shapes of `registry-modules` and `registry-module-versions` (decisions N1, N9;
 * reference §1.3, §1.4, §5.1). Serializers own these shapes; handlers never return rows.
 */
import type { JsonValue, ModuleSummary, VariableSummary } from "../../lib/terraform/types";
import { isoTime } from "../respond";
import type { NoCodeModuleRef } from "./no-code-hooks";
import { type RegistryModuleRow, type RegistryModuleVersionRow, type VersionStatus, versionSummary } from "./repo";

const API = "/api/v2";

/** `/api/v2/organizations/<org>/registry-modules/<registry>/<namespace>/<name>/<provider>` (reference §5.1). */
export function registryModulePath(m: Pick<RegistryModuleRow, "organization" | "registryName" | "namespace" | "name" | "provider">): string {
  const parts = [m.organization, "registry-modules", m.registryName, m.namespace, m.name, m.provider].map(encodeURIComponent);
  return `${API}/organizations/${parts.join("/")}`;
}

/**
 * Module status as HCP Terraform reports it for API-published modules: `setup_complete`
 * once a version is `ok`, `pending` before.
 */
export function registryModuleStatus(versions: readonly VersionStatus[]): "pending" | "setup_complete" {
  return versions.some((v) => v.status === "ok") ? "setup_complete" : "pending";
}

/** What the serializer needs besides the row. */
export interface RegistryModuleContext {
  versionStatuses: readonly VersionStatus[];
  noCodeModules: readonly NoCodeModuleRef[];
  /** Whether the caller may delete the module (manage-modules, N10). */
  canManage: boolean;
}

/** A `registry-modules` resource object. */
export function registryModuleResource(m: RegistryModuleRow, ctx: RegistryModuleContext) {
  return {
    id: m.id,
    type: "registry-modules",
    attributes: {
      name: m.name,
      namespace: m.namespace,
      provider: m.provider,
      "registry-name": m.registryName,
      "no-code": m.noCode,
      status: registryModuleStatus(ctx.versionStatuses),
      "version-statuses": ctx.versionStatuses.map((v) => ({ version: v.version, status: v.status, error: v.error })),
      "vcs-repo": null,
      "publishing-mechanism": null,
      permissions: { "can-delete": ctx.canManage, "can-resync": ctx.canManage, "can-retry": ctx.canManage },
      "created-at": isoTime(m.createdAt),
      "updated-at": isoTime(m.updatedAt),
    },
    relationships: {
      organization: {
        data: { id: m.organization, type: "organizations" },
        links: { related: `${API}/organizations/${encodeURIComponent(m.organization)}` },
      },
      "no-code-modules": { data: ctx.noCodeModules.map((n) => ({ id: n.id, type: n.type })) },
    },
    links: { self: registryModulePath(m) },
  };
}

/**
 * A variable's default as the API shows it: the value of a literal default; the source
 * text of any other expression; null when absent (then `required` is true).
 */
function defaultValue(v: VariableSummary): JsonValue {
  if (v.default === null) return null;
  return v.default.literal ? v.default.value : v.default.source;
}

/**
 * Providers as the API shows them (N9): every `required_providers` entry, then every
 * `provider` block whose local name has no such entry (source and constraint unknown).
 */
export function providersOf(summary: Pick<ModuleSummary, "requiredProviders" | "providerConfigs">) {
  const out = summary.requiredProviders.map((p) => ({ name: p.name, source: p.source, "version-constraint": p.version }));
  const seen = new Set(out.map((p) => p.name));
  for (const config of summary.providerConfigs) {
    if (seen.has(config.name)) continue;
    seen.add(config.name);
    out.push({ name: config.name, source: null, "version-constraint": null });
  }
  return out;
}

/**
 * Attributes of what ingestion read from a version's root module (N4, N9); null until
 * the version is `ok`. Resources are the managed `resource` blocks; `references` lists the
 * variables and locals each one mentions.
 */
export function ingestedAttributes(summary: ModuleSummary | null) {
  if (!summary) return { variables: null, outputs: null, providers: null, resources: null };
  return {
    variables: summary.variables.map((v) => ({
      name: v.name,
      type: v.type,
      default: defaultValue(v),
      description: v.description,
      sensitive: v.sensitive,
      nullable: v.nullable,
      required: v.required,
    })),
    outputs: summary.outputs.map((o) => ({ name: o.name, description: o.description, sensitive: o.sensitive })),
    providers: providersOf(summary),
    resources: summary.resources.map((r) => ({
      address: r.address,
      type: r.type,
      name: r.name,
      references: { variables: r.references.variables, locals: r.references.locals },
    })),
  };
}

/** A `registry-module-versions` resource object; `uploadLink` only right after creation. */
export function registryModuleVersionResource(module: RegistryModuleRow, v: RegistryModuleVersionRow, uploadLink?: string) {
  const links: Record<string, string> = {
    self: `${registryModulePath(module)}/version?module_version=${encodeURIComponent(v.version)}`,
  };
  if (uploadLink) links.upload = uploadLink;
  return {
    id: v.id,
    type: "registry-module-versions",
    attributes: {
      source: "tfe-api",
      status: v.status,
      version: v.version,
      error: v.error,
      "commit-sha": v.commitSha,
      "created-at": isoTime(v.createdAt),
      "updated-at": isoTime(v.updatedAt),
      ...ingestedAttributes(versionSummary(v)),
    },
    relationships: {
      "registry-module": {
        data: { id: module.id, type: "registry-modules" },
        links: { related: `${API}/registry-modules/${module.id}` },
      },
    },
    links,
  };
}

/** JSON:API pagination of a list (reference §1.4): `meta.pagination` and absolute links. */
export function paginationOf(url: URL, page: { number: number; size: number }, total: number) {
  const totalPages = Math.max(1, Math.ceil(total / page.size));
  const at = (n: number) => {
    const u = new URL(url);
    u.searchParams.set("page[number]", String(n));
    u.searchParams.set("page[size]", String(page.size));
    return u.toString();
  };
  return {
    meta: {
      pagination: {
        "current-page": page.number,
        "page-size": page.size,
        "prev-page": page.number > 1 ? page.number - 1 : null,
        "next-page": page.number < totalPages ? page.number + 1 : null,
        "total-pages": totalPages,
        "total-count": total,
      },
    },
    links: {
      self: at(page.number),
      first: at(1),
      prev: page.number > 1 ? at(page.number - 1) : null,
      next: page.number < totalPages ? at(page.number + 1) : null,
      last: at(totalPages),
    },
  };
}
