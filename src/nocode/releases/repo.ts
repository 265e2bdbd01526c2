/** The engine release list's queries (decision N6). */
import { eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import type { Page, PageWindow } from "../../db/page";
import { terraformVersions } from "../../db/schema/nocode";
import type { ReleaseRow } from "./serialize";
import { compareVersions, parseVersion } from "./version-constraints";

/** A release by id. */
export async function findRelease(db: Db, id: string): Promise<ReleaseRow | undefined> {
  return db.select().from(terraformVersions).where(eq(terraformVersions.id, id)).get();
}

/** Every release's version and flags, what the resolver (./resolve.ts) chooses among. */
export async function releaseCandidates(db: Db) {
  return db
    .select({
      version: terraformVersions.version,
      enabled: terraformVersions.enabled,
      beta: terraformVersions.beta,
      deprecated: terraformVersions.deprecated,
    })
    .from(terraformVersions);
}

/** Whether a release other than `exceptId` already has `version`. */
export async function versionInUse(db: Db, version: string, exceptId?: string): Promise<boolean> {
  const row = await db
    .select({ id: terraformVersions.id })
    .from(terraformVersions)
    .where(eq(terraformVersions.version, version))
    .get();
  return row !== undefined && row.id !== exceptId;
}

/** What a listing keeps: `exact` is a comma-separated list of versions, `search` a substring. */
export interface ReleaseFilter {
  exact?: string;
  search?: string;
}

/**
 * A page of the release list, newest first by version precedence (not by string). The list
 * is short (every stable 1.x release), so it is filtered and ordered here rather than in SQL,
 * which cannot order by semantic-version precedence.
 */
export async function listReleases(db: Db, filter: ReleaseFilter, page: PageWindow): Promise<Page<ReleaseRow>> {
  let rows = await db.select().from(terraformVersions).all();
  const { exact, search } = filter;
  if (exact) rows = rows.filter((r) => exact.split(",").includes(r.version));
  if (search) rows = rows.filter((r) => r.version.includes(search));
  rows.sort((a, b) => {
    const va = parseVersion(a.version);
    const vb = parseVersion(b.version);
    return va && vb ? compareVersions(vb, va) : b.version.localeCompare(a.version);
  });
  return { rows: rows.slice(page.offset, page.offset + page.size), total: rows.length };
}

/** Inserts a release; its UNIQUE version index refuses a taken version (see insertUnique). */
export function insertRelease(db: Db, row: ReleaseRow) {
  return db.insert(terraformVersions).values(row);
}

/** Writes a changed release; the UNIQUE version index refuses a taken version. */
export function updateRelease(db: Db, row: ReleaseRow) {
  return db.update(terraformVersions).set(row).where(eq(terraformVersions.id, row.id));
}

/** Removes a release from the list. */
export async function deleteRelease(db: Db, id: string): Promise<void> {
  await db.delete(terraformVersions).where(eq(terraformVersions.id, id));
}
