/**
 * Decision B17 through HTTP against the real D1, R2 and Queue bindings: every stored public
 * key is canonical (each write path, and rows written before), revocations follow their CA
 * key's fingerprint (delete + re-import keeps them in the KRL; orphans are reported), and a
 * KRL rebuild that fails leaves the last good KRL served with `Keyway-KRL-Stale: true`, a
 * warning on `revoke`, `krl_stale` in `sys/health`, one error line per attempt and a Queue
 * retry. What `ssh-keygen -Q` makes of delete + re-import: test/interop/ssh/krl-reimport.test.ts.
 */
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { parseCanonicalPublicKey } from "../../../src/lib/sshwire/public-key";
import { handleQueue } from "../../../src/queue";
import { sha256Fingerprint } from "../../../src/ssh/revocation/inventory-routes";
import { KRL_REBUILD_QUEUE_NAME, krlRetryDelaySeconds } from "../../../src/ssh/revocation/krl";
import { scheduledTidy } from "../../../src/ssh/revocation/routes";
import { rewriteStoredKeys } from "../../../src/ssh/stored-keys";
import { deliverBatch } from "../../helpers/queue";
import { uniqueName, vault } from "../../helpers/vault";
import { blobOf, CA_KEYS, SUBJECT_KEYS } from "./ca-fixtures";

const MOUNT = "ssh";

/** The spellings a client may send for one key: each must be stored as `canonical`. */
function spellings(line: string): Record<string, string> {
  const [type, b64] = line.trim().split(" ");
  return {
    leading: `  ${type} ${b64} spaced-comment`,
    trailing: `${type} ${b64} spaced-comment \n`,
    crlf: `${type} ${b64} spaced-comment\r\n`,
    tabs: `\t${type}\t${b64}\t spaced-comment\t`,
  };
}

function canonicalOf(line: string): string {
  const [type, b64] = line.trim().split(" ");
  return `${type} ${b64} spaced-comment`;
}

async function storedIssuerKeys(): Promise<string[]> {
  const rows = await env.DB.prepare("SELECT public_key FROM ssh_issuers WHERE mount = ?").bind(MOUNT).all();
  return rows.results.map((r) => r.public_key as string);
}

async function reset(): Promise<void> {
  expect((await vault("DELETE", `${MOUNT}/config/ca`)).status).toBe(204);
  await env.DB.prepare("DELETE FROM ssh_revocations WHERE mount = ?").bind(MOUNT).run();
  await env.DB.prepare("DELETE FROM ssh_krl_state WHERE mount = ?").bind(MOUNT).run();
}

async function fetchKrl(): Promise<{ status: number; bytes: Uint8Array; headers: Headers }> {
  const { handleFetch } = await import("../../../src/index");
  const res = await handleFetch(new Request(`http://keyway.test/v1/${MOUNT}/krl`), env, createExecutionContext());
  return { status: res.status, bytes: new Uint8Array(await res.arrayBuffer()), headers: res.headers };
}

function contains(haystack: Uint8Array, needle: Uint8Array): boolean {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

/** A serial as the KRL's section stores it (uint64, big-endian). */
function serialBytes(hex: string): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt(`0x${hex}`));
  return out;
}

async function importPair(pair: { privateKey: string; publicKey: string }, name?: string) {
  const res = await vault("POST", name ? `${MOUNT}/issuers/import/${name}` : `${MOUNT}/issuers/import`, {
    body: { private_key: pair.privateKey, public_key: pair.publicKey },
  });
  expect(res.status, res.text).toBe(200);
  return res.json.data.issuer_id as string;
}

beforeEach(reset);

describe("B17: every stored public key is canonical", () => {
  it("the one parser: surrounding space, CRLF and tabs go, the comment stays, the blob's type wins", () => {
    const line = CA_KEYS.ed25519.publicKey;
    for (const [what, text] of Object.entries(spellings(line))) {
      expect(parseCanonicalPublicKey(text).text, what).toBe(canonicalOf(line));
    }
    const [, b64] = line.trim().split(" ");
    expect(parseCanonicalPublicKey(` ${b64} `).text).toBe(`ssh-ed25519 ${b64}`);
    expect(parseCanonicalPublicKey(`ssh-rsa ${b64} a\u0001b`).text).toBe(`ssh-ed25519 ${b64} a b`);
  });

  it("config/ca with a supplied pair stores and serves the canonical text, for every spelling", async () => {
    for (const [what, text] of Object.entries(spellings(CA_KEYS.ed25519.publicKey))) {
      await reset();
      const res = await vault("POST", `${MOUNT}/config/ca`, {
        body: { private_key: CA_KEYS.ed25519.privateKey, public_key: text },
      });
      expect(res.status, what).toBe(204);
      expect(await storedIssuerKeys(), what).toEqual([canonicalOf(CA_KEYS.ed25519.publicKey)]);
      expect((await vault("GET", `${MOUNT}/public_key`, { token: null })).text).toBe(
        canonicalOf(CA_KEYS.ed25519.publicKey),
      );
    }
  });

  it("issuers/import (named and not) stores the canonical text, for every spelling", async () => {
    for (const [what, text] of Object.entries(spellings(CA_KEYS.ecdsa256.publicKey))) {
      await reset();
      const name = what === "leading" ? undefined : uniqueName("imp");
      const res = await vault("POST", name ? `${MOUNT}/issuers/import/${name}` : `${MOUNT}/issuers/import`, {
        body: { private_key: CA_KEYS.ecdsa256.privateKey, public_key: text },
      });
      expect(res.status, what).toBe(200);
      expect(res.json.data.public_key, what).toBe(canonicalOf(CA_KEYS.ecdsa256.publicKey));
      expect(await storedIssuerKeys(), what).toEqual([canonicalOf(CA_KEYS.ecdsa256.publicKey)]);
      // A KRL with this issuer builds (the original finding: a leading space froze it).
      const revoked = await vault("POST", `${MOUNT}/revoke`, { body: { serial_number: "1a" } });
      expect(revoked.json.warnings ?? []).toEqual([]);
      const krl = await fetchKrl();
      expect(krl.status).toBe(200);
      expect(krl.headers.get("Keyway-KRL-Stale")).toBeNull();
    }
  });

  it("config/ca generating a key stores exactly the text it answers", async () => {
    const res = await vault("POST", `${MOUNT}/config/ca`, { body: { key_type: "ed25519" } });
    expect(res.status).toBe(200);
    const answered = res.json.data.public_key as string;
    expect(answered).toBe(parseCanonicalPublicKey(answered).text);
    expect(await storedIssuerKeys()).toEqual([answered]);
  });

  it("revoke by public_key stores the canonical key and its fingerprint, for every spelling", async () => {
    await importPair(CA_KEYS.ed25519);
    for (const [what, text] of Object.entries(spellings(SUBJECT_KEYS.ecdsa256))) {
      const res = await vault("POST", `${MOUNT}/revoke`, { body: { public_key: text } });
      expect(res.status, `${what}: ${res.text}`).toBe(200);
      const read = await vault("GET", `${MOUNT}/revocation/${res.json.data.revocation_id}`);
      const [type, b64] = SUBJECT_KEYS.ecdsa256.trim().split(" ");
      expect(read.json.data.public_key, what).toBe(`${type} ${b64}`);
      expect(read.json.data.public_key_fingerprint).toBe(await sha256Fingerprint(blobOf(SUBJECT_KEYS.ecdsa256)));
    }
  });

  it("rows written before B17 read canonical, build the KRL, and are rewritten once", async () => {
    const id = await importPair(CA_KEYS.ed25519, "old");
    const untrimmed = ` ${CA_KEYS.ed25519.publicKey.trim()}\r\n`;
    await env.DB.prepare("UPDATE ssh_issuers SET public_key = ? WHERE id = ?").bind(untrimmed, id).run();
    // A revocation written before it recorded its CA key.
    const revoked = await vault("POST", `${MOUNT}/revoke`, { body: { serial_number: "2b", issuer_ref: "old" } });
    await env.DB.prepare("UPDATE ssh_revocations SET ca_key_fingerprint = NULL WHERE id = ?")
      .bind(revoked.json.data.revocation_id)
      .run();
    await vault("POST", `${MOUNT}/revoke`, { body: { key_id: "someone" } });

    // Readers see the canonical form already; the KRL builds.
    expect((await vault("GET", `${MOUNT}/issuer/old/public_key`, { token: null })).text).toBe(
      CA_KEYS.ed25519.publicKey.trim(),
    );
    const krl = await fetchKrl();
    expect(krl.status).toBe(200);
    expect(krl.headers.get("Keyway-KRL-Stale")).toBeNull();
    expect(contains(krl.bytes, serialBytes("2b"))).toBe(true);

    expect(await rewriteStoredKeys(env)).toEqual({ issuers: 1, revocations: 1 });
    expect(await storedIssuerKeys()).toEqual([CA_KEYS.ed25519.publicKey.trim()]);
    const row = await env.DB.prepare("SELECT ca_key_fingerprint FROM ssh_revocations WHERE id = ?")
      .bind(revoked.json.data.revocation_id)
      .first();
    expect(row).toEqual({ ca_key_fingerprint: await sha256Fingerprint(blobOf(CA_KEYS.ed25519.publicKey)) });
    // Idempotent.
    expect(await rewriteStoredKeys(env)).toEqual({ issuers: 0, revocations: 0 });
  });
});

describe("B17: revocations follow the CA key", () => {
  it("deleting an issuer and importing the same key again keeps its revocations in the KRL", async () => {
    await importPair(CA_KEYS.ed25519, "main");
    await importPair(CA_KEYS.ecdsa256, "other");
    const bySerial = await vault("POST", `${MOUNT}/revoke`, { body: { serial_number: "c0ffee", issuer_ref: "other" } });
    expect(bySerial.status).toBe(200);
    const byKeyId = await vault("POST", `${MOUNT}/revoke`, { body: { key_id: "mallory", issuer_ref: "other" } });
    expect(byKeyId.status).toBe(200);
    const caFingerprint = await sha256Fingerprint(blobOf(CA_KEYS.ecdsa256.publicKey));
    const listed = await vault("GET", `${MOUNT}/revocations?list=true`);
    expect(listed.json.data.key_info[bySerial.json.data.revocation_id].ca_key_fingerprint).toBe(caFingerprint);

    const caBlob = blobOf(CA_KEYS.ecdsa256.publicKey);
    expect(contains((await fetchKrl()).bytes, caBlob)).toBe(true);
    expect((await vault("DELETE", `${MOUNT}/issuer/other`)).status).toBe(204);
    // While the key is gone its section cannot be written (a KRL section names its CA key).
    expect(contains((await fetchKrl()).bytes, caBlob)).toBe(false);

    await importPair(CA_KEYS.ecdsa256, "restored");
    const krl = await fetchKrl();
    expect(krl.status).toBe(200);
    expect(contains(krl.bytes, caBlob)).toBe(true);
    expect(contains(krl.bytes, serialBytes("c0ffee"))).toBe(true);
    expect(contains(krl.bytes, new TextEncoder().encode("mallory"))).toBe(true);
  });

  it("revocations whose issuer was gone before B17 are orphaned: empty fingerprint, counted by sys/health", async () => {
    const id = await importPair(CA_KEYS.ed25519, "gone");
    const revoked = await vault("POST", `${MOUNT}/revoke`, { body: { serial_number: "77", issuer_ref: "gone" } });
    await env.DB.prepare("UPDATE ssh_revocations SET ca_key_fingerprint = NULL WHERE id = ?")
      .bind(revoked.json.data.revocation_id)
      .run();
    await env.DB.prepare("DELETE FROM ssh_issuers WHERE id = ?").bind(id).run();
    expect(await rewriteStoredKeys(env)).toEqual({ issuers: 0, revocations: 1 });

    const listed = await vault("GET", `${MOUNT}/revocations?list=true`);
    expect(listed.json.data.key_info[revoked.json.data.revocation_id]).toMatchObject({
      issuer_id: id,
      ca_key_fingerprint: "",
    });
    const health = await vault("GET", "sys/health", { token: null });
    expect(health.status).toBe(200);
    expect(health.json.krl_orphaned_revocations).toEqual({ [MOUNT]: 1 });
  });
});

describe("B17: a failed rebuild never stops the KRL", () => {
  it("serves the last good KRL marked stale, warns on revoke, reports in sys/health, retries through the Queue", async () => {
    await importPair(CA_KEYS.ed25519, "ca");
    expect((await vault("POST", `${MOUNT}/revoke`, { body: { serial_number: "0a" } })).status).toBe(200);
    const good = await fetchKrl();
    expect(good.status).toBe(200);
    const goodEtag = good.headers.get("ETag");

    // Stored data no rebuild can read (written behind the API's back).
    await env.DB.prepare(
      `INSERT INTO ssh_revocations (id, mount, kind, issuer_id, serial, requester_display_name, requester_accessor, created_at, ca_key_fingerprint)
       VALUES (?, ?, 'serial', NULL, 'not-hex', '', '', ?, ?)`,
    )
      .bind(crypto.randomUUID(), MOUNT, Date.now(), await sha256Fingerprint(blobOf(CA_KEYS.ed25519.publicKey)))
      .run();

    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const revoked = await vault("POST", `${MOUNT}/revoke`, { body: { key_id: "eve" } });
    expect(revoked.status).toBe(200);
    expect(revoked.json.data.revocation_id).toBeTruthy();
    expect(revoked.json.warnings).toHaveLength(1);
    expect(revoked.json.warnings[0]).toMatch(/KRL could not be rebuilt \(.+\).*Keyway-KRL-Stale: true/);

    for (let i = 0; i < 3; i++) {
      const stale = await fetchKrl();
      expect(stale.status).toBe(200);
      expect(stale.headers.get("Keyway-KRL-Stale")).toBe("true");
      expect(stale.headers.get("ETag")).toBe(goodEtag);
      expect(stale.bytes).toEqual(good.bytes);
    }
    const rebuildLines = () => errors.mock.calls.filter((c) => String(c[0]).includes("ssh krl rebuild of mount"));
    // One line per attempt (the revoke's), none per read.
    expect(rebuildLines()).toHaveLength(1);

    const health = await vault("GET", "sys/health", { token: null });
    expect(health.status).toBe(200);
    expect(health.json.krl_stale).toEqual([MOUNT]);

    // The Queue's retry fails again: one more line, one more attempt recorded.
    const retry = await deliverBatch(handleQueue, KRL_REBUILD_QUEUE_NAME, [{ mount: MOUNT, attempt: 1 }]);
    expect(retry.result.explicitAcks).toEqual(retry.ids);
    expect(rebuildLines()).toHaveLength(2);
    const state = await env.DB.prepare("SELECT rebuild_attempts, rebuild_error FROM ssh_krl_state WHERE mount = ?")
      .bind(MOUNT)
      .first();
    expect(state?.rebuild_attempts).toBe(2);
    expect(state?.rebuild_error).toBeTruthy();

    // Repaired: the next retry builds, and everything is current again.
    await env.DB.prepare("DELETE FROM ssh_revocations WHERE serial = 'not-hex'").run();
    await deliverBatch(handleQueue, KRL_REBUILD_QUEUE_NAME, [{ mount: MOUNT, attempt: 2 }]);
    const fresh = await fetchKrl();
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get("Keyway-KRL-Stale")).toBeNull();
    expect(fresh.headers.get("ETag")).not.toBe(goodEtag);
    expect(contains(fresh.bytes, new TextEncoder().encode("eve"))).toBe(true);
    expect((await vault("GET", "sys/health", { token: null })).json.krl_stale).toEqual([]);
    errors.mockRestore();
  });

  it("the hourly cron retries a stale mount too (a lost Queue message does not leave it stale)", async () => {
    await importPair(CA_KEYS.ed25519, "ca");
    await env.DB.prepare(
      `INSERT INTO ssh_revocations (id, mount, kind, issuer_id, serial, requester_display_name, requester_accessor, created_at, ca_key_fingerprint)
       VALUES (?, ?, 'serial', NULL, 'not-hex', '', '', ?, ?)`,
    )
      .bind(crypto.randomUUID(), MOUNT, Date.now(), await sha256Fingerprint(blobOf(CA_KEYS.ed25519.publicKey)))
      .run();
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const revoked = await vault("POST", `${MOUNT}/revoke`, { body: { key_id: "trent" } });
    expect(revoked.json.warnings).toHaveLength(1);
    expect((await vault("GET", "sys/health", { token: null })).json.krl_stale).toEqual([MOUNT]);
    await env.DB.prepare("DELETE FROM ssh_revocations WHERE serial = 'not-hex'").run();
    await scheduledTidy(env);
    expect((await vault("GET", "sys/health", { token: null })).json.krl_stale).toEqual([]);
    const krl = await fetchKrl();
    expect(krl.headers.get("Keyway-KRL-Stale")).toBeNull();
    expect(contains(krl.bytes, new TextEncoder().encode("trent"))).toBe(true);
    errors.mockRestore();
  });

  it("retries back off from 10 s to 5 minutes", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 50].map(krlRetryDelaySeconds)).toEqual([10, 20, 40, 80, 160, 300, 300, 300]);
  });

  it("a malformed retry message is acknowledged, never retried", async () => {
    const res = await deliverBatch(handleQueue, KRL_REBUILD_QUEUE_NAME, [{ nope: 1 }, "x", null]);
    expect(res.result.explicitAcks).toEqual(res.ids);
  });
});
