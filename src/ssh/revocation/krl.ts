/**
 * Each mount's OpenSSH KRL (decision S23): rebuilt when its revocations change, kept in R2
 * under `ssh-krl/<mount>/<krl_version>`, and served from there (through a per-isolate
 * cache of at most MOUNT_CONTEXT_TTL_MS), never rebuilt per read.
 *
 * Versions: every change bumps `ssh_krl_state.krl_version` in the same D1 batch as the
 * change itself (krlChangeStatement), then rebuildKrl builds that version from one
 * consistent D1 batch and records it as built. The KRL's generated_date is the time of the
 * change, so two builds of one version are the same bytes.
 *
 * B17: revocations follow their CA key's fingerprint, not the issuer row, so an issuer
 * deleted and imported again keeps its revocations. A rebuild that fails never turns into
 * a 5xx: the failure is recorded (`rebuild_error`), logged once, retried through the
 * `keyway-ssh-krl` Queue with backoff from 10 s to 5 min, and meanwhile `GET krl` serves
 * the last good KRL with `Keyway-KRL-Stale: true` (reads do not retry a recorded failure).
 */
import { and, asc, eq, inArray, isNotNull, lt, or, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { sshIssuers, sshKrlState, sshRevocations } from "../../db/schema/ssh";
import { fromBase64 } from "../../lib/bytes";
import { logError } from "../../lib/log";
import { encodeKrl, type KrlCertificateSection } from "../../lib/sshwire/krl";
import { parseCanonicalPublicKey } from "../../lib/sshwire/public-key";
import { mountContextCache } from "../context-cache";
import { sha256Fingerprint } from "./inventory-routes";
import { issuerSetFromRows, issuerSetQueries } from "./issuers";

/** The bytes and validators of one built KRL. */
interface BuiltKrl {
  version: number;
  etag: string;
  bytes: Uint8Array;
}

/** What `GET krl` serves: the built KRL, and whether it is behind the mount's revocations. */
interface ServedKrl extends BuiltKrl {
  stale: boolean;
}

const served = mountContextCache<ServedKrl>();

/** B17: the Queue that retries failed rebuilds (wrangler.jsonc). */
export const KRL_REBUILD_QUEUE_NAME = "keyway-ssh-krl";

/** B17: the header on a KRL served while a rebuild of a newer version keeps failing. */
export const KRL_STALE_HEADER = "Keyway-KRL-Stale";

/** B17: retry delays, doubling from the first to the last. */
const FIRST_RETRY_SECONDS = 10;
const LAST_RETRY_SECONDS = 300;

/** The delay before retry number `attempts` (1 for the first failure). */
export function krlRetryDelaySeconds(attempts: number): number {
  return Math.min(LAST_RETRY_SECONDS, FIRST_RETRY_SECONDS * 2 ** Math.min(Math.max(attempts - 1, 0), 10));
}

function objectKey(mount: string, version: number): string {
  return `ssh-krl/${mount}/${version}`;
}

function etagOf(version: number): string {
  return `"krl-${version}"`;
}

/** B17: the SHA256 fingerprint a revocation records for its CA key (`SHA256:<base64>`). */
export function caKeyFingerprint(publicKeyText: string): Promise<string> {
  return sha256Fingerprint(parseCanonicalPublicKey(publicKeyText).blob);
}

/** The statement that records a change of a mount's KRL inputs; put it in the change's batch. */
export function krlChangeStatement(db: Db, mount: string, nowMs: number) {
  const changedAt = Math.floor(nowMs / 1000);
  return db
    .insert(sshKrlState)
    .values({ mount, krlVersion: 1, changedAt, builtVersion: 0 })
    .onConflictDoUpdate({
      target: sshKrlState.mount,
      set: { krlVersion: sql`${sshKrlState.krlVersion} + 1`, changedAt },
    });
}

/**
 * For a batch right after a DELETE: bumps the version only when that DELETE removed rows
 * (SQLite's changes() is the previous statement's count within the batch's transaction).
 */
export function krlChangeIfDeletedStatement(db: Db, mount: string, nowMs: number) {
  return db
    .update(sshKrlState)
    .set({ krlVersion: sql`${sshKrlState.krlVersion} + 1`, changedAt: Math.floor(nowMs / 1000) })
    .where(and(eq(sshKrlState.mount, mount), sql`changes() > 0`));
}

/**
 * The KRL contents from the rows of one batch: one certificate section per issuer that has
 * something revoked (key ids revoked mount-wide go into every issuer's section: S23 never
 * writes the empty-CA wildcard), then the SHA256 fingerprints of revoked keys. A serial or
 * key-id revocation belongs to the issuer whose key has its recorded CA fingerprint (B17);
 * one not back-filled yet, to its issuer row. Entries past their `expires_at` are left out.
 */
async function krlBytes(
  version: number,
  changedAt: number,
  issuers: ReturnType<typeof issuerSetFromRows>,
  revocations: (typeof sshRevocations.$inferSelect)[],
  nowSeconds: number,
): Promise<Uint8Array> {
  const live = revocations.filter((r) => r.expiresAt === null || r.expiresAt > nowSeconds);
  const certificates: KrlCertificateSection[] = [];
  for (const issuer of issuers.issuers) {
    const caKey = parseCanonicalPublicKey(issuer.publicKey).blob;
    const fingerprint = await sha256Fingerprint(caKey);
    const ofIssuer = (r: (typeof live)[number]) =>
      r.caKeyFingerprint === null ? r.issuerId === issuer.id : r.caKeyFingerprint === fingerprint;
    const serials = live.filter((r) => r.kind === "serial" && ofIssuer(r)).map((r) => BigInt(`0x${r.serial}`));
    const keyIds = live
      .filter((r) => r.kind === "key_id" && ((r.issuerId === null && r.caKeyFingerprint === null) || ofIssuer(r)))
      .map((r) => r.keyId!);
    if (serials.length === 0 && keyIds.length === 0) continue;
    certificates.push({ caKey, serials: serials.map((s) => ({ lo: s, hi: s })), keyIds });
  }
  const sha256Fingerprints = live
    .filter((r) => r.kind === "public_key")
    .map((r) => fromBase64(r.publicKeyFingerprint!.slice("SHA256:".length)));
  return encodeKrl({ krlVersion: BigInt(version), generatedDate: BigInt(changedAt), certificates, sha256Fingerprints });
}

/**
 * Build the mount's current KRL version if it is not built yet, store it in R2 and record
 * it. Returns what is now the built KRL (null when the mount has never changed or the
 * version is built already). Throws whatever the build met; rebuildKrl handles that.
 */
async function buildKrl(env: Env, db: Db, mount: string, force: boolean): Promise<BuiltKrl | null> {
  const [issuersQuery, configQuery] = issuerSetQueries(db, mount);
  const [stateRows, revocations, issuerRows, configRows] = await db.batch([
    db.select().from(sshKrlState).where(eq(sshKrlState.mount, mount)).limit(1),
    db.select().from(sshRevocations).where(eq(sshRevocations.mount, mount)),
    issuersQuery,
    configQuery,
  ]);
  const state = stateRows[0];
  if (!state) return null;
  if (!force && state.builtVersion >= state.krlVersion) return null;
  const issuers = issuerSetFromRows(issuerRows, configRows);
  const bytes = await krlBytes(state.krlVersion, state.changedAt, issuers, revocations, Math.floor(Date.now() / 1000));
  await env.SSH_KRLS.put(objectKey(mount, state.krlVersion), bytes, {
    httpMetadata: { contentType: "application/octet-stream" },
  });
  await db
    .update(sshKrlState)
    .set({ builtVersion: state.krlVersion, builtIssuers: issuerIds(issuers.issuers) })
    .where(and(eq(sshKrlState.mount, mount), lt(sshKrlState.builtVersion, state.krlVersion)));
  if (state.builtVersion > 0 && state.builtVersion < state.krlVersion) {
    // The superseded object; a reader still holding its version falls back to a rebuild.
    await env.SSH_KRLS.delete(objectKey(mount, state.builtVersion));
  }
  return { version: state.krlVersion, etag: etagOf(state.krlVersion), bytes };
}

/** The outcome of one rebuild attempt: the KRL built (or null), or why it failed. */
export type KrlRebuild = { ok: true; built: BuiltKrl | null } | { ok: false; reason: string };

/**
 * One rebuild attempt (B17). A success clears any recorded failure; a failure is recorded,
 * logged (one line per attempt) and handed to the Queue for a retry after the backoff.
 */
export async function rebuildKrl(
  env: Env,
  db: Db,
  mount: string,
  options: { force?: boolean; requestId?: string } = {},
): Promise<KrlRebuild> {
  const requestId = options.requestId ?? "";
  try {
    const built = await buildKrl(env, db, mount, options.force ?? false);
    await db
      .update(sshKrlState)
      .set({ rebuildError: null, rebuildAttempts: 0 })
      .where(
        and(
          eq(sshKrlState.mount, mount),
          or(isNotNull(sshKrlState.rebuildError), sql`${sshKrlState.rebuildAttempts} > 0`),
        ),
      );
    served.invalidate(mount);
    return { ok: true, built };
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    logError(
      requestId,
      `ssh krl rebuild of mount ${mount} failed; the last good KRL is served until a retry succeeds`,
      e,
    );
    served.invalidate(mount);
    await recordFailure(env, db, mount, reason, requestId);
    return { ok: false, reason };
  }
}

async function recordFailure(env: Env, db: Db, mount: string, reason: string, requestId: string): Promise<void> {
  try {
    const [row] = await db
      .update(sshKrlState)
      .set({ rebuildError: reason.slice(0, 1000), rebuildAttempts: sql`${sshKrlState.rebuildAttempts} + 1` })
      .where(eq(sshKrlState.mount, mount))
      .returning({ attempts: sshKrlState.rebuildAttempts });
    const attempts = row?.attempts ?? 1;
    await env.SSH_KRL_QUEUE.send(
      { mount, attempt: attempts, request_id: requestId },
      { delaySeconds: krlRetryDelaySeconds(attempts) },
    );
  } catch (e) {
    // The hourly scheduled tidy retries every stale mount as well.
    logError(requestId, `ssh krl rebuild retry of mount ${mount} could not be scheduled`, e);
  }
}

/** The KRL of a mount with no change yet: version 0, nothing revoked. */
const EMPTY_KRL: BuiltKrl = { version: 0, etag: etagOf(0), bytes: encodeKrl({ krlVersion: 0n, generatedDate: 0n }) };

/** The issuers a KRL covers, as recorded with the build. */
function issuerIds(issuers: { id: string }[]): string {
  return issuers.map((i) => i.id).join(",");
}

/** The built KRL object, or null when it is missing. */
async function storedKrl(env: Env, mount: string, version: number): Promise<BuiltKrl | null> {
  if (version === 0) return EMPTY_KRL;
  const object = await env.SSH_KRLS.get(objectKey(mount, version));
  if (!object) return null;
  return { version, etag: etagOf(version), bytes: new Uint8Array(await object.arrayBuffer()) };
}

async function loadServed(env: Env, db: Db, mount: string): Promise<ServedKrl> {
  const [stateRows, issuerRows] = await db.batch([
    db.select().from(sshKrlState).where(eq(sshKrlState.mount, mount)).limit(1),
    db
      .select({ id: sshIssuers.id })
      .from(sshIssuers)
      .where(eq(sshIssuers.mount, mount))
      .orderBy(asc(sshIssuers.createdAt), asc(sshIssuers.id)),
  ]);
  const state = stateRows[0];
  if (!state) return { ...EMPTY_KRL, stale: false };
  const lastGood = async (): Promise<ServedKrl> => ({
    ...((await storedKrl(env, mount, state.builtVersion)) ?? EMPTY_KRL),
    stale: true,
  });
  // B17: a recorded failure is retried by the Queue, not by reads.
  if (state.rebuildError !== null) return lastGood();
  let force = false;
  if (state.builtVersion >= state.krlVersion && state.builtIssuers !== issuerIds(issuerRows)) {
    // Issuers came or went since the build (a key id revoked mount-wide reaches a new
    // issuer; a deleted issuer's section goes): that is a change of the KRL.
    await krlChangeStatement(db, mount, Date.now());
  } else if (state.builtVersion >= state.krlVersion) {
    const stored = await storedKrl(env, mount, state.builtVersion);
    if (stored) return { ...stored, stale: false };
    force = true;
  }
  const rebuilt = await rebuildKrl(env, db, mount, { force });
  if (!rebuilt.ok) return lastGood();
  if (rebuilt.built) return { ...rebuilt.built, stale: false };
  // Another request built it meanwhile.
  return loadServed(env, db, mount);
}

/** `GET <mount>/krl` (S23, unauthenticated per S16a). */
export async function serveKrl(env: Env, db: Db, mount: string, headers: Headers): Promise<Response> {
  const krl = await served.get(mount, "krl", () => loadServed(env, db, mount));
  const common: Record<string, string> = { ETag: krl.etag, "Cache-Control": "public, max-age=60" };
  if (krl.stale) common[KRL_STALE_HEADER] = "true";
  const match = headers.get("If-None-Match");
  if (match?.split(",").some((tag) => tag.trim().replace(/^W\//, "") === krl.etag || tag.trim() === "*")) {
    return new Response(null, { status: 304, headers: common });
  }
  return new Response(krl.bytes, { status: 200, headers: { ...common, "Content-Type": "application/octet-stream" } });
}

/** What `sys/health` reports about the KRLs (B17). */
export interface KrlHealth {
  /** Mounts whose KRL is behind because rebuilds fail (the last good one is served). */
  stale: string[];
  /** Per mount, revocations whose issuer was deleted before B17 recorded its CA key. */
  orphanedRevocations: Record<string, number>;
}

export async function krlHealth(db: Db, mounts: string[]): Promise<KrlHealth> {
  if (mounts.length === 0) return { stale: [], orphanedRevocations: {} };
  const [staleRows, orphanRows] = await db.batch([
    db
      .select({ mount: sshKrlState.mount })
      .from(sshKrlState)
      .where(and(inArray(sshKrlState.mount, mounts), isNotNull(sshKrlState.rebuildError)))
      .orderBy(asc(sshKrlState.mount)),
    db
      .select({ mount: sshRevocations.mount, n: sql<number>`count(*)` })
      .from(sshRevocations)
      // (mount, ca_key_fingerprint) is indexed: a probe never scans every revocation.
      .where(and(inArray(sshRevocations.mount, mounts), eq(sshRevocations.caKeyFingerprint, "")))
      .groupBy(sshRevocations.mount)
      .orderBy(asc(sshRevocations.mount)),
  ]);
  return {
    stale: staleRows.map((r) => r.mount),
    orphanedRevocations: Object.fromEntries(orphanRows.map((r) => [r.mount, r.n])),
  };
}

/** Mounts with a recorded rebuild failure (the scheduled tidy retries them too). */
export async function staleKrlMounts(db: Db, mounts: string[]): Promise<string[]> {
  return (await krlHealth(db, mounts)).stale;
}

/**
 * B17's one-time back-fill: revocations written before `ca_key_fingerprint` existed get
 * the fingerprint of their issuer's key, or '' when that issuer is already gone (orphaned).
 * Idempotent: only rows still NULL are read and written.
 */
export async function backfillRevocationFingerprints(db: Db): Promise<number> {
  const [pending, issuers] = await db.batch([
    db
      .select({ id: sshRevocations.id, issuerId: sshRevocations.issuerId })
      .from(sshRevocations)
      .where(and(sql`${sshRevocations.caKeyFingerprint} IS NULL`, isNotNull(sshRevocations.issuerId))),
    db.select({ id: sshIssuers.id, publicKey: sshIssuers.publicKey }).from(sshIssuers),
  ]);
  const fingerprints = new Map<string, string>();
  for (const issuer of issuers) {
    try {
      fingerprints.set(issuer.id, await caKeyFingerprint(issuer.publicKey));
    } catch {
      // A key that does not parse names no CA; its revocations stay as they are.
    }
  }
  let written = 0;
  for (const row of pending) {
    const issuerKnown = issuers.some((i) => i.id === row.issuerId);
    const fingerprint = fingerprints.get(row.issuerId!) ?? (issuerKnown ? null : "");
    if (fingerprint === null) continue;
    await db
      .update(sshRevocations)
      .set({ caKeyFingerprint: fingerprint })
      .where(and(eq(sshRevocations.id, row.id), sql`${sshRevocations.caKeyFingerprint} IS NULL`));
    written++;
  }
  return written;
}

/** A retry message of the `keyway-ssh-krl` Queue. */
interface KrlRebuildMessage {
  mount: string;
  attempt: number;
  request_id?: string;
}

function isKrlRebuildMessage(body: unknown): body is KrlRebuildMessage {
  const b = body as KrlRebuildMessage | null;
  return typeof b === "object" && b !== null && typeof b.mount === "string" && typeof b.attempt === "number";
}

/**
 * The `keyway-ssh-krl` consumer (B17): one rebuild attempt per message; a failure records
 * itself and sends the next message with a longer delay, so the message is acknowledged
 * either way (the Queue's own retries are for the consumer itself failing).
 */
export async function handleKrlRebuildBatch(batch: MessageBatch<unknown>, env: Env, db: Db): Promise<void> {
  for (const message of batch.messages) {
    if (!isKrlRebuildMessage(message.body)) {
      logError("", "malformed ssh krl rebuild message", `id=${message.id}`);
      message.ack();
      continue;
    }
    const { mount, request_id: requestId = "" } = message.body;
    const [state] = await db.select().from(sshKrlState).where(eq(sshKrlState.mount, mount)).limit(1);
    // Done already (a later change or another retry succeeded), or nothing to build.
    if (state && (state.rebuildError !== null || state.builtVersion < state.krlVersion)) {
      await rebuildKrl(env, db, mount, { force: true, requestId });
    }
    message.ack();
  }
}
