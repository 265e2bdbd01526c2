/**
 * Certificate inventory (S22), revocation (S23) and the mount's KRL, through HTTP against
 * the real D1 and R2 bindings. Mount `ssh-two` holds two issuers: `default` (Ed25519,
 * through config/ca) and `second` (ECDSA-256, stored through the issuers repo). What
 * OpenSSH makes of the KRL is proven in test/interop (encoder) and by the sshd end-to-end
 * test (test/interop/ssh/krl-sshd.test.ts).
 */
import { env } from "cloudflare:workers";
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { beforeAll, describe, expect, it, vi } from "vitest";
import worker from "../../../src/index";
import { createDb } from "../../../src/db/client";
import { fromBase64 } from "../../../src/lib/bytes";
import { encodeKrl, krlVersionOf } from "../../../src/lib/sshwire/krl";
import { scheduledTidy } from "../../../src/ssh/revocation/routes";
import { recordCertificate } from "../../../src/ssh/revocation/inventory";
import type { VaultRequest } from "../../../src/ssh/router";
import { tokenWithPolicy, uniqueName, vault } from "../../helpers/vault";
import { blobOf, CA_KEYS, decodeSignedKey, SUBJECT_KEYS } from "./ca-fixtures";

const MOUNT = "ssh-two";
let defaultIssuerId: string;
let secondIssuerId: string;

beforeAll(async () => {
  const ca = await vault("POST", `${MOUNT}/config/ca`, { body: { private_key: CA_KEYS.ed25519.privateKey, public_key: CA_KEYS.ed25519.publicKey } });
  if (ca.status !== 204) throw new Error(`CA import failed: ${ca.status} ${ca.text}`);
  defaultIssuerId = (await vault("GET", `${MOUNT}/config/issuers`)).json.data.default;
  const second = await vault("POST", `${MOUNT}/issuers/import/second`, { body: { private_key: CA_KEYS.ecdsa256.privateKey, public_key: CA_KEYS.ecdsa256.publicKey } });
  if (second.status !== 200) throw new Error(`issuer import failed: ${second.status} ${second.text}`);
  secondIssuerId = second.json.data.issuer_id;
});

async function role(body: Record<string, unknown>): Promise<string> {
  const name = uniqueName("role");
  const res = await vault("POST", `${MOUNT}/roles/${name}`, { body: { key_type: "ca", allow_user_certificates: true, allowed_users: "*", default_user: "ubuntu", ...body } });
  if (res.status !== 204) throw new Error(`role write failed: ${res.status} ${res.text}`);
  return name;
}

async function sign(name: string, body: Record<string, unknown>, call: { token?: string; headers?: Record<string, string> } = {}) {
  const res = await vault("POST", `${MOUNT}/sign/${name}`, { body: { public_key: SUBJECT_KEYS.ed25519, ...body }, ...call });
  expect(res.status, res.text).toBe(200);
  return res;
}

async function krl(headers: Record<string, string> = {}) {
  return vault("GET", `${MOUNT}/krl`, { token: null, headers });
}

/** The generated_date of a KRL (PROTOCOL.krl §1). */
function generatedDateOf(bytes: Uint8Array): bigint {
  return new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(20);
}

/** The KRL's raw bytes (the helper decodes bodies as text). */
async function fetchKrlRaw(): Promise<Response> {
  const { handleFetch } = await import("../../../src/index");
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

describe("S22 inventory", () => {
  it("a role without store_certificates records nothing", async () => {
    const name = await role({});
    await sign(name, {});
    const list = await vault("GET", `${MOUNT}/certs?list=true&role=${name}`);
    expect(list.status).toBe(404);
  });

  it("records every field of a certificate signed through a storing role, never a private key", async () => {
    const name = await role({ store_certificates: true, key_id_format: "kid-{{role_name}}" });
    const token = await tokenWithPolicy({ [`${MOUNT}/sign/*`]: ["create", "update"] }, { display_name: "alice" });
    const res = await sign(name, { valid_principals: "alice,ops", ttl: "1h" }, { token, headers: { "CF-Connecting-IP": "203.0.113.7" } });
    const cert = decodeSignedKey(res.json.data.signed_key);
    const serial = cert.serial.toString(16).padStart(16, "0");

    const read = await vault("GET", `${MOUNT}/cert/${res.json.data.serial_number}`);
    expect(read.status, read.text).toBe(200);
    expect(read.json.data).toMatchObject({
      serial_number: serial,
      issuer_id: defaultIssuerId,
      role: name,
      cert_type: "user",
      key_id: `kid-${name}`,
      valid_principals: ["alice", "ops"],
      valid_after: new Date(Number(cert.validAfter) * 1000).toISOString(),
      valid_before: new Date(Number(cert.validBefore) * 1000).toISOString(),
      requester: { display_name: "token-alice", entity_id: "", client_address: "203.0.113.7" },
    });
    expect(read.json.data.requester.accessor).toMatch(/\S/);
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", blobOf(SUBJECT_KEYS.ed25519)));
    const expected = `SHA256:${btoa(String.fromCharCode(...digest)).replace(/=+$/, "")}`;
    expect(read.json.data.public_key_fingerprint).toBe(expected);
    const row = await env.DB.prepare("SELECT * FROM ssh_certificates WHERE serial = ?").bind(serial).first<Record<string, unknown>>();
    expect(row).not.toBeNull();
    expect(JSON.stringify(row)).not.toContain("PRIVATE");

    // issue: the generated private key is answered, never recorded.
    const issued = await vault("POST", `${MOUNT}/issue/${name}`, { body: { key_type: "ed25519", valid_principals: "bob" } });
    expect(issued.status, issued.text).toBe(200);
    const issuedRow = await vault("GET", `${MOUNT}/cert/${issued.json.data.serial_number}`);
    expect(issuedRow.status).toBe(200);
    expect(issuedRow.text).not.toContain("PRIVATE KEY");
    expect(issuedRow.json.data.valid_principals).toEqual(["bob"]);
  });

  it("lists serials in order with after/limit, and filters by role, key_id and principal", async () => {
    const a = await role({ store_certificates: true });
    const b = await role({ store_certificates: true });
    const serials: string[] = [];
    for (const [name, principal, keyId] of [
      [a, "p1", "k1"],
      [a, "p2", "k2"],
      [a, "p1", "k2"],
      [b, "p1", "k1"],
    ] as const) {
      const r = await vault("POST", `${MOUNT}/roles/${name}`, { body: { key_type: "ca", allow_user_certificates: true, allowed_users: "*", allow_user_key_ids: true, store_certificates: true } });
      expect(r.status).toBe(204);
      const res = await sign(name, { valid_principals: principal, key_id: keyId });
      serials.push(res.json.data.serial_number.padStart(16, "0"));
    }
    const ofA = await vault("GET", `${MOUNT}/certs?list=true&role=${a}`);
    expect(ofA.json.data.keys).toEqual(serials.slice(0, 3).sort());
    expect(ofA.json.data.key_info[serials[0]!]).toMatchObject({ role: a, issuer_id: defaultIssuerId });
    const page1 = await vault("GET", `${MOUNT}/certs?list=true&role=${a}&limit=2`);
    expect(page1.json.data.keys).toEqual(serials.slice(0, 3).sort().slice(0, 2));
    const page2 = await vault("GET", `${MOUNT}/certs?list=true&role=${a}&limit=2&after=${page1.json.data.keys[1]}`);
    expect(page2.json.data.keys).toEqual(serials.slice(0, 3).sort().slice(2));
    const p1OfA = await vault("GET", `${MOUNT}/certs?list=true&role=${a}&principal=p1`);
    expect(p1OfA.json.data.keys).toEqual([serials[0], serials[2]].sort());
    const k2 = await vault("GET", `${MOUNT}/certs?list=true&role=${a}&key_id=k2`);
    expect(k2.json.data.keys).toEqual([serials[1], serials[2]].sort());
    const none = await vault("GET", `${MOUNT}/certs?list=true&role=${b}&principal=p2`);
    expect(none.status).toBe(404);
    expect((await vault("GET", `${MOUNT}/certs?list=true&limit=x`)).status).toBe(400);
  });

  it("serials are unique per issuer: the same serial twice for one issuer is refused by D1", async () => {
    const insert = (issuer: string) =>
      env.DB.prepare(
        "INSERT INTO ssh_certificates (mount, issuer_id, serial, role, cert_type, key_id, principals, valid_after, valid_before, public_key_fingerprint, requester_display_name, requester_accessor, created_at) VALUES (?, ?, '00000000000000aa', 'r', 'user', 'k', '[]', 0, 1, 'SHA256:x', 'root', 'root', 0)",
      )
        .bind(MOUNT, issuer)
        .run();
    await insert(defaultIssuerId);
    await insert(secondIssuerId);
    await expect(insert(defaultIssuerId)).rejects.toThrow(/UNIQUE|PRIMARY/i);
    // The same serial under two issuers: cert/:serial needs issuer_ref.
    expect((await vault("GET", `${MOUNT}/cert/aa`)).status).toBe(400);
    const picked = await vault("GET", `${MOUNT}/cert/aa?issuer_ref=second`);
    expect(picked.status).toBe(200);
    expect(picked.json.data.issuer_id).toBe(secondIssuerId);
    const unknown = await vault("GET", `${MOUNT}/cert/aa?issuer_ref=nope`);
    expect(unknown.status).toBe(400);
    expect(unknown.json.errors).toEqual(["unable to find issuer for reference: nope"]);
    expect((await vault("GET", `${MOUNT}/cert/00000000000000ab`)).status).toBe(404);
  });

  it("recordCertificate refuses a serial its issuer already recorded (sign then draws a new one)", async () => {
    const req = { db: createDb(env.DB), token: null, headers: new Headers() } as unknown as VaultRequest;
    const cert = {
      mount: MOUNT,
      issuerId: defaultIssuerId,
      serial: 0xfeedn,
      role: "direct",
      certType: 1 as const,
      keyId: "k",
      principals: ["p"],
      validAfter: 0n,
      validBefore: 10n,
      subjectKeyBlob: blobOf(SUBJECT_KEYS.ed25519),
    };
    expect(await recordCertificate(req, cert)).toBe(true);
    expect(await recordCertificate(req, cert)).toBe(false);
    expect(await recordCertificate(req, { ...cert, issuerId: secondIssuerId })).toBe(true);
  });

  it("tidy/certs removes certificates expired for longer than safety_buffer; the scheduled tidy too", async () => {
    const now = Math.floor(Date.now() / 1000);
    const put = (serial: string, validBefore: number) =>
      env.DB.prepare(
        "INSERT INTO ssh_certificates (mount, issuer_id, serial, role, cert_type, key_id, principals, valid_after, valid_before, public_key_fingerprint, requester_display_name, requester_accessor, created_at) VALUES (?, ?, ?, 'tidy-role', 'user', 'k', '[]', 0, ?, 'SHA256:x', 'root', 'root', 0)",
      )
        .bind(MOUNT, defaultIssuerId, serial, validBefore)
        .run();
    await put("0000000000000b01", now - 100 * 3600);
    await put("0000000000000b02", now - 10);
    await put("0000000000000b03", now + 3600);
    await put("0000000000000b04", now - 80 * 3600);
    expect((await vault("POST", `${MOUNT}/tidy/certs`, { body: { safety_buffer: "0s" } })).status).toBe(400);
    expect((await vault("POST", `${MOUNT}/tidy/certs`, { body: { safety_buffer: "soon" } })).status).toBe(400);
    const tidy = await vault("POST", `${MOUNT}/tidy/certs`, { body: { safety_buffer: "90h" } });
    expect(tidy.status, tidy.text).toBe(200);
    // b01, and the two rows each of the uniqueness and recordCertificate tests (valid before 1970).
    expect(tidy.json.data.certificates_removed).toBe(5);
    let left = await vault("GET", `${MOUNT}/certs?list=true&role=tidy-role`);
    expect(left.json.data.keys).toEqual(["0000000000000b02", "0000000000000b03", "0000000000000b04"]);
    // The cron trigger (the Worker's scheduled handler): a 72h buffer.
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ cron: "17 * * * *" }), env, ctx);
    await waitOnExecutionContext(ctx);
    left = await vault("GET", `${MOUNT}/certs?list=true&role=tidy-role`);
    expect(left.json.data.keys).toEqual(["0000000000000b02", "0000000000000b03"]);
    expect((await vault("POST", `${MOUNT}/tidy/certs`, { body: { safety_buffer: "1s" } })).json.data.certificates_removed).toBeGreaterThanOrEqual(1);
  });
});

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
      [{ public_key: SUBJECT_KEYS.ed25519, issuer_ref: "default" }, "issuer_ref applies to serial_number and key_id only"],
      [{ key_id: "x", expires_at: "tomorrow" }, /expires_at must be an RFC 3339 time/],
      [{ key_id: "x", expires_at: "2020-01-01T00:00:00Z" }, "expires_at is in the past: the revocation would never be in the KRL"],
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
    const reader = await tokenWithPolicy({ [`${MOUNT}/revoke`]: ["read"], [`${MOUNT}/revocation/*`]: ["read", "update"] });
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

    const byKeyIdOne = await revoke({ key_id: "deploy bot ✓", issuer_ref: "second", expires_at: "2099-01-02T03:04:05Z" });
    expect(byKeyIdOne.status).toBe(200);
    const keyIdRead = await vault("GET", `${MOUNT}/revocation/${byKeyIdOne.json.data.revocation_id}`);
    expect(keyIdRead.json.data).toMatchObject({ kind: "key_id", issuer_id: secondIssuerId, key_id: "deploy bot ✓", expires_at: "2099-01-02T03:04:05.000Z" });
    const byKeyIdAll = await revoke({ key_id: "everywhere" });
    const byKey = await revoke({ public_key: SUBJECT_KEYS.ecdsa256 });
    expect(byKey.status).toBe(200);
    const keyRead = await vault("GET", `${MOUNT}/revocation/${byKey.json.data.revocation_id}`);
    expect(keyRead.json.data.public_key).toBe(SUBJECT_KEYS.ecdsa256.trim().split(" ").slice(0, 2).join(" "));
    expect(keyRead.json.data.public_key_fingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);

    const list = await vault("GET", `${MOUNT}/revocations?list=true`);
    for (const r of [bySerial, byKeyIdOne, byKeyIdAll, byKey]) expect(list.json.data.keys).toContain(r.json.data.revocation_id);

    // The KRL: everything live, one section per CA key, ETag/304/Cache-Control.
    const res = await fetchKrlRaw();
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("application/octet-stream");
    expect(res.headers.get("Cache-Control")).toBe("public, max-age=60");
    const bytes = new Uint8Array(await res.arrayBuffer());
    const version = krlVersionOf(bytes);
    expect(res.headers.get("ETag")).toBe(`"krl-${version}"`);
    const liveRows = await env.DB.prepare("SELECT * FROM ssh_revocations WHERE mount = ? AND (expires_at IS NULL OR expires_at > ?)")
      .bind(MOUNT, Math.floor(Date.now() / 1000))
      .all<Record<string, string | null>>();
    const rows = liveRows.results;
    const keyIdsFor = (issuer: string) => rows.filter((r) => r.kind === "key_id" && (r.issuer_id === null || r.issuer_id === issuer)).map((r) => r.key_id!);
    const serialsFor = (issuer: string) => rows.filter((r) => r.kind === "serial" && r.issuer_id === issuer).map((r) => ({ lo: BigInt(`0x${r.serial}`), hi: BigInt(`0x${r.serial}`) }));
    const expected = encodeKrl({
      krlVersion: version,
      generatedDate: generatedDateOf(bytes),
      certificates: [
        { caKey: blobOf(CA_KEYS.ed25519.publicKey), serials: serialsFor(defaultIssuerId), keyIds: keyIdsFor(defaultIssuerId) },
        { caKey: blobOf(CA_KEYS.ecdsa256.publicKey), serials: serialsFor(secondIssuerId), keyIds: keyIdsFor(secondIssuerId) },
      ],
      sha256Fingerprints: rows.filter((r) => r.kind === "public_key").map((r) => fromBase64(r.public_key_fingerprint!.slice(7))),
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
    const third = await vault("POST", `${MOUNT}/issuers/import/third`, { body: { private_key: CA_KEYS.ecdsa384.privateKey, public_key: CA_KEYS.ecdsa384.publicKey } });
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

