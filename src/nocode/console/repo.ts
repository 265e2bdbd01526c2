/**
 * D1 reads of the console (N14) that the API has no query for: the organizations a
 * caller belongs to, an organization's enabled no-code modules with their pinned
 * versions, and a module's workspaces. Rights are checked by the callers (N10).
 */
import { and, asc, desc, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import {
  noCodeModules,
  registryModules,
  registryModuleVersions,
  teamMemberships,
  teams,
  workspaces,
} from "../../db/schema/nocode";
import type { ConsoleSession } from "../browser/console-session";
import type { NoCodeModuleRow } from "../no-code-modules/repo";
import type { RegistryModuleRow } from "../registry/repo";
import type { WorkspaceRow } from "../workspaces/repo";

/** Organizations the caller belongs to, by name (a user: through its teams; a team: its own). */
export async function callerOrganizations(db: Db, caller: ConsoleSession["caller"]): Promise<string[]> {
  if (caller.kind === "team") return [caller.organization];
  // N16: an SSO session sees its own organization only.
  if (caller.onlyOrganization !== undefined) return [caller.onlyOrganization];
  const rows = await db
    .selectDistinct({ organization: teams.organization })
    .from(teamMemberships)
    .innerJoin(teams, eq(teams.id, teamMemberships.teamId))
    .where(eq(teamMemberships.userId, caller.userId))
    .orderBy(asc(teams.organization))
    .all();
  return rows.map((r) => r.organization);
}

/** What the catalog tells of a pinned `ok` version, computed in D1 (summaries can be large, B9). */
export interface VersionFacts {
  resources: number;
  variables: number;
  /** Provider sources (or names) of `required_providers`, and `provider` blocks not listed there. */
  providers: string[];
}

/** A no-code module as the catalog shows it. */
export interface CatalogEntry {
  module: NoCodeModuleRow;
  registryModule: RegistryModuleRow;
  /** Facts of the pinned version, when that version is `ok`. */
  facts: VersionFacts | null;
}

const summaryColumn = registryModuleVersions.summary;
/** Counts and provider names out of the stored summary JSON, without reading it into the isolate. */
const factsColumns = {
  resources: sql<number | null>`json_array_length(${summaryColumn}, '$.resources')`,
  variables: sql<number | null>`json_array_length(${summaryColumn}, '$.variables')`,
  providers: sql<string | null>`(SELECT json_group_array(p) FROM (
    SELECT coalesce(json_extract(value, '$.source'), json_extract(value, '$.name')) AS p FROM json_each(${summaryColumn}, '$.requiredProviders')
    UNION
    SELECT json_extract(value, '$.name') FROM json_each(${summaryColumn}, '$.providerConfigs')
    WHERE json_extract(value, '$.name') NOT IN (SELECT json_extract(value, '$.name') FROM json_each(${summaryColumn}, '$.requiredProviders'))
    ORDER BY 1))`,
};

/**
 * The no-code modules of an organization (enabled ones only, unless asked) with their
 * registry modules and the facts of their pinned versions: one statement (B8: no id lists).
 */
export async function catalog(
  db: Db,
  organization: string,
  options: { includeDisabled?: boolean } = {},
): Promise<CatalogEntry[]> {
  const where = options.includeDisabled
    ? eq(noCodeModules.organization, organization)
    : and(eq(noCodeModules.organization, organization), eq(noCodeModules.enabled, true));
  const rows = await db
    .select({
      module: noCodeModules,
      registryModule: registryModules,
      status: registryModuleVersions.status,
      ...factsColumns,
    })
    .from(noCodeModules)
    .innerJoin(registryModules, eq(registryModules.id, noCodeModules.registryModuleId))
    .leftJoin(
      registryModuleVersions,
      and(
        eq(registryModuleVersions.moduleId, noCodeModules.registryModuleId),
        eq(registryModuleVersions.version, noCodeModules.versionPin),
      ),
    )
    .where(where)
    .orderBy(asc(registryModules.name), asc(registryModules.provider))
    .limit(200)
    .all();
  return rows.map(({ module, registryModule, status, resources, variables, providers }) => ({
    module,
    registryModule,
    facts:
      status === "ok" && resources !== null
        ? { resources, variables: variables ?? 0, providers: providers ? (JSON.parse(providers) as string[]) : [] }
        : null,
  }));
}

/** The workspaces provisioned from a no-code module, newest first (at most 500). */
export function workspacesOfModule(db: Db, noCodeModuleId: string): Promise<WorkspaceRow[]> {
  return db
    .select()
    .from(workspaces)
    .where(eq(workspaces.noCodeModuleId, noCodeModuleId))
    .orderBy(desc(workspaces.createdAt))
    .limit(500)
    .all();
}

/** The workspaces of an organization, by name (at most 500). */
export function workspacesOfOrganization(db: Db, organization: string): Promise<WorkspaceRow[]> {
  return db
    .select()
    .from(workspaces)
    .where(eq(workspaces.organization, organization))
    .orderBy(asc(workspaces.name))
    .limit(500)
    .all();
}

/** `private/<namespace>/<name>/<provider>`. */
export function moduleAddress(m: Pick<RegistryModuleRow, "namespace" | "name" | "provider">): string {
  return `private/${m.namespace}/${m.name}/${m.provider}`;
}
