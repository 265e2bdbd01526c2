/**
 * D1 access for private registry modules and their versions (decisions N3, N4, N9).
 * Multi-row writes use `db.batch` (never `db.transaction()` on D1).
 */
import { and, asc, eq, exists, gt, inArray, isNull, lt, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { inJsonList } from "../../db/json-list";
import { type Page, type PageWindow, tablePage } from "../../db/page";
import {
  registryModules,
  registryModuleVersions,
  registryUploadAttempts,
  registryUploadLinks,
} from "../../db/schema/nocode";
import type { ModuleSummary } from "../../lib/terraform/types";
import { compareVersionStrings, pickLatestRelease } from "./semver";

/** A registry module row. */
export type RegistryModuleRow = typeof registryModules.$inferSelect;
/** A registry module version row (`summary` is the ModuleSummary JSON, or null). */
export type RegistryModuleVersionRow = typeof registryModuleVersions.$inferSelect;
/** Status of a version (N4). */
export type RegistryModuleVersionStatus = RegistryModuleVersionRow["status"];

/** `private` is the only registry we host (N9: private modules, no VCS). */
export const PRIVATE_REGISTRY = "private";

/** Where a module lives: `/organizations/:org/registry-modules/:registry/:namespace/:name/:provider`. */
export interface RegistryModuleAddress {
  organization: string;
  registryName: string;
  namespace: string;
  name: string;
  provider: string;
}

/** A module by id, or null. */
export async function findRegistryModuleById(db: Db, id: string): Promise<RegistryModuleRow | undefined> {
  return (await registryModuleByIdQuery(db, id))[0];
}

/** The select behind findRegistryModuleById, for a `db.batch` with other reads (at most one row). */
export function registryModuleByIdQuery(db: Db, id: string) {
  return db.select().from(registryModules).where(eq(registryModules.id, id)).limit(1);
}

/** A module by its address, or undefined. */
export function findRegistryModule(db: Db, address: RegistryModuleAddress): Promise<RegistryModuleRow | undefined> {
  return db
    .select()
    .from(registryModules)
    .where(
      and(
        eq(registryModules.organization, address.organization),
        eq(registryModules.registryName, address.registryName),
        eq(registryModules.namespace, address.namespace),
        eq(registryModules.name, address.name),
        eq(registryModules.provider, address.provider),
      ),
    )
    .get();
}

/** Filters of the module list (HCP Terraform's `q`, `filter[provider]`, `filter[registry_name]`). */
export interface RegistryModuleFilter {
  /** Substring of the name, case-insensitive. */
  q?: string;
  provider?: string;
  registryName?: string;
}

/** One page of an organization's modules, ordered by name then provider, and the total. */
export async function listRegistryModules(
  db: Db,
  organization: string,
  filter: RegistryModuleFilter,
  page: PageWindow,
): Promise<Page<RegistryModuleRow>> {
  const conditions: SQL[] = [eq(registryModules.organization, organization)];
  if (filter.provider !== undefined) conditions.push(eq(registryModules.provider, filter.provider));
  if (filter.registryName !== undefined) conditions.push(eq(registryModules.registryName, filter.registryName));
  if (filter.q) {
    // instr() instead of LIKE: no wildcard characters to escape in the user's text.
    conditions.push(sql`instr(lower(${registryModules.name}), ${filter.q.toLowerCase()}) > 0`);
  }
  const where = and(...conditions);
  return tablePage(
    db,
    registryModules,
    where,
    [asc(registryModules.name), asc(registryModules.provider), asc(registryModules.id)],
    page,
  );
}

/**
 * Inserts a module; its UNIQUE address index refuses a taken address (a concurrent create
 * of the same address; see insertUnique).
 */
export function insertRegistryModule(db: Db, row: RegistryModuleRow) {
  return db.insert(registryModules).values(row);
}

/** Status of one version as `version-statuses` shows it. */
export interface VersionStatus {
  version: string;
  status: RegistryModuleVersionStatus;
  error: string | null;
}

/**
 * Version statuses of the given modules, each list ordered highest version first.
 * Modules without versions map to `[]`.
 */
export async function versionStatusesOf(db: Db, moduleIds: readonly string[]): Promise<Map<string, VersionStatus[]>> {
  const out = new Map<string, VersionStatus[]>(moduleIds.map((id) => [id, []]));
  if (moduleIds.length === 0) return out;
  const rows = await db
    .select({
      moduleId: registryModuleVersions.moduleId,
      version: registryModuleVersions.version,
      status: registryModuleVersions.status,
      error: registryModuleVersions.error,
    })
    .from(registryModuleVersions)
    .where(inJsonList(registryModuleVersions.moduleId, [...moduleIds]))
    .all();
  for (const row of rows) out.get(row.moduleId)?.push({ version: row.version, status: row.status, error: row.error });
  for (const list of out.values()) list.sort((a, b) => compareVersionStrings(b.version, a.version));
  return out;
}

/** A version of a module by its version string, or undefined. */
export async function findModuleVersion(
  db: Db,
  moduleId: string,
  version: string,
): Promise<RegistryModuleVersionRow | undefined> {
  return (await moduleVersionQuery(db, moduleId, version))[0];
}

/** The select behind findModuleVersion, for a `db.batch` with other reads (at most one row). */
export function moduleVersionQuery(db: Db, moduleId: string, version: string) {
  return db
    .select()
    .from(registryModuleVersions)
    .where(and(eq(registryModuleVersions.moduleId, moduleId), eq(registryModuleVersions.version, version)))
    .limit(1);
}

/**
 * Inserts a version in one batch with the statement that stores its upload link
 * ({@link uploadLinkInsert}); the UNIQUE (module, version) index refuses a taken version.
 */
export function insertModuleVersion(
  db: Db,
  row: RegistryModuleVersionRow,
  uploadLink: ReturnType<typeof uploadLinkInsert>,
) {
  return db.batch([db.insert(registryModuleVersions).values(row), uploadLink]);
}

/** The statement that stores an upload link (only its token's keyed hash), to batch with its version. */
export function uploadLinkInsert(db: Db, link: typeof registryUploadLinks.$inferInsert) {
  return db.insert(registryUploadLinks).values(link);
}

/** The versions of a module that can be downloaded (ingested: `ok`), lowest first. */
export async function downloadableVersions(db: Db, moduleId: string): Promise<string[]> {
  const rows = await db
    .select({ version: registryModuleVersions.version })
    .from(registryModuleVersions)
    .where(and(eq(registryModuleVersions.moduleId, moduleId), eq(registryModuleVersions.status, "ok")))
    .all();
  return rows.map((r) => r.version).sort(compareVersionStrings);
}

/** A version by id (`modver-…`), or undefined. */
export async function findModuleVersionById(db: Db, id: string): Promise<RegistryModuleVersionRow | undefined> {
  return (await moduleVersionByIdQuery(db, id))[0];
}

/**
 * The select behind findModuleVersionById, for a `db.batch` with other reads (at most one
 * row). `id` may be an SQL expression (a subquery naming the id, read in the same batch).
 */
export function moduleVersionByIdQuery(db: Db, id: string | SQL) {
  return db.select().from(registryModuleVersions).where(eq(registryModuleVersions.id, id)).limit(1);
}

/**
 * Decision N3: the module's "latest" version, the highest non-pre-release semver among
 * its `ok` versions, or null when none is `ok`. E1/E2 use it to default and resolve
 * `version-pin` (`latest` is stored as this concrete version).
 *
 * @example
 * const latest = await latestOkVersion(db, module.id);
 * const pin = latest?.version ?? null;
 */
export async function latestOkVersion(db: Db, moduleId: string): Promise<RegistryModuleVersionRow | null> {
  const ok = await db
    .select()
    .from(registryModuleVersions)
    .where(and(eq(registryModuleVersions.moduleId, moduleId), eq(registryModuleVersions.status, "ok")))
    .all();
  return pickLatestRelease(ok);
}

/**
 * The ingested ModuleSummary of a version (N4), or null unless the version is `ok`.
 * The planner (N7) reads resources' normalised source, locals and module calls from it.
 */
export function versionSummary(row: Pick<RegistryModuleVersionRow, "status" | "summary">): ModuleSummary | null {
  if (row.status !== "ok" || row.summary === null) return null;
  return JSON.parse(row.summary) as ModuleSummary;
}

/**
 * The statement that records the legacy `no-code` flag of a module (N9). The no-code
 * modules feature batches it with its own writes when it enables, moves or deletes the
 * no-code module of a registry module, so a failure leaves neither half-written.
 */
export function setRegistryModuleNoCodeStatement(db: Db, moduleId: string, noCode: boolean, now = Date.now()) {
  return db.update(registryModules).set({ noCode, updatedAt: now }).where(eq(registryModules.id, moduleId));
}

/**
 * Delete a module with its versions and upload links; returns the R2 keys of the
 * tarballs that were stored, for the caller to delete.
 */
export async function deleteRegistryModuleRows(db: Db, moduleId: string): Promise<string[]> {
  const versions = await db
    .select({ id: registryModuleVersions.id, tarballKey: registryModuleVersions.tarballKey })
    .from(registryModuleVersions)
    .where(eq(registryModuleVersions.moduleId, moduleId))
    .all();
  // Links are found through a subquery: D1 caps bound parameters per statement at 100.
  const versionIdsOfModule = db
    .select({ id: registryModuleVersions.id })
    .from(registryModuleVersions)
    .where(eq(registryModuleVersions.moduleId, moduleId));
  await db.batch([
    db.delete(registryUploadLinks).where(inArray(registryUploadLinks.versionId, versionIdsOfModule)),
    db.delete(registryModuleVersions).where(eq(registryModuleVersions.moduleId, moduleId)),
    db.delete(registryModules).where(eq(registryModules.id, moduleId)),
  ]);
  return versions.flatMap((v) => (v.tarballKey ? [v.tarballKey] : []));
}

/** One use of an upload link (./uploads.ts): its token's keyed hash, the version it opens, the time of the PUT. */
export interface UploadLinkUse {
  tokenHash: string;
  versionId: string;
  now: number;
}

/** The link is unspent and unexpired at `now`. */
function uploadLinkUsable(tokenHash: string, now: number) {
  return and(
    eq(registryUploadLinks.tokenHash, tokenHash),
    isNull(registryUploadLinks.usedAt),
    gt(registryUploadLinks.expiresAt, now),
  );
}

/** The version an upload link opens, while the link is unspent and unexpired at `now`. */
export function usableUploadLink(db: Db, tokenHash: string, now: number): Promise<{ versionId: string } | undefined> {
  return db
    .select({ versionId: registryUploadLinks.versionId })
    .from(registryUploadLinks)
    .where(uploadLinkUsable(tokenHash, now))
    .get();
}

/** Spends the link: of concurrent PUTs, only the one whose batch finds it unspent does. */
function spendUploadLinkStatement(db: Db, use: UploadLinkUse) {
  return db
    .update(registryUploadLinks)
    .set({ usedAt: use.now })
    .where(and(eq(registryUploadLinks.tokenHash, use.tokenHash), isNull(registryUploadLinks.usedAt)));
}

/** The version is still `pending` and its link still usable: only then may an upload change it. */
function pendingWithUsableLink(db: Db, use: UploadLinkUse) {
  return and(
    eq(registryModuleVersions.id, use.versionId),
    eq(registryModuleVersions.status, "pending"),
    exists(db.select({ one: sql`1` }).from(registryUploadLinks).where(uploadLinkUsable(use.tokenHash, use.now))),
  );
}

/** B5: an upload over the limit fails its version with `error` and spends the link, in one batch. */
export async function failOversizedUpload(db: Db, use: UploadLinkUse, error: string): Promise<void> {
  const { now } = use;
  await db.batch([
    db
      .update(registryModuleVersions)
      .set({ status: "reg_ingress_failed", error, summary: null, tarballKey: null, updatedAt: now, ingestedAt: now })
      .where(pendingWithUsableLink(db, use)),
    spendUploadLinkStatement(db, use),
  ]);
}

/** B16: records an upload attempt's own object key before the object is written. */
export async function recordUploadAttempt(db: Db, objectKey: string, versionId: string, now: number): Promise<void> {
  await db.insert(registryUploadAttempts).values({ objectKey, versionId, createdAt: now }).run();
}

/**
 * B16: ONE batch records the attempt's key on the version, spends the link and forgets the
 * attempt, so either all happen or none. Returns whether this attempt won (false when
 * another PUT of the link won, the link expired, or the module was deleted meanwhile).
 */
export async function recordUploadedTarball(db: Db, use: UploadLinkUse, key: string, bytes: number): Promise<boolean> {
  const { now } = use;
  const [stored] = await db.batch([
    db
      .update(registryModuleVersions)
      .set({ status: "reg_ingressing", tarballKey: key, tarballBytes: bytes, uploadedAt: now, updatedAt: now })
      .where(pendingWithUsableLink(db, use))
      .returning({ id: registryModuleVersions.id }),
    spendUploadLinkStatement(db, use),
    db.delete(registryUploadAttempts).where(eq(registryUploadAttempts.objectKey, key)),
  ]);
  return stored.length > 0;
}

/**
 * Undoes {@link recordUploadedTarball} in one batch, so the same link can be used again:
 * the version `pending` without a tarball, the link unspent, the attempt unfinished again.
 */
export async function undoUploadedTarball(db: Db, use: UploadLinkUse, key: string): Promise<void> {
  const { now } = use;
  await db.batch([
    db
      .update(registryModuleVersions)
      .set({ status: "pending", tarballKey: null, tarballBytes: null, uploadedAt: null, updatedAt: Date.now() })
      .where(
        and(
          eq(registryModuleVersions.id, use.versionId),
          eq(registryModuleVersions.status, "reg_ingressing"),
          eq(registryModuleVersions.tarballKey, key),
        ),
      ),
    db
      .update(registryUploadLinks)
      .set({ usedAt: null })
      .where(and(eq(registryUploadLinks.tokenHash, use.tokenHash), eq(registryUploadLinks.usedAt, now))),
    db.insert(registryUploadAttempts).values({ objectKey: key, versionId: use.versionId, createdAt: now }),
  ]);
}

/** Forgets the attempt of `key` (its object is deleted). */
export async function forgetUploadAttempt(db: Db, key: string): Promise<void> {
  await db.delete(registryUploadAttempts).where(eq(registryUploadAttempts.objectKey, key)).run();
}

/** Forgets the attempts of `keys` (B16's sweep). */
export async function forgetUploadAttempts(db: Db, keys: string[]): Promise<void> {
  await db.delete(registryUploadAttempts).where(inArray(registryUploadAttempts.objectKey, keys)).run();
}

/** Up to `limit` upload attempts begun before `before` (B16's sweep). */
export function staleUploadAttempts(db: Db, before: number, limit: number) {
  return db
    .select({ key: registryUploadAttempts.objectKey, versionId: registryUploadAttempts.versionId })
    .from(registryUploadAttempts)
    .where(lt(registryUploadAttempts.createdAt, before))
    .limit(limit)
    .all();
}

/** The tarball keys the given versions record (null for a version without one). */
export async function recordedTarballKeys(db: Db, versionIds: string[]): Promise<(string | null)[]> {
  const rows = await db
    .select({ key: registryModuleVersions.tarballKey })
    .from(registryModuleVersions)
    .where(inArray(registryModuleVersions.id, versionIds))
    .all();
  return rows.map((row) => row.key);
}
