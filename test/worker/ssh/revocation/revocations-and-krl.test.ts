/**
 * Revocation (S23) and the mount's KRL, through HTTP against the real D1 and R2 bindings.
 * Mount `ssh-two` holds two issuers: `default` (Ed25519, through config/ca) and `second`
 * (ECDSA-256, through issuers/import). The inventory (S22): inventory.test.ts. What
 * OpenSSH makes of the KRL is proven in test/interop (encoder) and by the sshd end-to-end
 * test (test/interop/ssh/krl-sshd.test.ts).
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { fromBase64 } from "../../../../src/lib/bytes";
import { encodeKrl, krlVersionOf } from "../../../../src/lib/sshwire/krl";
import { scheduledTidy } from "../../../../src/ssh/revocation/routes";
import { importRevocationIssuers, MOUNT, role, sign } from "../../../helpers/ssh-revocation";
import { tokenWithPolicy, vault } from "../../../helpers/vault";
import { blobOf, CA_KEYS, decodeSignedKey, SUBJECT_KEYS } from "../ca-fixtures";

let defaultIssuerId: string;
let secondIssuerId: string;

beforeAll(async () => {
  ({ defaultIssuerId, secondIssuerId } = await importRevocationIssuers());
});

async function krl(headers: Record<string, string> = {}) {
  return vault("GET", `${MOUNT}/krl`, { token: null, headers });
}

/** The generated_date of a KRL (PROTOCOL.krl §1). */
function generatedDateOf(bytes: Uint8Array): bigint {
  return new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(20);
}

/** The KRL's raw bytes (the helper decodes bodies as text). */
async function fetchKrlRaw(): Promise<Response> {
  const { handleFetch } = await import("../../../../src/index");
  const { createExecutionContext } = await import("cloudflare:test");
  return handleFetch(new Request(`http://keyway.test/v1/${MOUNT}/krl`), env, createExecutionContext());
}

function contains(haystack: Uint8Array, needle: Uint8Array): boolean {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

async function revoke(body: Record<string, unknown>, token?: string) {
  return vault("POST", `${MOUNT}/revoke`, { body, ...(token ? { token } : {}) });
}

describe("S23 revocation and the KRL", () => {
  it("refuses malformed revocations with 400 and changes nothing", async () => {
    const before = await krl();
    const cases: Array<[Record<string, unknown>, string | RegExp]> = [
      [{}, "exactly one of serial_number, key_id or public_key must be given"],
      [{ serial_number: "1a", key_id: "x" }, "exactly one of serial_number, key_id or public_key must be given"],
      [{ serial_number: "0" }, /serial_number 0 cannot be revoked/],
      [{ serial_number: "00:00" }, /serial_number 0 cannot be revoked/],
      [{ serial_number: "xyz" }, /invalid serial_number/],
      [{ serial_number: "1ffffffffffffffff" }, /invalid serial_number/],
      [{ serial_number: "1a", issuer_ref: "nope" }, "unable to find issuer for reference: nope"],
      [{ key_id: "a\u0000b" }, "key_id must not contain NUL"],
      [{ key_id: "é".repeat(513) }, "key_id is longer than 1024 bytes"],
      [{ key_id: "x", issuer_ref: "nope" }, "unable to find issuer for reference: nope"],
      [{ public_key: "ssh-ed25519 AAAA" }, /failed to parse public_key/],
      [{ public_key: SUBJECT_KEYS.certificate }, "public_key must be a plain public key, not a certificate"],
      [
        { public_key: SUBJECT_KEYS.ed25519, issuer_ref: "default" },
        "issuer_ref applies to serial_number and key_id only",
      ],
      [{ key_id: "x", expires_at: "tomorrow" }, /expires_at must be an RFC 3339 time/],
      [
        { key_id: "x", expires_at: "2020-01-01T00:00:00Z" },
        "expires_at is in the past: the revocation would never be in the KRL",
      ],
    ];
    for (const [body, message] of cases) {
      const res = await revoke(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      if (typeof message === "string") expect(res.json.errors).toEqual([message]);
      else expect(res.json.errors[0]).toMatch(message);
    }
    expect((await revoke({ key_id: "k".repeat(1024) })).status).toBe(200);
    const after = await krl();
    expect(after.headers.get("ETag")).not.toBe(before.headers.get("ETag"));
    expect((await vault("GET", `${MOUNT}/revocations?list=true`)).json.data.keys).toHaveLength(1);
  });

  it("logs each revocation change as one structured line, without secrets", async () => {
    const spy = vi.spyOn(console, "log");
    try {
      const made = await revoke({ public_key: SUBJECT_KEYS.ecdsa384 });
      expect(made.status).toBe(200);
      const id = made.json.data.revocation_id;
      expect((await vault("DELETE", `${MOUNT}/revocation/${id}`)).status).toBe(204);
      const lines = spy.mock.calls.map((c) => String(c[0])).filter((l) => l.includes(id));
      const events = lines.map((l) => JSON.parse(l));
      expect(events.map((e) => e.message)).toEqual(["ssh revocation created", "ssh revocation deleted"]);
      expect(events[0]).toMatchObject({ level: "info", mount: MOUNT, kind: "public_key", accessor: "root" });
      expect(events[0].public_key_fingerprint).toMatch(/^SHA256:/);
      for (const line of lines) expect(line).not.toContain(env.ROOT_TOKEN);
    } finally {
      spy.mockRestore();
    }
  });

  it("needs update to revoke and delete to delete a revocation; the KRL needs no token", async () => {
    const reader = await tokenWithPolicy({
      [`${MOUNT}/revoke`]: ["read"],
      [`${MOUNT}/revocation/*`]: ["read", "update"],
    });
    expect((await revoke({ key_id: "perm" }, reader)).status).toBe(403);
    const updater = await tokenWithPolicy({ [`${MOUNT}/revoke`]: ["update"] });
    const made = await revoke({ key_id: "perm" }, updater);
    expect(made.status, made.text).toBe(200);
    const id = made.json.data.revocation_id;
    expect((await vault("DELETE", `${MOUNT}/revocation/${id}`, { token: reader })).status).toBe(403);
    const deleter = await tokenWithPolicy({ [`${MOUNT}/revocation/*`]: ["delete"] });
    expect((await vault("DELETE", `${MOUNT}/revocation/${id}`, { token: deleter })).status).toBe(204);
    expect((await vault("GET", `${MOUNT}/revocation/${id}`)).status).toBe(404);
    expect((await krl()).status).toBe(200);
    expect((await vault("POST", `${MOUNT}/krl`, { token: null })).status).toBe(403);
  });

  it("revokes by serial, key id and public key; reads, lists and deletes; the KRL follows every change", async () => {
    const name = await role({ store_certificates: true, ttl: "2h" });
    const signed = await sign(name, {});
    const cert = decodeSignedKey(signed.json.data.signed_key);

    const bySerial = await revoke({ serial_number: signed.json.data.serial_number });
    expect(bySerial.status, bySerial.text).toBe(200);
    const serialRead = await vault("GET", `${MOUNT}/revocation/${bySerial.json.data.revocation_id}`);
    expect(serialRead.json.data).toMatchObject({
      kind: "serial",
      issuer_id: defaultIssuerId,
      serial_number: cert.serial.toString(16).padStart(16, "0"),
      // S23: a recorded certificate's revocation lasts until it expires.
      expires_at: new Date(Number(cert.validBefore) * 1000).toISOString(),
    });

    const byKeyIdOne = await revoke({
      key_id: "deploy bot ✓",
      issuer_ref: "second",
      expires_at: "2099-01-02T03:04:05Z",
    });
    expect(byKeyIdOne.status).toBe(200);
    const keyIdRead = await vault("GET", `${MOUNT}/revocation/${byKeyIdOne.json.data.revocation_id}`);
    expect(keyIdRead.json.data).toMatchObject({
      kind: "key_id",
      issuer_id: secondIssuerId,
      key_id: "deploy bot ✓",
      expires_at: "2099-01-02T03:04:05.000Z",
    });
    const byKeyIdAll = await revoke({ key_id: "everywhere" });
    const byKey = await revoke({ public_key: SUBJECT_KEYS.ecdsa256 });
    expect(byKey.status).toBe(200);
    const keyRead = await vault("GET", `${MOUNT}/revocation/${byKey.json.data.revocation_id}`);
    expect(keyRead.json.data.public_key).toBe(SUBJECT_KEYS.ecdsa256.trim().split(" ").slice(0, 2).join(" "));
    expect(keyRead.json.data.public_key_fingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);

    const list = await vault("GET", `${MOUNT}/revocations?list=true`);
    for (const r of [bySerial, byKeyIdOne, byKeyIdAll, byKey])
      expect(list.json.data.keys).toContain(r.json.data.revocation_id);

    // The KRL: everything live, one section per CA key, ETag/304/Cache-Control.
    const res = await fetchKrlRaw();
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("application/octet-stream");
    expect(res.headers.get("Cache-Control")).toBe("public, max-age=60");
    const bytes = new Uint8Array(await res.arrayBuffer());
    const version = krlVersionOf(bytes);
    expect(res.headers.get("ETag")).toBe(`"krl-${version}"`);
    const liveRows = await env.DB.prepare(
      "SELECT * FROM ssh_revocations WHERE mount = ? AND (expires_at IS NULL OR expires_at > ?)",
    )
      .bind(MOUNT, Math.floor(Date.now() / 1000))
      .all<Record<string, string | null>>();
    const rows = liveRows.results;
    const keyIdsFor = (issuer: string) =>
      rows.filter((r) => r.kind === "key_id" && (r.issuer_id === null || r.issuer_id === issuer)).map((r) => r.key_id!);
    const serialsFor = (issuer: string) =>
      rows
        .filter((r) => r.kind === "serial" && r.issuer_id === issuer)
        .map((r) => ({ lo: BigInt(`0x${r.serial}`), hi: BigInt(`0x${r.serial}`) }));
    const expected = encodeKrl({
      krlVersion: version,
      generatedDate: generatedDateOf(bytes),
      certificates: [
        {
          caKey: blobOf(CA_KEYS.ed25519.publicKey),
          serials: serialsFor(defaultIssuerId),
          keyIds: keyIdsFor(defaultIssuerId),
        },
        {
          caKey: blobOf(CA_KEYS.ecdsa256.publicKey),
          serials: serialsFor(secondIssuerId),
          keyIds: keyIdsFor(secondIssuerId),
        },
      ],
      sha256Fingerprints: rows
        .filter((r) => r.kind === "public_key")
        .map((r) => fromBase64(r.public_key_fingerprint!.slice(7))),
    });
    expect(bytes).toEqual(expected);
    expect(keyIdsFor(secondIssuerId)).toContain("deploy bot ✓");
    expect(keyIdsFor(defaultIssuerId)).not.toContain("deploy bot ✓");
    expect(keyIdsFor(secondIssuerId)).toContain("everywhere");

    const again = await krl({ "If-None-Match": res.headers.get("ETag")! });
    expect(again.status).toBe(304);
    expect(again.headers.get("ETag")).toBe(res.headers.get("ETag"));

    // Deleting is a change: the version grows and the entry leaves the KRL.
    expect((await vault("DELETE", `${MOUNT}/revocation/${byKeyIdAll.json.data.revocation_id}`)).status).toBe(204);
    const after = new Uint8Array(await (await fetchKrlRaw()).arrayBuffer());
    expect(krlVersionOf(after)).toBe(version + 1n);
    expect(new TextDecoder().decode(after)).not.toContain("everywhere");
    expect((await krl({ "If-None-Match": res.headers.get("ETag")! })).status).toBe(200);
    // Deleting an unknown id is 204 and no change.
    expect((await vault("DELETE", `${MOUNT}/revocation/${crypto.randomUUID()}`)).status).toBe(204);
    expect(krlVersionOf(new Uint8Array(await (await fetchKrlRaw()).arrayBuffer()))).toBe(version + 1n);
  });

  it("serves the stored KRL from R2 (not rebuilt per read) and rebuilds when issuers change", async () => {
    await revoke({ key_id: "r2-check" });
    const res = await fetchKrlRaw();
    const version = krlVersionOf(new Uint8Array(await res.arrayBuffer()));
    const stored = await env.SSH_KRLS.get(`ssh-krl/${MOUNT}/${version}`);
    expect(stored).not.toBeNull();
    // Replace the stored object: once the per-isolate cache (1 s) lapses, reads serve it.
    const marker = encodeKrl({ krlVersion: version, generatedDate: 7n, comment: "served from R2" });
    await env.SSH_KRLS.put(`ssh-krl/${MOUNT}/${version}`, marker);
    await new Promise((r) => setTimeout(r, 1100));
    expect(new Uint8Array(await (await fetchKrlRaw()).arrayBuffer())).toEqual(marker);

    // A new issuer: a key id revoked mount-wide reaches it at the next read.
    const third = await vault("POST", `${MOUNT}/issuers/import/third`, {
      body: { private_key: CA_KEYS.ecdsa384.privateKey, public_key: CA_KEYS.ecdsa384.publicKey },
    });
    expect(third.status, third.text).toBe(200);
    await new Promise((r) => setTimeout(r, 1100));
    const rebuilt = new Uint8Array(await (await fetchKrlRaw()).arrayBuffer());
    expect(krlVersionOf(rebuilt)).toBe(version + 1n);
    const ca384 = blobOf(CA_KEYS.ecdsa384.publicKey);
    expect(contains(rebuilt, ca384)).toBe(true);

    // A deleted issuer's section leaves the KRL.
    expect((await vault("DELETE", `${MOUNT}/issuer/third`)).status).toBe(204);
    await new Promise((r) => setTimeout(r, 1100));
    const withoutThird = new Uint8Array(await (await fetchKrlRaw()).arrayBuffer());
    expect(krlVersionOf(withoutThird)).toBe(version + 2n);
    expect(contains(withoutThird, ca384)).toBe(false);
  });

  it("the scheduled tidy drops expired revocations and bumps the KRL", async () => {
    const soon = new Date(Date.now() + 1500).toISOString();
    const made = await revoke({ key_id: "short-lived", expires_at: soon });
    expect(made.status).toBe(200);
    const v = krlVersionOf(new Uint8Array(await (await fetchKrlRaw()).arrayBuffer()));
    await new Promise((r) => setTimeout(r, 2100));
    await scheduledTidy(env);
    expect((await vault("GET", `${MOUNT}/revocation/${made.json.data.revocation_id}`)).status).toBe(404);
    const after = new Uint8Array(await (await fetchKrlRaw()).arrayBuffer());
    expect(krlVersionOf(after)).toBeGreaterThan(v);
    expect(new TextDecoder().decode(after)).not.toContain("short-lived");
  });

  it("a mount with no revocation answers the empty KRL, version 0", async () => {
    const res = await vault("GET", "ssh/krl", { token: null });
    expect(res.status).toBe(200);
    expect(res.headers.get("ETag")).toBe('"krl-0"');
  });
});
