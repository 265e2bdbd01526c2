/**
 * Decision B17: rows written before every public key went through the canonical parser are
 * rewritten by the first /v1 request an isolate serves, after its answer (`waitUntil`).
 * The isolate already served the setup's requests, so the test first makes it forget, as a
 * fresh isolate would (the rewrite itself, and what readers see meanwhile: stored-keys.test.ts).
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { handleFetch } from "../../../src/index";
import { forgetStoredKeyRewrite } from "../../../src/ssh/stored-keys";
import { CA_KEYS } from "./ca-fixtures";

describe("B17: the one-time rewrite after deploy", () => {
  it("the first /v1 request rewrites an untrimmed issuer key and back-fills revocations, after answering", async () => {
    const id = crypto.randomUUID();
    const now = Date.now();
    await env.DB.prepare(
      `INSERT INTO ssh_issuers (id, mount, name, public_key, private_key_encrypted, key_type, trusted, created_at, updated_at)
       VALUES (?, 'ssh', 'pre-b17', ?, 'not-read-here', 'ssh-ed25519', 1, ?, ?)`,
    )
      .bind(id, `\t${CA_KEYS.ed25519.publicKey.trim()}  \r\n`, now, now)
      .run();
    const orphan = crypto.randomUUID();
    await env.DB.prepare(
      `INSERT INTO ssh_revocations (id, mount, kind, issuer_id, serial, requester_display_name, requester_accessor, created_at)
       VALUES (?, 'ssh', 'serial', ?, '0000000000000001', '', '', ?)`,
    )
      .bind(orphan, crypto.randomUUID(), now)
      .run();

    forgetStoredKeyRewrite();
    const ctx = createExecutionContext();
    const res = await handleFetch(new Request("http://keyway.test/v1/sys/seal-status"), env, ctx);
    expect(res.status).toBe(200);
    await waitOnExecutionContext(ctx);

    const issuer = await env.DB.prepare("SELECT public_key FROM ssh_issuers WHERE id = ?").bind(id).first();
    expect(issuer).toEqual({ public_key: CA_KEYS.ed25519.publicKey.trim() });
    const revocation = await env.DB.prepare("SELECT ca_key_fingerprint FROM ssh_revocations WHERE id = ?")
      .bind(orphan)
      .first();
    expect(revocation).toEqual({ ca_key_fingerprint: "" });

    // Once per isolate: a row changed behind its back now stays as it is.
    await env.DB.prepare("UPDATE ssh_issuers SET public_key = ? WHERE id = ?")
      .bind(` ${CA_KEYS.ed25519.publicKey.trim()}`, id)
      .run();
    const again = createExecutionContext();
    await handleFetch(new Request("http://keyway.test/v1/sys/seal-status"), env, again);
    await waitOnExecutionContext(again);
    const unchanged = await env.DB.prepare("SELECT public_key FROM ssh_issuers WHERE id = ?").bind(id).first();
    expect(unchanged).toEqual({ public_key: ` ${CA_KEYS.ed25519.publicKey.trim()}` });
  });
});
