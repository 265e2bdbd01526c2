/**
 * D1 reads of the console (N14) that the API has no query for: the organizations a
 * caller belongs to, an organization's enabled no-code modules with their pinned
 * versions, and a module's workspaces. Rights are checked by the callers (N10).
 */
import { and, asc, desc, eq, inArray } from "drizzle-orm";
import type { Db } from "../../db/client";
import { noCodeModules, registryModules, registryModuleVersions, teamMemberships, teams, workspaces } from "../../db/schema";
import type { ModuleSummary } from "../../lib/terraform/types";
import type { ConsoleSession } from "./session";
import type { NoCodeModuleRow } from "../no-code-modules/repo";
import { type RegistryModuleRow, versionSummary } from "../registry/repo";
import type { WorkspaceRow } from "../workspaces/repo";

/** Organizations the caller belongs to, by name (a user: through its teams; a team: its own). */
export async function callerOrganizations(db: Db, caller: ConsoleSession["caller"]): Promise<string[]> {
  if (caller.kind === "team") return [caller.organization];
  const rows = await db
    .selectDistinct({ organization: teams.organization })
    .from(teamMemberships)
    .innerJoin(teams, eq(teams.id, teamMemberships.teamId))
    .where(eq(teamMemberships.userId, caller.userId))
    .orderBy(asc(teams.organization))
    .all();
  return rows.map((r) => r.organization);
}

/** A no-code module as the catalog shows it. */
export interface CatalogEntry {
  module: NoCodeModuleRow;
  registryModule: RegistryModuleRow;
  /** The pinned version's summary, when that version is `ok`. */
  summary: ModuleSummary | null;
}

/** The enabled no-code modules of an organization with their registry modules and pinned versions' summaries. */
export async function catalog(db: Db, organization: string, options: { includeDisabled?: boolean } = {}): Promise<CatalogEntry[]> {
  const where = options.includeDisabled
    ? eq(noCodeModules.organization, organization)
    : and(eq(noCodeModules.organization, organization), eq(noCodeModules.enabled, true));
  const rows = await db
    .select({ module: noCodeModules, registryModule: registryModules })
    .from(noCodeModules)
    .innerJoin(registryModules, eq(registryModules.id, noCodeModules.registryModuleId))
    .where(where)
    .orderBy(asc(registryModules.name), asc(registryModules.provider))
    .limit(200)
    .all();
  const pinned = rows.filter((r) => r.module.versionPin !== null);
  const versions = pinned.length
    ? await db
        .select()
        .from(registryModuleVersions)
        .where(inArray(registryModuleVersions.moduleId, pinned.map((r) => r.registryModule.id)))
        .all()
    : [];
  return rows.map(({ module, registryModule }) => {
    const version = versions.find((v) => v.moduleId === registryModule.id && v.version === module.versionPin);
    return { module, registryModule, summary: version ? versionSummary(version) : null };
  });
}

/** The workspaces provisioned from a no-code module, newest first (at most 500). */
export function workspacesOfModule(db: Db, noCodeModuleId: string): Promise<WorkspaceRow[]> {
  return db.select().from(workspaces).where(eq(workspaces.noCodeModuleId, noCodeModuleId)).orderBy(desc(workspaces.createdAt)).limit(500).all();
}

/** The workspaces of an organization, by name (at most 500). */
export function workspacesOfOrganization(db: Db, organization: string): Promise<WorkspaceRow[]> {
  return db.select().from(workspaces).where(eq(workspaces.organization, organization)).orderBy(asc(workspaces.name)).limit(500).all();
}

/** Providers a version declares: `required_providers` entries and `provider` blocks, by name. */
export function providerNames(summary: ModuleSummary): string[] {
  const names = new Set<string>();
  for (const p of summary.requiredProviders) names.add(p.source ?? p.name);
  for (const p of summary.providerConfigs) if (![...names].some((n) => n === p.name || n.endsWith(`/${p.name}`))) names.add(p.name);
  return [...names].sort();
}

/** `private/<namespace>/<name>/<provider>`. */
export function moduleAddress(m: Pick<RegistryModuleRow, "namespace" | "name" | "provider">): string {
  return `private/${m.namespace}/${m.name}/${m.provider}`;
}
