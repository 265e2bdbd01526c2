/**
 * Certificate inventory (S22) through HTTP against the real D1 binding: what a storing role
 * records, listing and its filters, unique serials per issuer, and tidy/certs. Mount
 * `ssh-two` holds two issuers: `default` (Ed25519, through config/ca) and `second`
 * (ECDSA-256, through issuers/import). Revocation and the KRL: revocations-and-krl.test.ts.
 */

import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { createDb } from "../../../../src/db/client";
import worker from "../../../../src/index";
import { recordCertificate } from "../../../../src/ssh/revocation/inventory-routes";
import type { VaultRequest } from "../../../../src/ssh/router";
import { importRevocationIssuers, MOUNT, role, sign } from "../../../helpers/ssh-revocation";
import { tokenWithPolicy, vault } from "../../../helpers/vault";
import { blobOf, decodeSignedKey, SUBJECT_KEYS } from "../ca-fixtures";

let defaultIssuerId: string;
let secondIssuerId: string;

beforeAll(async () => {
  ({ defaultIssuerId, secondIssuerId } = await importRevocationIssuers());
});

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
    const res = await sign(
      name,
      { valid_principals: "alice,ops", ttl: "1h" },
      { token, headers: { "CF-Connecting-IP": "203.0.113.7" } },
    );
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
    const row = await env.DB.prepare("SELECT * FROM ssh_certificates WHERE serial = ?")
      .bind(serial)
      .first<Record<string, unknown>>();
    expect(row).not.toBeNull();
    expect(JSON.stringify(row)).not.toContain("PRIVATE");

    // issue: the generated private key is answered, never recorded.
    const issued = await vault("POST", `${MOUNT}/issue/${name}`, {
      body: { key_type: "ed25519", valid_principals: "bob" },
    });
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
      const r = await vault("POST", `${MOUNT}/roles/${name}`, {
        body: {
          key_type: "ca",
          allow_user_certificates: true,
          allowed_users: "*",
          allow_user_key_ids: true,
          store_certificates: true,
        },
      });
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
    expect(
      (await vault("POST", `${MOUNT}/tidy/certs`, { body: { safety_buffer: "1s" } })).json.data.certificates_removed,
    ).toBeGreaterThanOrEqual(1);
  });
});
