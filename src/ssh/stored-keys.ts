/**
 * Decision B17's one-time rewrite of stored keys: rows written before every public key went
 * through one canonical parser are rewritten to the canonical text, and revocations written
 * before they recorded their CA key's fingerprint get it from their issuer row. Readers
 * already see the canonical form (repo.ts reads every row through the parser), so this only
 * makes the stored rows match; it runs after the first /v1 request an isolate serves
 * (`waitUntil`), and is idempotent, so any number of isolates may run it.
 */
import { createDb } from "../db/client";
import { logError } from "../lib/log";
import { rewriteNonCanonicalIssuerKeys } from "./issuers/repo";
import { backfillRevocationFingerprints } from "./revocation/krl";

/** Whether this isolate has started the rewrite (a boolean, reset when the rewrite fails). */
let started = false;

/** The rewrite itself: issuers first, so the back-fill reads canonical keys. */
export async function rewriteStoredKeys(env: Env): Promise<{ issuers: number; revocations: number }> {
  const db = createDb(env.DB);
  const issuers = await rewriteNonCanonicalIssuerKeys(db);
  const revocations = await backfillRevocationFingerprints(db);
  return { issuers, revocations };
}

/** Start the rewrite once per isolate, after the answer. */
export function rewriteStoredKeysOnce(env: Env, waitUntil: (work: Promise<unknown>) => void): void {
  if (started) return;
  started = true;
  waitUntil(
    rewriteStoredKeys(env).catch((e) => {
      started = false;
      logError("", "rewriting stored SSH keys into canonical form failed; the next request retries", e);
    }),
  );
}

/** Make the next request run the rewrite again, as a fresh isolate would (tests). */
export function forgetStoredKeyRewrite(): void {
  started = false;
}
