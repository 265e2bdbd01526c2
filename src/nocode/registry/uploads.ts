/**
 * Single-use upload links of module tarballs (decisions N9, N2a, B5, B2).
 *
 * `POST …/versions` issues a link `<origin>/api/v2/uploads/<token>`. The link is the
 * credential: it is exempt from the token check (N2a, src/nocode/app.ts), valid one hour,
 * and spent by the first PUT that presents it. Only a keyed hash of the token is stored.
 * `PUT` answers 200 once the tarball is stored in R2 (binding MODULES) and ingestion is
 * queued (N4); 413 over B5's 10 MiB (and the version becomes `reg_ingress_failed`).
 * Every other verdict, a non-gzip body included, appears on the version after ingestion.
 * The link is spent in the same D1 batch that records the stored tarball (issue 14,
 * finding 13): an interrupted body (400) or a failed write (500) leaves the link usable
 * and the version `pending`, so the upload can be retried.
 */
import { and, eq, exists, gt, isNull, sql } from "drizzle-orm";
import { Hono } from "hono";
import type { Db } from "../../db/client";
import { registryModuleVersions, registryUploadLinks } from "../../db/schema";
import { randomBytes, toBase64Url } from "../../lib/bytes";
import { keyedHash } from "../../lib/crypto/hmac";
import { BodyError, readLimitedBytes } from "../../lib/http/body";
import { logError } from "../../lib/log";
import type { NocodeEnv } from "../env";
import { badRequest, NocodeError, notFound } from "../errors";
import { ingestModuleVersionMessage, sendProvisionMessage } from "../queue/messages";
import { operation } from "../request/operation";
import { rights } from "../route-rights";
import { findModuleVersionById, type RegistryModuleVersionRow } from "./repo";

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

/** R2 key of a version's tarball. */
export function tarballKeyOf(version: Pick<RegistryModuleVersionRow, "moduleId" | "id">): string {
  return `registry-modules/${version.moduleId}/${version.id}.tar.gz`;
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
  const insert = db
    .insert(registryUploadLinks)
    .values({ tokenHash, versionId, expiresAt: now + UPLOAD_LINK_TTL_MS, createdAt: now });
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

/** Routes of the upload link (tokenless, N2a). */
export const uploadRoutes = new Hono<NocodeEnv>();

const upload = operation({
  tag: "registry",
  summary: "Upload a version's tarball through its single-use link (N9; the link is the credential)",
  description: "The body is the gzip tarball (at most 10 MiB, B5). Ingestion follows on the queue (N4).",
  answers: { 200: { description: "Received; the version is now being ingested" } },
  errors: [400, 404, 413],
});

uploadRoutes.put("/uploads/:token", rights({ caller: "public" }), upload, async (c) => {
  const token = c.req.param("token");
  // An unknown, spent or expired link is simply not there: 404 (N2).
  if (!TOKEN_RE.test(token)) throw notFound();
  const db = c.var.db;
  const now = Date.now();
  const tokenHash = await hashUploadToken(c.env, token);
  const linkUsable = and(
    eq(registryUploadLinks.tokenHash, tokenHash),
    isNull(registryUploadLinks.usedAt),
    gt(registryUploadLinks.expiresAt, now),
  );
  const link = await db
    .select({ versionId: registryUploadLinks.versionId })
    .from(registryUploadLinks)
    .where(linkUsable)
    .get();
  if (!link) throw notFound();
  const version = await findModuleVersionById(db, link.versionId);
  if (version?.status !== "pending") throw notFound();
  // Spends the link (a statement of the batches below; one winner among concurrent PUTs).
  const spendLink = db
    .update(registryUploadLinks)
    .set({ usedAt: now })
    .where(and(eq(registryUploadLinks.tokenHash, tokenHash), isNull(registryUploadLinks.usedAt)));

  // Finding 13: nothing is written before the body is complete and stored. An interrupted
  // upload or a failed write leaves the link unspent and the version `pending`: the same
  // PUT can simply be retried.
  let bytes: Uint8Array | null;
  try {
    bytes = await readTarball(c.req.raw, MAX_TARBALL_BYTES);
  } catch (err) {
    logError(c.var.requestId, "module tarball upload interrupted", err);
    throw badRequest("the tarball upload was interrupted before it completed; retry the upload");
  }
  if (bytes === null) {
    // B5: over 10 MiB → 413, and the version becomes reg_ingress_failed (link spent with it).
    const error = "module tarball is larger than the limit of 10 MiB (compressed)";
    await db.batch([
      db
        .update(registryModuleVersions)
        .set({ status: "reg_ingress_failed", error, summary: null, tarballKey: null, updatedAt: now, ingestedAt: now })
        .where(
          and(
            eq(registryModuleVersions.id, version.id),
            eq(registryModuleVersions.status, "pending"),
            exists(db.select({ one: sql`1` }).from(registryUploadLinks).where(linkUsable)),
          ),
        ),
      spendLink,
    ]);
    throw new NocodeError("payload_too_large", error);
  }

  // R2 first, then ONE batch that records the tarball and spends the link: either both
  // happen or neither (a D1 failure leaves an unspent link and a pending version).
  const key = tarballKeyOf(version);
  await c.env.MODULES.put(key, bytes, { httpMetadata: { contentType: "application/gzip" } });
  let stored: unknown[];
  try {
    [stored] = await db.batch([
      db
        .update(registryModuleVersions)
        .set({
          status: "reg_ingressing",
          tarballKey: key,
          tarballBytes: bytes.byteLength,
          uploadedAt: now,
          updatedAt: now,
        })
        .where(
          and(
            eq(registryModuleVersions.id, version.id),
            eq(registryModuleVersions.status, "pending"),
            exists(db.select({ one: sql`1` }).from(registryUploadLinks).where(linkUsable)),
          ),
        )
        .returning({ id: registryModuleVersions.id }),
      spendLink,
    ]);
  } catch (err) {
    await deleteIfStillPending(db, c.env, version.id, key, c.var.requestId);
    throw err;
  }
  if (stored.length === 0) {
    // Another PUT of this link won, the link expired, or the module was deleted meanwhile:
    // the object belongs to the winner (same key) or to nobody.
    await deleteIfStillPending(db, c.env, version.id, key, c.var.requestId);
    throw notFound();
  }
  try {
    // N4, N11: ingestion happens on the Queue; the message carries the version id only.
    await sendProvisionMessage(c.env, ingestModuleVersionMessage(version.id));
  } catch (err) {
    logError(c.var.requestId, "could not queue module ingestion", err);
    // Undo the upload in one batch, so the same link can be used again.
    await db.batch([
      db
        .update(registryModuleVersions)
        .set({ status: "pending", tarballKey: null, tarballBytes: null, uploadedAt: null, updatedAt: Date.now() })
        .where(
          and(
            eq(registryModuleVersions.id, version.id),
            eq(registryModuleVersions.status, "reg_ingressing"),
            eq(registryModuleVersions.uploadedAt, now),
          ),
        ),
      db
        .update(registryUploadLinks)
        .set({ usedAt: null })
        .where(and(eq(registryUploadLinks.tokenHash, tokenHash), eq(registryUploadLinks.usedAt, now))),
    ]);
    await deleteIfStillPending(db, c.env, version.id, key, c.var.requestId);
    throw err;
  }
  return c.body(null, 200);
});

/**
 * Delete the object written by an upload that did not record it, unless the version has
 * meanwhile recorded it (a concurrent PUT of the same link won with the same key). Best
 * effort: a leftover is overwritten by the next successful upload of the version.
 */
async function deleteIfStillPending(
  db: Db,
  env: Pick<Env, "MODULES">,
  versionId: string,
  key: string,
  requestId: string,
): Promise<void> {
  try {
    const now = await findModuleVersionById(db, versionId);
    if (now?.tarballKey !== key) await env.MODULES.delete(key);
  } catch (err) {
    logError(requestId, "could not remove an unrecorded module tarball", err);
  }
}
