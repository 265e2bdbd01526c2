/**
 * Organizations (N9): creating one also creates its team `owners` and its project
 * `Default Project`, in one D1 batch.
 */
import { eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { organizations, projects, teams } from "../../db/schema/nocode";
import { OWNERS_TEAM } from "../access/permissions";
import { newId } from "../ids";

export type OrganizationRow = typeof organizations.$inferSelect;

/** Name of the project every organization starts with (N6: workspaces default to it). */
export const DEFAULT_PROJECT_NAME = "Default Project";

/** The organization named `name`, or undefined. */
export async function findOrganization(db: Db, name: string): Promise<OrganizationRow | undefined> {
  return db.select().from(organizations).where(eq(organizations.name, name)).get();
}

/** The id of the organization's `Default Project`, or undefined when there is no such organization. */
export async function defaultProjectId(db: Db, organization: string): Promise<string | undefined> {
  return (await defaultProjectIdQuery(db, organization))[0]?.id;
}

/** The select behind defaultProjectId, for a `db.batch` with other reads (no row: no such organization). */
export function defaultProjectIdQuery(db: Db, organization: string) {
  return db
    .select({ id: organizations.defaultProjectId })
    .from(organizations)
    .where(eq(organizations.name, organization))
    .limit(1);
}

/** Create an organization with its `owners` team and `Default Project`. */
export async function createOrganization(
  db: Db,
  input: { name: string; email: string },
): Promise<{ organization: OrganizationRow; ownersTeamId: string }> {
  const now = Date.now();
  const projectId = newId("prj");
  const ownersTeamId = newId("team");
  const organization: OrganizationRow = {
    name: input.name,
    email: input.email,
    defaultProjectId: projectId,
    createdAt: now,
  };
  await db.batch([
    db.insert(organizations).values(organization),
    db.insert(teams).values({ id: ownersTeamId, organization: input.name, name: OWNERS_TEAM, createdAt: now }),
    db.insert(projects).values({ id: projectId, organization: input.name, name: DEFAULT_PROJECT_NAME, createdAt: now }),
  ]);
  return { organization, ownersTeamId };
}

/** The id of the organization's `owners` team. */
export async function ownersTeamId(db: Db, organization: string): Promise<string | undefined> {
  const rows = await db
    .select({ id: teams.id, name: teams.name })
    .from(teams)
    .where(eq(teams.organization, organization))
    .all();
  return rows.find((r) => r.name === OWNERS_TEAM)?.id;
}
