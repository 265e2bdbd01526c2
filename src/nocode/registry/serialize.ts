/**
 * JSON:API shapes of `registry-modules` and `registry-module-versions` (decisions N1, N9;
 * HCP Terraform's JSON:API conventions, pagination and private registry
 * API). Serializers own these shapes; handlers never return rows.
 */

import * as v from "valibot";
import type { JsonValue, ModuleSummary, VariableSummary } from "../../lib/terraform/types";
import { pagination, timestamp } from "../request/answers";
import { isoTime } from "../respond";
import type { NoCodeModuleRef } from "./no-code-hooks";
import { type RegistryModuleRow, type RegistryModuleVersionRow, type VersionStatus, versionSummary } from "./repo";

const API = "/api/v2";

/** `/api/v2/organizations/<org>/registry-modules/<registry>/<namespace>/<name>/<provider>` (HCP Terraform's private registry API). */
export function registryModulePath(
  m: Pick<RegistryModuleRow, "organization" | "registryName" | "namespace" | "name" | "provider">,
): string {
  const parts = [m.organization, "registry-modules", m.registryName, m.namespace, m.name, m.provider].map(
    encodeURIComponent,
  );
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
  const out = summary.requiredProviders.map((p) => ({
    name: p.name,
    source: p.source,
    "version-constraint": p.version,
  }));
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
export function registryModuleVersionResource(
  module: RegistryModuleRow,
  v: RegistryModuleVersionRow,
  uploadLink?: string,
) {
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

// ---------------------------------------------------------------------------
// B14: the shapes above, for the route descriptions and the OpenAPI document
// ---------------------------------------------------------------------------

const relatedLink = v.strictObject({ related: v.string() });

/** The resource registryModuleResource renders. */
export const registryModuleAnswer = v.strictObject({
  id: v.string(),
  type: v.literal("registry-modules"),
  attributes: v.strictObject({
    name: v.string(),
    namespace: v.string(),
    provider: v.string(),
    "registry-name": v.string(),
    "no-code": v.boolean(),
    status: v.picklist(["pending", "setup_complete"]),
    "version-statuses": v.array(
      v.strictObject({ version: v.string(), status: v.string(), error: v.nullable(v.string()) }),
    ),
    "vcs-repo": v.null(),
    "publishing-mechanism": v.null(),
    permissions: v.strictObject({ "can-delete": v.boolean(), "can-resync": v.boolean(), "can-retry": v.boolean() }),
    "created-at": timestamp,
    "updated-at": timestamp,
  }),
  relationships: v.strictObject({
    organization: v.strictObject({
      data: v.strictObject({ id: v.string(), type: v.literal("organizations") }),
      links: relatedLink,
    }),
    "no-code-modules": v.strictObject({ data: v.array(v.strictObject({ id: v.string(), type: v.string() })) }),
  }),
  links: v.strictObject({ self: v.string() }),
});

/** A page of modules; `included` holds the no-code modules asked for with `include`. */
export const registryModuleListAnswer = v.strictObject({
  data: v.array(registryModuleAnswer),
  included: v.optional(v.array(v.looseObject({ id: v.string(), type: v.string() }))),
  meta: v.strictObject({ pagination }),
  links: v.strictObject({
    self: v.string(),
    first: v.string(),
    prev: v.nullable(v.string()),
    next: v.nullable(v.string()),
    last: v.string(),
  }),
});

/** What ingestion read (N4, N9): null until the version is `ok`. */
const ingested = {
  variables: v.nullable(
    v.array(
      v.strictObject({
        name: v.string(),
        type: v.nullable(v.string()),
        default: v.unknown(),
        description: v.nullable(v.string()),
        sensitive: v.boolean(),
        nullable: v.boolean(),
        required: v.boolean(),
      }),
    ),
  ),
  outputs: v.nullable(
    v.array(v.strictObject({ name: v.string(), description: v.nullable(v.string()), sensitive: v.boolean() })),
  ),
  providers: v.nullable(
    v.array(
      v.strictObject({
        name: v.string(),
        source: v.nullable(v.string()),
        "version-constraint": v.nullable(v.string()),
      }),
    ),
  ),
  resources: v.nullable(
    v.array(
      v.strictObject({
        address: v.string(),
        type: v.string(),
        name: v.string(),
        references: v.strictObject({ variables: v.array(v.string()), locals: v.array(v.string()) }),
      }),
    ),
  ),
};

/** The resource registryModuleVersionResource renders; `links.upload` right after creation only. */
export const registryModuleVersionAnswer = v.strictObject({
  id: v.string(),
  type: v.literal("registry-module-versions"),
  attributes: v.strictObject({
    source: v.literal("tfe-api"),
    status: v.string(),
    version: v.string(),
    error: v.nullable(v.string()),
    "commit-sha": v.nullable(v.string()),
    "created-at": timestamp,
    "updated-at": timestamp,
    ...ingested,
  }),
  relationships: v.strictObject({
    "registry-module": v.strictObject({
      data: v.strictObject({ id: v.string(), type: v.literal("registry-modules") }),
      links: relatedLink,
    }),
  }),
  links: v.strictObject({ self: v.string(), upload: v.optional(v.string()) }),
});
