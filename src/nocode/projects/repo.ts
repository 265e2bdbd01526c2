/** Projects (N9, HCP Terraform's projects API). */
import { and, eq, like, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { inJsonList } from "../../db/json-list";
import { type Page, type PageWindow, tablePage } from "../../db/page";
import { projects } from "../../db/schema/nocode";

export type ProjectRow = typeof projects.$inferSelect;

/** A project by id. */
export async function findProject(db: Db, id: string): Promise<ProjectRow | undefined> {
  return db.select().from(projects).where(eq(projects.id, id)).get();
}

/** The id of project `id` if it belongs to `organization` (no row otherwise), for a `db.batch` with other reads. */
export function projectIdInOrganizationQuery(db: Db, organization: string, id: string) {
  return db
    .select({ id: projects.id })
    .from(projects)
    .where(and(eq(projects.id, id), eq(projects.organization, organization)))
    .limit(1);
}

/** Which of the projects `ids` belong to `organization` (their ids). */
export function projectIdsInOrganization(db: Db, organization: string, ids: string[]): Promise<{ id: string }[]> {
  return db
    .select({ id: projects.id })
    .from(projects)
    .where(and(eq(projects.organization, organization), inJsonList(projects.id, ids)))
    .all();
}

/** Inserts a project; its UNIQUE (organization, name) index refuses a taken name (see insertUnique). */
export function insertProject(db: Db, project: ProjectRow) {
  return db.insert(projects).values(project);
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (ch) => `\\${ch}`);
}

/** A page of an organization's projects by name (optionally those whose name contains `q`) and the total. */
export async function listProjects(
  db: Db,
  organization: string,
  page: PageWindow,
  q?: string,
): Promise<Page<ProjectRow>> {
  let where: SQL | undefined = eq(projects.organization, organization);
  if (q) where = and(where, like(projects.name, `%${escapeLike(q)}%`));
  return tablePage(db, projects, where, [projects.name], page);
}
