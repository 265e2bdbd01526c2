/**
 * Single-use upload links of module tarballs (decisions N9, N2a, B5, B2, B16).
 *
 * `POST …/versions` issues a link `<origin>/api/v2/uploads/<token>`. The link is the
 * credential: it is exempt from the token check (N2a, src/nocode/app.ts), valid one hour,
 * and spent by the first PUT that presents it. Only a keyed hash of the token is stored.
 * `PUT` answers 200 once the tarball is stored in R2 (binding MODULES) and ingestion is
 * queued (N4); 413 over B5's 10 MiB (and the version becomes `reg_ingress_failed`).
 * Every other verdict, a non-gzip body included, appears on the version after ingestion.
 *
 * B16: each attempt writes its own R2 object (a fresh key per attempt, recorded first in
 * `registry_upload_attempts`), and the one D1 batch that spends the link records that key
 * on the version. Ingestion, the registry download and every run read only the recorded
 * key, so a slow second PUT on the same link can never change what they receive: it loses
 * the batch, answers 404 and deletes its own object. Objects of attempts that never
 * finished are deleted by the hourly cron after one hour ({@link sweepAbandonedUploads}).
 * An interrupted body (400) or a failed write (500) leaves the link usable and the version
 * `pending`, so the upload can be retried.
 */
import { createDb, type Db } from "../../db/client";
import { randomBytes, toBase64Url } from "../../lib/bytes";
import { keyedHash } from "../../lib/crypto/hmac";
import { BodyError, readLimitedBytes } from "../../lib/http/body";
import { logError } from "../../lib/log";
import { badRequest, NocodeError, notFound } from "../errors";
import { ingestModuleVersionMessage, sendProvisionMessage } from "../messages/provision";
import {
  failOversizedUpload,
  findModuleVersionById,
  forgetUploadAttempt,
  forgetUploadAttempts,
  type RegistryModuleVersionRow,
  recordedTarballKeys,
  recordUploadAttempt,
  recordUploadedTarball,
  staleUploadAttempts,
  type UploadLinkUse,
  undoUploadedTarball,
  uploadLinkInsert,
  usableUploadLink,
} from "./repo";

/** N9: an upload link is valid for one hour. */
export const UPLOAD_LINK_TTL_MS = 60 * 60 * 1000;

/** B5: a module tarball upload is at most 10 MiB compressed. */
export const MAX_TARBALL_BYTES = 10 * 1024 * 1024;

/** Purpose string of the keyed hash of upload tokens (B2). */
export const UPLOAD_TOKEN_PURPOSE = "registry-upload";

/** Path prefix of upload links, exempt from the token check (N2a). */
export const UPLOAD_PATH_PREFIX = "/api/v2/uploads/";

/** 32 random bytes, base64url: 43 characters. */
const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;

/** The stored form of an upload token. */
export function hashUploadToken(env: Pick<Env, "KEYWAY_HASH_KEY">, token: string): Promise<string> {
  return keyedHash(env.KEYWAY_HASH_KEY, UPLOAD_TOKEN_PURPOSE, token);
}

/**
 * A fresh R2 key for one upload attempt of a version (B16): never the key of another
 * attempt, so no attempt can overwrite the object another one recorded.
 */
function attemptKeyOf(version: Pick<RegistryModuleVersionRow, "moduleId" | "id">): string {
  return `registry-modules/${version.moduleId}/${version.id}/${toBase64Url(randomBytes(16))}.tar.gz`;
}

/**
 * Issue the upload link of a version: returns the statement that stores its hash (to
 * batch with the version insert) and the absolute link.
 */
export async function newUploadLink(
  db: Db,
  env: Pick<Env, "KEYWAY_HASH_KEY">,
  origin: string,
  versionId: string,
  now: number,
) {
  const token = toBase64Url(randomBytes(32));
  const tokenHash = await hashUploadToken(env, token);
  const insert = uploadLinkInsert(db, { tokenHash, versionId, expiresAt: now + UPLOAD_LINK_TTL_MS, createdAt: now });
  return { insert, link: `${origin}${UPLOAD_PATH_PREFIX}${token}` };
}

/** Read a request body of at most `limit` bytes; `null` when it is larger (without buffering the rest). */
async function readTarball(request: Request, limit: number): Promise<Uint8Array | null> {
  try {
    return await readLimitedBytes(request, limit);
  } catch (err) {
    if (err instanceof BodyError && err.problem.kind === "too_large") return null;
    throw err;
  }
}

/** What receiving an upload needs besides D1: the token hash key, the tarballs' bucket, the ingestion queue. */
type UploadEnv = Pick<Env, "KEYWAY_HASH_KEY" | "MODULES" | "PROVISION_QUEUE">;

/**
 * Receive the tarball PUT to the upload link `token` (the link is the credential). Returns
 * once the tarball is stored and ingestion queued; throws 404 for an unknown, spent or
 * expired link, 400 for an interrupted body, 413 over B5's limit.
 */
export async function receiveUpload(
  db: Db,
  env: UploadEnv,
  requestId: string,
  token: string,
  request: Request,
): Promise<void> {
  // An unknown, spent or expired link is simply not there: 404 (N2).
  if (!TOKEN_RE.test(token)) throw notFound();
  const now = Date.now();
  const tokenHash = await hashUploadToken(env, token);
  const link = await usableUploadLink(db, tokenHash, now);
  if (!link) throw notFound();
  const version = await findModuleVersionById(db, link.versionId);
  if (version?.status !== "pending") throw notFound();
  const use: UploadLinkUse = { tokenHash, versionId: version.id, now };

  // Nothing is written before the body is complete and stored. An interrupted
  // upload or a failed write leaves the link unspent and the version `pending`: the same
  // PUT can simply be retried.
  let bytes: Uint8Array | null;
  try {
    bytes = await readTarball(request, MAX_TARBALL_BYTES);
  } catch (err) {
    logError(requestId, "module tarball upload interrupted", err);
    throw badRequest("the tarball upload was interrupted before it completed; retry the upload");
  }
  if (bytes === null) {
    // B5: over 10 MiB → 413, and the version becomes reg_ingress_failed (link spent with it).
    const error = "module tarball is larger than the limit of 10 MiB (compressed)";
    await failOversizedUpload(db, use, error);
    throw new NocodeError("payload_too_large", error);
  }

  // B16: the attempt is recorded, then its own object written, then ONE batch records the
  // key on the version and spends the link: either both happen or neither (a D1 failure
  // leaves an unspent link and a pending version), and only the winner's key is ever read.
  const key = attemptKeyOf(version);
  await recordUploadAttempt(db, key, version.id, now);
  await env.MODULES.put(key, bytes, { httpMetadata: { contentType: "application/gzip" } });
  let won: boolean;
  try {
    won = await recordUploadedTarball(db, use, key, bytes.byteLength);
  } catch (err) {
    await discardAttempt(db, env, version.id, key, requestId);
    throw err;
  }
  if (!won) {
    // Another PUT of this link won, the link expired, or the module was deleted meanwhile:
    // this attempt's object belongs to nobody.
    await discardAttempt(db, env, version.id, key, requestId);
    throw notFound();
  }
  try {
    // N4, N11: ingestion happens on the Queue; the message carries the version id only.
    await sendProvisionMessage(env, ingestModuleVersionMessage(version.id));
  } catch (err) {
    logError(requestId, "could not queue module ingestion", err);
    // Undo the upload in one batch, so the same link can be used again; the object becomes
    // an unfinished attempt again (swept by the cron if the delete below fails).
    await undoUploadedTarball(db, use, key);
    await discardAttempt(db, env, version.id, key, requestId);
    throw err;
  }
}

/**
 * Delete the object of an attempt that no version recorded, then its attempt row. Best
 * effort: what a failure leaves behind is deleted by {@link sweepAbandonedUploads}. The
 * key is this attempt's own (B16), so deleting it never touches another attempt's object;
 * the check of the version is a second guard only.
 */
async function discardAttempt(
  db: Db,
  env: Pick<Env, "MODULES">,
  versionId: string,
  key: string,
  requestId: string,
): Promise<void> {
  try {
    if ((await findModuleVersionById(db, versionId))?.tarballKey === key) return;
    await env.MODULES.delete(key);
    await forgetUploadAttempt(db, key);
  } catch (err) {
    logError(requestId, "could not remove the object of an unrecorded module upload", err);
  }
}

/** B16: an attempt still unrecorded this long after it began never finished. */
export const ABANDONED_UPLOAD_AFTER_MS = 60 * 60 * 1000;

/** Attempts deleted per statement (B8: D1 binds at most 100 parameters per statement). */
const SWEEP_PAGE = 50;

/** Pages per cron run: a bound on one run's work; anything left waits for the next hour. */
const SWEEP_PAGES = 20;

/**
 * The hourly cron's part for uploads (B16): delete the objects of attempts that began more
 * than an hour ago and were never recorded (the Worker stopped between the R2 write and the
 * batch, or a loser's delete failed), then their rows. A key some version records is never
 * deleted (its row is only dropped). Returns how many attempts were swept.
 */
export async function sweepAbandonedUploads(env: Pick<Env, "DB" | "MODULES">, now = Date.now()): Promise<number> {
  const db = createDb(env.DB);
  let swept = 0;
  for (let page = 0; page < SWEEP_PAGES; page++) {
    const stale = await staleUploadAttempts(db, now - ABANDONED_UPLOAD_AFTER_MS, SWEEP_PAGE);
    if (stale.length === 0) break;
    const keys = stale.map((row) => row.key);
    const keep = new Set(await recordedTarballKeys(db, [...new Set(stale.map((row) => row.versionId))]));
    const unrecorded = keys.filter((key) => !keep.has(key));
    if (unrecorded.length > 0) await env.MODULES.delete(unrecorded);
    await forgetUploadAttempts(db, keys);
    swept += keys.length;
    if (stale.length < SWEEP_PAGE) break;
  }
  return swept;
}
