/**
 * `POST sign/:name`: the signing itself — the cases of Vault's backend_test.go,
 * 39 (role part), 42, 43, the subject keys S17 refuses, request coercion, capabilities and
 * the per-isolate context cache — adapted where decisions.md differs (S4, S11, S17, S18).
 * Principals are in principals.test.ts, options, extensions and key ids in
 * options.test.ts. Mount `ssh` has an RSA-2048 CA and `ssh-two` an Ed25519 CA for the
 * whole file.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { toBase64 } from "../../../../src/lib/bytes";
import { verifyCertificate } from "../../../../src/lib/crypto/ssh-keys-and-certificates";
import { importSignCas, role, sign, USER_ROLE } from "../../../helpers/ssh-sign";
import { tokenWithPolicy, vault } from "../../../helpers/vault";
import { blobOf, decodeSignedKey, SUBJECT_KEYS } from "../ca-fixtures";

beforeAll(importSignCas);

describe("allowed_user_key_lengths (TestBackend_AllowedUserKeyLengths)", () => {
  const cases: [string, Record<string, unknown>, keyof typeof SUBJECT_KEYS, string | null][] = [
    ["weakkey", { rsa: 4096 }, "rsa2048", "key is of an invalid size: 2048"],
    ["stdkey", { rsa: 2048 }, "rsa2048", null],
    ["stdkey", { rsa: 2048 }, "rsa4096", "key is of an invalid size: 4096"],
    ["multikey", { rsa: [2048, 4096] }, "rsa2048", null],
    ["multikey", { rsa: [2048, 4096] }, "rsa4096", null],
    ["multikey", { rsa: [2048, 4096] }, "rsa3072", "key is of an invalid size: 3072"],
    ["multikey", { rsa: [2048, 4096] }, "ecdsa256", "key of type ecdsa is not allowed"],
    ["ectypes", { ec: [256], "ecdsa-sha2-nistp521": 0 }, "ecdsa256", null],
    ["ectypes", { ec: [256], "ecdsa-sha2-nistp521": 0 }, "ecdsa521", null],
    ["ectypes", { ec: [256], "ecdsa-sha2-nistp521": 0 }, "ecdsa384", "key is of an invalid size: 384"],
    ["ectypes", { ec: [256], "ecdsa-sha2-nistp521": 0 }, "rsa3072", "key of type rsa is not allowed"],
    ["ssh-rsa name", { "ssh-rsa": "2048,3072" }, "rsa3072", null],
    ["ed25519", { ed25519: 0 }, "ed25519", null],
    ["ssh-ed25519 empty list", { "ssh-ed25519": [] }, "ed25519", "key is of an invalid size: 0"],
    [
      "sk keys",
      { rsa: 2048 },
      "skEcdsa",
      "pubkey not suitable for crypto (expected ssh.CryptoPublicKey but found *ssh.skECDSAPublicKey)",
    ],
  ];
  it.each(cases)("%s %j with %s", async (_label, lengths, key, error) => {
    const name = await role({ ...USER_ROLE, allowed_user_key_lengths: lengths });
    const res = await sign(name, { public_key: SUBJECT_KEYS[key], valid_principals: "u" });
    if (error === null) {
      expect(res.status, res.text).toBe(200);
    } else {
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ errors: [`public_key failed to meet the key requirements: ${error}`] });
    }
  });
});

describe("not_before_duration (TestSSHBackend_ValidateNotBeforeDuration)", () => {
  it.each([
    ["300s", 2 * 3600 + 300],
    ["2h", 4 * 3600],
    ["30s", 2 * 3600 + 30],
    [0, 2 * 3600],
  ] as const)("not_before_duration %s → window %i s", async (nbd, window) => {
    const name = await role({
      key_type: "ca",
      allow_host_certificates: true,
      allowed_domains: "example.com",
      allow_subdomains: true,
      not_before_duration: nbd,
    });
    const before = Math.floor(Date.now() / 1000);
    const res = await sign(name, {
      public_key: SUBJECT_KEYS.ed25519,
      ttl: "2h",
      cert_type: "host",
      valid_principals: "a.example.com",
    });
    const cert = decodeSignedKey(res.json.data.signed_key);
    expect(cert.validBefore - cert.validAfter).toBe(BigInt(window));
    expect(Number(cert.validBefore) - before).toBeGreaterThanOrEqual(7200);
    expect(Number(cert.validBefore) - before).toBeLessThanOrEqual(7202);
  });
});

describe("TTL against the role's max_ttl", () => {
  it("a caller's ttl above max_ttl is 400; the role ttl is used when none is sent", async () => {
    const name = await role({ ...USER_ROLE, max_ttl: "1h", ttl: "30m" });
    const tooLong = await sign(name, { public_key: SUBJECT_KEYS.ed25519, valid_principals: "a", ttl: "2h" });
    expect(tooLong.status).toBe(400);
    expect(tooLong.json).toEqual({ errors: ["ttl is larger than maximum allowed 3600"] });
    const byRole = await sign(name, { public_key: SUBJECT_KEYS.ed25519, valid_principals: "a" });
    expect(byRole.json.lease_duration).toBe(1800);
    const exact = await sign(name, { public_key: SUBJECT_KEYS.ed25519, valid_principals: "a", ttl: 3600 });
    expect(exact.json.lease_duration).toBe(3600);
  });

  it("an explicit ttl 0 means the mount default, which a 1h max_ttl refuses (Vault's quirk)", async () => {
    const name = await role({ ...USER_ROLE, max_ttl: "1h", ttl: "30m" });
    const res = await sign(name, { public_key: SUBJECT_KEYS.ed25519, valid_principals: "a", ttl: 0 });
    expect(res.json).toEqual({ errors: ["ttl is larger than maximum allowed 3600"] });
  });

  it("without role TTLs the certificate lasts the mount default (768h)", async () => {
    const name = await role(USER_ROLE);
    const res = await sign(name, { public_key: SUBJECT_KEYS.ed25519, valid_principals: "a" });
    expect(res.json.lease_duration).toBe(768 * 3600);
    const huge = await sign(name, { public_key: SUBJECT_KEYS.ed25519, valid_principals: "a", ttl: "100000h" });
    expect(huge.json).toEqual({ errors: [`ttl is larger than maximum allowed ${768 * 3600}`] });
  });
});

describe("response shape (S18 lease)", () => {
  it("answers serial, certificate and a non-renewable lease as long as the certificate", async () => {
    const name = await role({ ...USER_ROLE, ttl: "1h" });
    const res = await sign(name, { public_key: SUBJECT_KEYS.rsa2048, valid_principals: "a" });
    expect(res.status).toBe(200);
    // S20: OpenBao's issuer_id (the mount's default issuer) comes with the certificate.
    expect(Object.keys(res.json.data).sort()).toEqual(["issuer_id", "serial_number", "signed_key"]);
    expect(res.json.data.issuer_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const serial = res.json.data.serial_number as string;
    expect(serial).toMatch(/^[0-9a-f]{1,16}$/);
    expect(serial).not.toMatch(/^0[0-9a-f]/);
    const cert = decodeSignedKey(res.json.data.signed_key);
    expect(cert.serial.toString(16)).toBe(serial);
    expect(res.json.data.signed_key.startsWith("ssh-rsa-cert-v01@openssh.com ")).toBe(true);
    expect(res.json.data.signed_key.endsWith("\n")).toBe(true);
    expect(res.json.data.signed_key.split(" ")).toHaveLength(2);
    // S18 replaces Vault's empty lease.
    expect(res.json.lease_id).toBe(`ssh/sign/${name}/${serial}`);
    expect(res.json.renewable).toBe(false);
    expect(res.json.lease_duration).toBe(3600);
    expect(res.json.warnings).toBeNull();
    // Revoking such a lease is a no-op (S18).
    expect((await vault("PUT", "sys/leases/revoke", { body: { lease_id: res.json.lease_id } })).status).toBe(204);
  });

  it("serials are random", async () => {
    const name = await role(USER_ROLE);
    const serials = new Set<string>();
    for (let i = 0; i < 5; i++) {
      serials.add(
        (await sign(name, { public_key: SUBJECT_KEYS.ed25519, valid_principals: "a" })).json.data.serial_number,
      );
    }
    expect(serials.size).toBe(5);
  });

  it("the certificate type name follows the subject key", async () => {
    const name = await role(USER_ROLE);
    for (const [key, type] of [
      ["ecdsa384", "ecdsa-sha2-nistp384-cert-v01@openssh.com"],
      ["ed25519", "ssh-ed25519-cert-v01@openssh.com"],
      ["skEcdsa", "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com"],
    ] as const) {
      const res = await sign(name, { public_key: SUBJECT_KEYS[key], valid_principals: "a" });
      expect(res.json.data.signed_key.startsWith(`${type} `), key).toBe(true);
    }
  });
});

describe("signature algorithms (TestSSHBackend_CA, S11)", () => {
  it.each([
    ["", "rsa-sha2-256"],
    ["default", "rsa-sha2-256"],
    ["rsa-sha2-256", "rsa-sha2-256"],
    ["rsa-sha2-512", "rsa-sha2-512"],
    ["ssh-rsa", "ssh-rsa"],
  ])("RSA CA with algorithm_signer %j signs with %s", async (signer, algorithm) => {
    const name = await role({ ...USER_ROLE, algorithm_signer: signer });
    const res = await sign(name, { public_key: SUBJECT_KEYS.ed25519, valid_principals: "a" });
    expect(res.status).toBe(200);
    const cert = decodeSignedKey(res.json.data.signed_key);
    expect(cert.signature.algorithm).toBe(algorithm);
    expect(await verifyCertificate(cert)).toBe(true);
    if (algorithm === "ssh-rsa") {
      expect(res.json.warnings).toHaveLength(1);
      expect(res.json.warnings[0]).toContain("OpenSSH 8.8");
    } else {
      expect(res.json.warnings).toBeNull();
    }
  });

  it.each(["", "default"])("Ed25519 CA with algorithm_signer %j signs with ssh-ed25519", async (signer) => {
    const name = await role({ ...USER_ROLE, algorithm_signer: signer }, "ssh-two");
    const res = await sign(name, { public_key: SUBJECT_KEYS.rsa2048, valid_principals: "a" }, "ssh-two");
    const cert = decodeSignedKey(res.json.data.signed_key);
    expect(cert.signature.algorithm).toBe("ssh-ed25519");
    expect(await verifyCertificate(cert)).toBe(true);
  });

  it.each(["ssh-rsa", "rsa-sha2-256", "rsa-sha2-512"])("an Ed25519 CA with %s is a 400 (S4)", async (signer) => {
    const name = await role({ ...USER_ROLE, algorithm_signer: signer }, "ssh-two");
    const res = await sign(name, { public_key: SUBJECT_KEYS.ed25519, valid_principals: "a" }, "ssh-two");
    expect(res.status).toBe(400);
    expect(res.json.errors).toHaveLength(1);
    expect(res.json.errors[0]).toMatch(/^failed to generate signed SSH key: sign error: .*ssh-ed25519/);
  });
});

describe("subject keys decision S17 refuses, and other bad keys", () => {
  it("ssh-dss keys", async () => {
    const name = await role(USER_ROLE);
    const res = await sign(name, { public_key: SUBJECT_KEYS.dsa1024, valid_principals: "a" });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({
      errors: ["public_key failed to meet the key requirements: ssh-dss keys are not supported"],
    });
  });

  it("certificates sent as public_key", async () => {
    const name = await role(USER_ROLE);
    const res = await sign(name, { public_key: SUBJECT_KEYS.certificate, valid_principals: "a" });
    expect(res.json).toEqual({ errors: ["failed to parse public_key as SSH key: certificates cannot be signed"] });
  });

  it.each([
    ["garbage", "not a key"],
    ["bad base64", "ssh-ed25519 ***"],
    ["truncated blob", `ssh-ed25519 ${toBase64(blobOf(SUBJECT_KEYS.ed25519).slice(0, 20))}`],
    ["double space", SUBJECT_KEYS.ed25519.replace(" ", "  ")],
  ])("%s → failed to parse public_key as SSH key", async (_what, publicKey) => {
    const name = await role(USER_ROLE);
    const res = await sign(name, { public_key: publicKey, valid_principals: "a" });
    expect(res.status).toBe(400);
    expect(res.json.errors[0]).toMatch(/^failed to parse public_key as SSH key: /);
  });

  it("ignores a mismatching type label and a comment, as Vault does", async () => {
    const name = await role(USER_ROLE);
    const relabelled = `ssh-rsa ${SUBJECT_KEYS.ed25519.split(" ")[1]} some comment\n`;
    const res = await sign(name, { public_key: relabelled, valid_principals: "a" });
    expect(res.status).toBe(200);
    expect(decodeSignedKey(res.json.data.signed_key).publicKey.type).toBe("ssh-ed25519");
  });
});

describe("request coercion and warnings", () => {
  it("unknown fields are warned about on success", async () => {
    const name = await role(USER_ROLE);
    const res = await sign(name, { public_key: SUBJECT_KEYS.ed25519, valid_principals: "a", colour: "red", role: "x" });
    expect(res.status).toBe(200);
    expect(res.json.warnings).toEqual([
      "Endpoint ignored these unrecognized parameters: [colour]",
      "Endpoint replaced the value of these parameters with the values captured from the endpoint's path: [role]",
    ]);
  });

  it.each([
    ["ttl", { ttl: "soon" }],
    ["ttl", { ttl: -1 }],
    ["valid_principals", { valid_principals: ["a"] }],
    ["critical_options", { critical_options: "force-command" }],
    ["extensions", { extensions: 5 }],
    ["public_key", { public_key: { key: 1 } }],
  ])("a bad %s is a field validation 400", async (field, body) => {
    const name = await role(USER_ROLE);
    const res = await sign(name, { public_key: SUBJECT_KEYS.ed25519, valid_principals: "a", ...body });
    expect(res.status).toBe(400);
    expect(res.json.errors[0]).toMatch(
      new RegExp(`^Field validation failed: error converting input .* for field "${field}"`),
    );
  });
});

describe("capabilities (S6)", () => {
  it("create suffices, update alone is refused, neither is refused", async () => {
    const name = await role(USER_ROLE);
    const body = { public_key: SUBJECT_KEYS.ed25519, valid_principals: "a" };
    const create = await tokenWithPolicy({ [`ssh/sign/${name}`]: ["create"] });
    expect((await sign(name, body, "ssh", create)).status).toBe(200);
    const both = await tokenWithPolicy({ "ssh/sign/*": ["create", "update"] });
    expect((await sign(name, body, "ssh", both)).status).toBe(200);
    const update = await tokenWithPolicy({ "ssh/sign/*": ["update"] });
    expect((await sign(name, body, "ssh", update)).status).toBe(403);
    const read = await tokenWithPolicy({ "ssh/sign/*": ["read"] });
    expect((await sign(name, body, "ssh", read)).status).toBe(403);
    expect((await vault("POST", `ssh/sign/${name}`, { token: null, body })).status).toBe(403);
  });

  it("GET and DELETE on sign are 405", async () => {
    const name = await role(USER_ROLE);
    expect((await vault("GET", `ssh/sign/${name}`)).status).toBe(405);
    expect((await vault("DELETE", `ssh/sign/${name}`)).status).toBe(405);
  });
});

describe("the per-isolate sign context cache never hides this isolate's writes", () => {
  it("sees role replacements, patches and deletions at once", async () => {
    const name = await role({ key_type: "ca", allow_user_certificates: true, allowed_users: "a" });
    const body = { public_key: SUBJECT_KEYS.ed25519, valid_principals: "b" };
    expect((await sign(name, body)).status).toBe(400);
    await role({ key_type: "ca", allow_user_certificates: true, allowed_users: "a,b" }, "ssh", name);
    expect((await sign(name, body)).status).toBe(200);
    await vault("PATCH", `ssh/roles/${name}`, { body: { allowed_users: "a" } });
    expect((await sign(name, body)).json.errors).toEqual(["b is not a valid value for valid_principals"]);
    await vault("DELETE", `ssh/roles/${name}`);
    expect((await sign(name, body)).json.errors).toEqual([`Unknown role: ${name}`]);
    await role({ key_type: "ca", allow_user_certificates: true, allowed_users: "*" }, "ssh", name);
    expect((await sign(name, body)).status).toBe(200);
  });

  it("sees mount tunes at once", async () => {
    const name = await role(USER_ROLE, "ssh-two");
    const body = { public_key: SUBJECT_KEYS.ed25519, valid_principals: "a" };
    expect((await sign(name, body, "ssh-two")).json.lease_duration).toBe(768 * 3600);
    await vault("POST", "sys/mounts/ssh-two/tune", { body: { default_lease_ttl: "2h" } });
    expect((await sign(name, body, "ssh-two")).json.lease_duration).toBe(7200);
    await vault("POST", "sys/mounts/ssh-two/tune", { body: { default_lease_ttl: "768h" } });
  });
});
