/**
 * Ingestion of an uploaded module version (decision N4), run by the Queue consumer.
 *
 * A version moves `pending` → (upload) → `reg_ingressing` → `ok` | `reg_ingress_failed`.
 * Every transition is a conditional UPDATE on the expected current status, so a
 * redelivered message (N11: at-least-once delivery) changes nothing once a verdict is
 * recorded, and two concurrent deliveries cannot both write one.
 */
import { and, eq, inArray } from "drizzle-orm";
import { createDb, type Db } from "../../db/client";
import { registryModuleVersions } from "../../db/schema/nocode";
import type { ModuleSummary } from "../../lib/terraform/types";
import type { RegistryModuleVersionStatus } from "./repo";
import { findModuleVersionById } from "./repo";

/** Verdict of the ingestion building block (`ingestModule` in src/lib/terraform). */
export type IngestResult = { ok: true; summary: ModuleSummary } | { ok: false; error: string };

/** Turns a gzip tarball into a verdict (N4). Throwing means a transient fault: retry. */
export type IngestFn = (gzipBytes: Uint8Array) => Promise<IngestResult>;

/** What {@link ingestModuleVersion} did; every outcome is final (ack). Faults throw instead. */
export type IngestOutcome =
  | { outcome: "ok" }
  | { outcome: "failed"; error: string }
  /** Nothing to do: unknown version (module deleted), not uploaded yet, or already decided. */
  | { outcome: "skipped"; reason: string };

/**
 * Record `reg_ingress_failed` with `error` if the version is still in one of `from`;
 * returns whether it changed. The summary is cleared; the caller deletes any tarball.
 */
export async function markVersionFailed(
  db: Db,
  versionId: string,
  error: string,
  from: readonly RegistryModuleVersionStatus[],
  now = Date.now(),
): Promise<boolean> {
  const row = await db
    .update(registryModuleVersions)
    .set({ status: "reg_ingress_failed", error, summary: null, tarballKey: null, updatedAt: now, ingestedAt: now })
    .where(and(eq(registryModuleVersions.id, versionId), inArray(registryModuleVersions.status, [...from])))
    .returning({ id: registryModuleVersions.id })
    .get();
  return row !== undefined;
}

/**
 * Ingest the stored tarball of `versionId` and record the verdict. Idempotent by version
 * id: a version that is not `reg_ingressing` is left alone. Throws on transient faults
 * (D1, R2, or the ingest function itself), which the consumer retries.
 */
export async function ingestModuleVersion(
  env: Pick<Env, "DB" | "MODULES">,
  versionId: string,
  ingest: IngestFn,
  now: () => number = Date.now,
): Promise<IngestOutcome> {
  const db = createDb(env.DB);
  const version = await findModuleVersionById(db, versionId);
  if (!version) return { outcome: "skipped", reason: "unknown version (its module may have been deleted)" };
  if (version.status !== "reg_ingressing")
    return { outcome: "skipped", reason: `version is already ${version.status}` };

  const object = version.tarballKey ? await env.MODULES.get(version.tarballKey) : null;
  if (!object) {
    const error = "the uploaded tarball is missing from storage; publish the module as a new version";
    const changed = await markVersionFailed(db, versionId, error, ["reg_ingressing"], now());
    return changed ? { outcome: "failed", error } : { outcome: "skipped", reason: "decided concurrently" };
  }
  const bytes = new Uint8Array(await object.arrayBuffer());
  const result = await ingest(bytes);

  if (!result.ok) {
    const changed = await markVersionFailed(db, versionId, result.error, ["reg_ingressing"], now());
    // A refused tarball is of no further use; `ok` ones are kept.
    if (changed && version.tarballKey) await env.MODULES.delete(version.tarballKey);
    return changed
      ? { outcome: "failed", error: result.error }
      : { outcome: "skipped", reason: "decided concurrently" };
  }
  const at = now();
  const row = await db
    .update(registryModuleVersions)
    .set({ status: "ok", error: null, summary: JSON.stringify(result.summary), updatedAt: at, ingestedAt: at })
    .where(and(eq(registryModuleVersions.id, versionId), eq(registryModuleVersions.status, "reg_ingressing")))
    .returning({ id: registryModuleVersions.id })
    .get();
  return row ? { outcome: "ok" } : { outcome: "skipped", reason: "decided concurrently" };
}

/** The error of a version whose ingestion went to the dead-letter queue. */
export const INGESTION_GAVE_UP =
  "ingestion failed repeatedly because of an internal error; publish the module as a new version";

/**
 * Dead-letter verdict: ingestion kept failing with transient faults until the queue gave
 * up (max_retries). The version becomes `reg_ingress_failed` unless already decided.
 */
export async function failVersionAfterRetries(env: Pick<Env, "DB" | "MODULES">, versionId: string): Promise<boolean> {
  const db = createDb(env.DB);
  const version = await findModuleVersionById(db, versionId);
  if (!version) return false;
  const error = INGESTION_GAVE_UP;
  const changed = await markVersionFailed(db, versionId, error, ["pending", "reg_ingressing"]);
  if (changed && version.tarballKey) await env.MODULES.delete(version.tarballKey);
  return changed;
}
