/**
 * `POST issue/:name`: Vault's backend_test.go, adapted to decision
 * S10 (rsa default 2048; only 2048/3072/4096 and 256/384/521; 400 instead of 500) and S18
 * (lease). Mount `ssh` has an Ed25519 CA; `ssh-two` has none.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { importSigningKey, verifyCertificate } from "../../../../src/lib/crypto/ssh-keys-and-certificates";
import { encodePublicKey } from "../../../../src/lib/sshwire/public-key";
import { uniqueName, vault } from "../../../helpers/vault";
import { CA_KEYS, decodeSignedKey } from "../ca-fixtures";

beforeAll(async () => {
  const res = await vault("POST", "ssh/config/ca", {
    body: { private_key: CA_KEYS.ed25519.privateKey, public_key: CA_KEYS.ed25519.publicKey },
  });
  if (res.status !== 204) throw new Error(`CA import failed: ${res.status} ${res.text}`);
});

async function role(body: Record<string, unknown>, mount = "ssh"): Promise<string> {
  const name = uniqueName("iss");
  const res = await vault("POST", `${mount}/roles/${name}`, { body });
  if (res.status !== 204) throw new Error(`role write failed: ${res.status} ${res.text}`);
  return name;
}

async function issue(name: string, body: Record<string, unknown>, mount = "ssh") {
  return vault("POST", `${mount}/issue/${name}`, { body });
}

const USER_ROLE = { key_type: "ca", allow_user_certificates: true, allowed_users: "*" };

describe("TestSSHBackend_IssueSign", () => {
  it("an OTP role cannot issue", async () => {
    const name = await role({ key_type: "otp", default_user: "u", cidr_list: "10.0.0.0/8" });
    const res = await issue(name, { key_type: "rsa" });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ errors: ["role key type 'otp' not allowed to issue key pairs"] });
  });

  it("applies allowed_user_key_lengths to the generated key", async () => {
    const name = await role({
      ...USER_ROLE,
      allowed_user_key_lengths: { "ssh-rsa": [2048, 3072, 4096], "ecdsa-sha2-nistp521": 0, ed25519: 0 },
    });
    const ec = await issue(name, { key_type: "ec", key_bits: 256, valid_principals: "u" });
    expect(ec.status).toBe(400);
    expect(ec.json).toEqual({ errors: ["provided key_type value not in allowed_user_key_types"] });

    const odd = await issue(name, { key_type: "rsa", key_bits: 2560, valid_principals: "u" });
    expect(odd.json).toEqual({ errors: ["provided key_bits value not in list of role's allowed_user_key_types"] });

    const rsa = await issue(name, { key_type: "rsa", key_bits: 2048, valid_principals: "u" });
    expect(rsa.status).toBe(200);
    expect(rsa.json.data.private_key_type).toBe("rsa");
    expect(rsa.json.data.signed_key).not.toBe("");

    const ed = await issue(name, { key_type: "ed25519", key_bits: 0, valid_principals: "u" });
    expect(ed.status).toBe(200);
    expect(ed.json.data.private_key_type).toBe("ed25519");

    const p521 = await issue(name, { key_type: "ec", key_bits: 521, valid_principals: "u" });
    expect(p521.status).toBe(200);
    const unknown = await issue(name, { key_type: "foo", valid_principals: "u" });
    expect(unknown.json).toEqual({ errors: ["provided key_type value not in allowed_user_key_types"] });
  });

  it("principals follow S8 on issue too", async () => {
    const name = await role({
      key_type: "ca",
      allow_user_certificates: true,
      allowed_users: "alice",
      default_user: "alice",
    });
    const byDefault = await issue(name, { key_type: "ed25519" });
    expect(decodeSignedKey(byDefault.json.data.signed_key).principals).toEqual(["alice"]);
    const refused = await issue(name, { key_type: "ed25519", valid_principals: "bob" });
    expect(refused.json).toEqual({ errors: ["bob is not a valid value for valid_principals"] });
    const none = await role({ key_type: "ca", allow_user_certificates: true, allowed_users: "*" });
    expect((await issue(none, { key_type: "ed25519" })).json).toEqual({
      errors: ["empty valid principals not allowed by role"],
    });
  });
});

describe("unknown role", () => {
  it("→ 400 `unknown role: nope` (lowercase u)", async () => {
    const res = await issue("nope", {});
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ errors: ["unknown role: nope"] });
  });
});

describe("private key formats (S10)", () => {
  it.each([
    ["rsa", 0, "RSA PRIVATE KEY", "ssh-rsa", 2048],
    ["rsa", 3072, "RSA PRIVATE KEY", "ssh-rsa", 3072],
    ["ssh-rsa", 0, "RSA PRIVATE KEY", "ssh-rsa", 2048],
    ["ec", 0, "EC PRIVATE KEY", "ecdsa-sha2-nistp256", 256],
    ["ec", 384, "EC PRIVATE KEY", "ecdsa-sha2-nistp384", 384],
    ["ec", 521, "EC PRIVATE KEY", "ecdsa-sha2-nistp521", 521],
    ["ecdsa-sha2-nistp384", 0, "EC PRIVATE KEY", "ecdsa-sha2-nistp384", 384],
    ["ed25519", 0, "OPENSSH PRIVATE KEY", "ssh-ed25519", 256],
    ["ed25519", 4096, "OPENSSH PRIVATE KEY", "ssh-ed25519", 256],
    ["ssh-ed25519", 0, "OPENSSH PRIVATE KEY", "ssh-ed25519", 256],
  ] as const)("key_type %s key_bits %i → %s, %s of %i bits", async (keyType, keyBits, pem, sshType, bits) => {
    const name = await role({ ...USER_ROLE, ttl: "10m" });
    const res = await issue(name, { key_type: keyType, key_bits: keyBits, valid_principals: "u" });
    expect(res.status).toBe(200);
    const data = res.json.data;
    expect(Object.keys(data).sort()).toEqual([
      "issuer_id",
      "private_key",
      "private_key_type",
      "serial_number",
      "signed_key",
    ]);
    expect(data.private_key.startsWith(`-----BEGIN ${pem}-----\n`)).toBe(true);
    expect(data.private_key.endsWith(`-----END ${pem}-----\n`)).toBe(true);
    expect(data.private_key_type).toBe(keyType);
    const cert = decodeSignedKey(data.signed_key);
    expect(cert.publicKey.type).toBe(sshType);
    // The certificate certifies the returned private key's public half.
    const key = await importSigningKey(data.private_key);
    expect(key.bits).toBe(bits);
    expect(encodePublicKey(cert.publicKey)).toEqual(key.publicKeyBlob);
    expect(await verifyCertificate(cert)).toBe(true);
    expect(cert.signatureKey).toEqual((await importSigningKey(CA_KEYS.ed25519.privateKey)).publicKeyBlob);
    // S18.
    expect(res.json.lease_id).toBe(`ssh/issue/${name}/${data.serial_number}`);
    expect(res.json.renewable).toBe(false);
    expect(res.json.lease_duration).toBe(600);
    expect(data.serial_number).toBe(cert.serial.toString(16));
  });

  it("the default key type is rsa 2048", async () => {
    const name = await role(USER_ROLE);
    const res = await issue(name, { valid_principals: "u" });
    expect(res.json.data.private_key_type).toBe("rsa");
    expect((await importSigningKey(res.json.data.private_key)).bits).toBe(2048);
  });
});

describe("bad key types and sizes (S10: 400)", () => {
  it.each([
    [{ key_type: "foo" }, "unknown ssh key pair algorithm: foo"],
    [{ key_type: "RSA" }, "unknown ssh key pair algorithm: RSA"],
    [{ key_type: "dsa" }, "unknown ssh key pair algorithm: dsa"],
    [{ key_type: "rsa", key_bits: 1024 }, "refusing to generate weak rsa key: 1024 bits < 2048 bits"],
    [{ key_type: "rsa", key_bits: 2560 }, "invalid key_bits 2560 for key_type rsa: must be 2048, 3072 or 4096"],
    [{ key_type: "rsa", key_bits: 8192 }, "invalid key_bits 8192 for key_type rsa: must be 2048, 3072 or 4096"],
    [{ key_type: "ec", key_bits: 123 }, "unknown ECDSA key pair algorithm and bits: ec / 123"],
    [{ key_type: "ec", key_bits: 2048 }, "unknown ECDSA key pair algorithm and bits: ec / 2048"],
    [{ key_bits: "big" }, /^Field validation failed: .*"key_bits"/],
  ] as const)("%j → 400", async (body, message) => {
    const name = await role(USER_ROLE);
    const res = await issue(name, { ...body, valid_principals: "u" });
    expect(res.status).toBe(400);
    expect(res.json.errors).toHaveLength(1);
    if (typeof message === "string") expect(res.json.errors[0]).toBe(message);
    else expect(res.json.errors[0]).toMatch(message);
  });
});

describe("issue shares sign's checks, before any key is generated", () => {
  it("no CA → 400 `failed to read CA private key`", async () => {
    const name = await role(USER_ROLE, "ssh-two");
    const started = Date.now();
    const res = await issue(name, { key_type: "rsa", key_bits: 4096, valid_principals: "u" }, "ssh-two");
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ errors: ["failed to read CA private key"] });
    // Refused before a 4096-bit key was generated.
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("cert type, key ID, TTL, options and extensions", async () => {
    const name = await role({
      ...USER_ROLE,
      max_ttl: "1h",
      allowed_extensions: "permit-pty",
      allow_user_key_ids: true,
    });
    expect((await issue(name, { key_type: "ed25519", valid_principals: "u", cert_type: "host" })).json.errors).toEqual([
      "cert_type 'host' is not allowed by role",
    ]);
    expect((await issue(name, { key_type: "ed25519", valid_principals: "u", ttl: "2h" })).json.errors).toEqual([
      "ttl is larger than maximum allowed 3600",
    ]);
    expect(
      (await issue(name, { key_type: "ed25519", valid_principals: "u", extensions: { x: "" } })).json.errors,
    ).toEqual(["extensions [x] are not on allowed list"]);
    const ok = await issue(name, {
      key_type: "ed25519",
      valid_principals: "u",
      key_id: "mine",
      extensions: { "permit-pty": "" },
      critical_options: { "force-command": "/bin/true" },
      ttl: "30m",
    });
    const cert = decodeSignedKey(ok.json.data.signed_key);
    expect(cert.keyId).toBe("mine");
    expect(cert.validBefore - cert.validAfter).toBe(BigInt(1800 + 30));
  });

  it("key_id_format's {{public_key_hash}} hashes the generated key", async () => {
    const name = await role({ ...USER_ROLE, key_id_format: "{{public_key_hash}}" });
    const res = await issue(name, { key_type: "ed25519", valid_principals: "u" });
    const cert = decodeSignedKey(res.json.data.signed_key);
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encodePublicKey(cert.publicKey)));
    expect(cert.keyId).toBe([...digest].map((b) => b.toString(16).padStart(2, "0")).join(""));
  });

  it("warns about unknown fields; needs create (S6)", async () => {
    const name = await role(USER_ROLE);
    const res = await issue(name, { key_type: "ed25519", valid_principals: "u", public_key: "x" });
    expect(res.json.warnings).toEqual(["Endpoint ignored these unrecognized parameters: [public_key]"]);
    expect((await vault("POST", `ssh/issue/${name}`, { token: null, body: {} })).status).toBe(403);
    expect((await vault("GET", `ssh/issue/${name}`)).status).toBe(405);
  });
});
