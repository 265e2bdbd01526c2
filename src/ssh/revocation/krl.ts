/**
 * Each mount's OpenSSH KRL (decision S23): rebuilt when its revocations change, kept in R2
 * under `ssh-krl/<mount>/<krl_version>`, and served from there (through a per-isolate
 * cache of at most MOUNT_CONTEXT_TTL_MS), never rebuilt per read.
 *
 * Versions: every change bumps `ssh_krl_state.krl_version` in the same D1 batch as the
 * change itself (krlChangeStatement), then rebuildKrl builds that version from one
 * consistent D1 batch and records it as built. A read that finds the built version behind
 * (a rebuild that failed) builds it then. The KRL's generated_date is the time of the
 * change, so two builds of one version are the same bytes.
 */
import { and, asc, eq, lt, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { sshIssuers, sshKrlState, sshRevocations } from "../../db/schema";
import { fromBase64 } from "../../lib/bytes";
import { encodeKrl, type KrlCertificateSection } from "../../lib/sshwire/krl";
import { parsePublicKeyText } from "../../lib/sshwire/public-key";
import { mountContextCache } from "../context-cache";
import { issuerSetFromRows, issuerSetQueries } from "./issuers";

/** The bytes and validators of one built KRL. */
interface BuiltKrl {
  version: number;
  etag: string;
  bytes: Uint8Array;
}

const served = mountContextCache<BuiltKrl>();

function objectKey(mount: string, version: number): string {
  return `ssh-krl/${mount}/${version}`;
}

function etagOf(version: number): string {
  return `"krl-${version}"`;
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
 * writes the empty-CA wildcard), then the SHA256 fingerprints of revoked keys. Entries
 * past their `expires_at` are left out.
 */
function krlBytes(
  version: number,
  changedAt: number,
  issuers: ReturnType<typeof issuerSetFromRows>,
  revocations: (typeof sshRevocations.$inferSelect)[],
  nowSeconds: number,
): Uint8Array {
  const live = revocations.filter((r) => r.expiresAt === null || r.expiresAt > nowSeconds);
  const certificates: KrlCertificateSection[] = [];
  for (const issuer of issuers.issuers) {
    const serials = live
      .filter((r) => r.kind === "serial" && r.issuerId === issuer.id)
      .map((r) => BigInt(`0x${r.serial}`));
    const keyIds = live
      .filter((r) => r.kind === "key_id" && (r.issuerId === null || r.issuerId === issuer.id))
      .map((r) => r.keyId!);
    if (serials.length === 0 && keyIds.length === 0) continue;
    certificates.push({
      caKey: parsePublicKeyText(issuer.publicKey).blob,
      serials: serials.map((s) => ({ lo: s, hi: s })),
      keyIds,
    });
  }
  const sha256Fingerprints = live
    .filter((r) => r.kind === "public_key")
    .map((r) => fromBase64(r.publicKeyFingerprint!.slice("SHA256:".length)));
  return encodeKrl({ krlVersion: BigInt(version), generatedDate: BigInt(changedAt), certificates, sha256Fingerprints });
}

/**
 * Build the mount's current KRL version if it is not built yet, store it in R2 and record
 * it. Returns what is now the built KRL (null when the mount has never changed).
 */
export async function rebuildKrl(env: Env, db: Db, mount: string, force = false): Promise<BuiltKrl | null> {
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
  const bytes = krlBytes(state.krlVersion, state.changedAt, issuers, revocations, Math.floor(Date.now() / 1000));
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
  served.invalidate(mount);
  return { version: state.krlVersion, etag: etagOf(state.krlVersion), bytes };
}

/** The KRL of a mount with no change yet: version 0, nothing revoked. */
const EMPTY_KRL: BuiltKrl = { version: 0, etag: etagOf(0), bytes: encodeKrl({ krlVersion: 0n, generatedDate: 0n }) };

/** The issuers a KRL covers, as recorded with the build. */
function issuerIds(issuers: { id: string }[]): string {
  return issuers.map((i) => i.id).join(",");
}

async function loadServed(env: Env, db: Db, mount: string): Promise<BuiltKrl> {
  const [stateRows, issuerRows] = await db.batch([
    db.select().from(sshKrlState).where(eq(sshKrlState.mount, mount)).limit(1),
    db
      .select({ id: sshIssuers.id })
      .from(sshIssuers)
      .where(eq(sshIssuers.mount, mount))
      .orderBy(asc(sshIssuers.createdAt), asc(sshIssuers.id)),
  ]);
  const state = stateRows[0];
  if (!state) return EMPTY_KRL;
  if (state.builtVersion >= state.krlVersion && state.builtIssuers !== issuerIds(issuerRows)) {
    // Issuers came or went since the build (a key id revoked mount-wide reaches a new
    // issuer; a deleted issuer's section goes): that is a change of the KRL.
    await krlChangeStatement(db, mount, Date.now());
    return (await rebuildKrl(env, db, mount)) ?? loadServed(env, db, mount);
  }
  if (state.builtVersion < state.krlVersion) return (await rebuildKrl(env, db, mount)) ?? loadServed(env, db, mount);
  const object = await env.SSH_KRLS.get(objectKey(mount, state.builtVersion));
  if (!object) return (await rebuildKrl(env, db, mount, true)) ?? EMPTY_KRL;
  return {
    version: state.builtVersion,
    etag: etagOf(state.builtVersion),
    bytes: new Uint8Array(await object.arrayBuffer()),
  };
}

/** `GET <mount>/krl` (S23, unauthenticated per S16a). */
export async function serveKrl(env: Env, db: Db, mount: string, headers: Headers): Promise<Response> {
  const krl = await served.get(mount, "krl", () => loadServed(env, db, mount));
  const common = { ETag: krl.etag, "Cache-Control": "public, max-age=60" };
  const match = headers.get("If-None-Match");
  if (match?.split(",").some((tag) => tag.trim().replace(/^W\//, "") === krl.etag || tag.trim() === "*")) {
    return new Response(null, { status: 304, headers: common });
  }
  return new Response(krl.bytes, { status: 200, headers: { ...common, "Content-Type": "application/octet-stream" } });
}
