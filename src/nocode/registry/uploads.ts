/**
 * Single-use upload links of module tarballs (decisions N9, N2a, B5, B2).
 *
 * `POST …/versions` issues a link `<origin>/api/v2/uploads/<token>`. The link is the
 * credential: it is exempt from the token check (N2a, src/nocode/app.ts), valid one hour,
 * and spent by the first PUT that presents it. Only a keyed hash of the token is stored.
 * `PUT` answers 200 once the tarball is stored in R2 (binding MODULES) and ingestion is
 * queued (N4); 413 over B5's 10 MiB (and the version becomes `reg_ingress_failed`).
 * Every other verdict, a non-gzip body included, appears on the version after ingestion.
 */
import { and, eq, gt, isNull } from "drizzle-orm";
import { Hono } from "hono";
import { createDb, type Db } from "../../db/client";
import { registryModuleVersions, registryUploadLinks } from "../../db/schema";
import { randomBytes, toBase64Url } from "../../lib/bytes";
import { keyedHash } from "../../lib/crypto/hmac";
import { BodyError, readLimitedBytes } from "../../lib/http/body";
import { logError } from "../../lib/log";
import type { NocodeEnv } from "../app";
import { badRequest, NocodeError, notFound } from "../errors";
import { ingestModuleVersionMessage } from "../queue/messages";
import { findModuleVersionById, type RegistryModuleVersionRow } from "./repo";
import { markVersionFailed } from "./ingestion";
import { rights } from "../route-rights";

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
  const insert = db.insert(registryUploadLinks).values({ tokenHash, versionId, expiresAt: now + UPLOAD_LINK_TTL_MS, createdAt: now });
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

uploadRoutes.put("/uploads/:token", rights({ caller: "public" }), async (c) => {
  const token = c.req.param("token");
  // An unknown, spent or expired link is simply not there: 404 (N2).
  if (!TOKEN_RE.test(token)) throw notFound();
  const db = createDb(c.env.DB);
  const now = Date.now();
  const tokenHash = await hashUploadToken(c.env, token);
  // Spend the link in one statement, so two concurrent PUTs have exactly one winner.
  const spent = await db
    .update(registryUploadLinks)
    .set({ usedAt: now })
    .where(and(eq(registryUploadLinks.tokenHash, tokenHash), isNull(registryUploadLinks.usedAt), gt(registryUploadLinks.expiresAt, now)))
    .returning({ versionId: registryUploadLinks.versionId })
    .get();
  if (!spent) throw notFound();
  const version = await findModuleVersionById(db, spent.versionId);
  if (version?.status !== "pending") throw notFound();

  let bytes: Uint8Array | null;
  try {
    bytes = await readTarball(c.req.raw, MAX_TARBALL_BYTES);
  } catch (err) {
    logError(c.var.requestId, "module tarball upload interrupted", err);
    await markVersionFailed(db, version.id, "the tarball upload was interrupted before it completed", ["pending"]);
    throw badRequest("the tarball upload was interrupted before it completed");
  }
  if (bytes === null) {
    // B5: over 10 MiB → 413, and the version becomes reg_ingress_failed.
    await markVersionFailed(db, version.id, "module tarball is larger than the limit of 10 MiB (compressed)", ["pending"]);
    throw new NocodeError("payload_too_large", "module tarball is larger than the limit of 10 MiB (compressed)");
  }

  const key = tarballKeyOf(version);
  await c.env.MODULES.put(key, bytes, { httpMetadata: { contentType: "application/gzip" } });
  const stored = await db
    .update(registryModuleVersions)
    .set({ status: "reg_ingressing", tarballKey: key, tarballBytes: bytes.byteLength, uploadedAt: now, updatedAt: now })
    .where(and(eq(registryModuleVersions.id, version.id), eq(registryModuleVersions.status, "pending")))
    .returning({ id: registryModuleVersions.id })
    .get();
  if (!stored) {
    // The module was deleted while the body streamed in.
    await c.env.MODULES.delete(key);
    throw notFound();
  }
  try {
    // N4, N11: ingestion happens on the Queue; the message carries the version id only.
    await c.env.PROVISION_QUEUE.send(ingestModuleVersionMessage(version.id), { contentType: "json" });
  } catch (err) {
    logError(c.var.requestId, "could not queue module ingestion", err);
    await markVersionFailed(db, version.id, "ingestion could not be queued; publish the module as a new version", ["reg_ingressing"]);
    throw err;
  }
  return c.body(null, 200);
});
