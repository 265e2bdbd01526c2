/**
 * `POST sign/:name`: who and what a certificate names — Vault's backend_test.go
 * cases of host certificates, principal errors, normalisation and host domain rules
 * and 38 (certificate type), adapted where decisions.md differs (S8). Mount `ssh` has an
 * RSA-2048 CA and `ssh-two` an Ed25519 CA for the whole file.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { toBase64 } from "../../../../src/lib/bytes";
import { verifyCertificate } from "../../../../src/lib/crypto/ssh-keys-and-certificates";
import { importSignCas, role, sign, USER_ROLE } from "../../../helpers/ssh-sign";
import { blobOf, CA_KEYS, decodeSignedKey, optionsOf, SUBJECT_KEYS } from "../ca-fixtures";

beforeAll(importSignCas);

describe("host certificates (TestBackend_ValidPrincipalsValidatedForHostCertificates)", () => {
  it("signs a host certificate with the role's defaults", async () => {
    const name = await role({
      key_type: "ca",
      allow_host_certificates: true,
      allowed_domains: "example.com,example.org",
      allow_subdomains: true,
      default_critical_options: { option: "value" },
      default_extensions: { extension: "extended" },
    });
    // Vault's publicKey2: the CA's own key as a bare base64 blob.
    const bare = toBase64(blobOf(CA_KEYS.rsa2048.publicKey));
    const res = await sign(name, {
      public_key: bare,
      ttl: "2h",
      cert_type: "host",
      valid_principals: "dummy.example.org,second.example.com",
    });
    expect(res.status).toBe(200);
    const cert = decodeSignedKey(res.json.data.signed_key);
    // S7: without key_id_format the key ID is the token display name (root).
    expect(cert.keyId).toBe("root");
    expect(cert.certType).toBe(2);
    expect(cert.principals).toEqual(["dummy.example.org", "second.example.com"]);
    expect(optionsOf(cert.criticalOptions)).toEqual({ option: "value" });
    expect(optionsOf(cert.extensions)).toEqual({ extension: "extended" });
    expect(cert.validBefore - cert.validAfter).toBe(BigInt(2 * 3600 + 30));
    expect(cert.signatureKey).toEqual(blobOf(CA_KEYS.rsa2048.publicKey));
    expect(res.json.data.serial_number).not.toBe("");
    expect(await verifyCertificate(cert)).toBe(true);
  });
});

describe("principal errors (S8, current Vault)", () => {
  it("an empty allowed_users allows nobody, not even default_user", async () => {
    const name = await role({ key_type: "ca", allow_user_certificates: true, default_user: "ubuntu" });
    const res = await sign(name, { public_key: SUBJECT_KEYS.ed25519 });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ errors: ["role is not configured to allow any principals"] });
  });

  it("a principal outside allowed_users is refused", async () => {
    const name = await role({ key_type: "ca", allow_user_certificates: true, allowed_users: "a" });
    const res = await sign(name, { public_key: SUBJECT_KEYS.ed25519, valid_principals: "b" });
    expect(res.json).toEqual({ errors: ["b is not a valid value for valid_principals"] });
  });

  it("no principals at all is refused, also with allowed_users *", async () => {
    for (const allowed of ["*", "a"]) {
      const name = await role({ key_type: "ca", allow_user_certificates: true, allowed_users: allowed });
      for (const body of [{}, { valid_principals: "" }, { valid_principals: " , " }]) {
        const res = await sign(name, { public_key: SUBJECT_KEYS.ed25519, ...body });
        expect(res.status).toBe(400);
        expect(res.json).toEqual({ errors: ["empty valid principals not allowed by role"] });
      }
    }
  });

  it("allow_empty_principals signs a certificate with zero principals", async () => {
    const name = await role({ key_type: "ca", allow_user_certificates: true, allow_empty_principals: true });
    const res = await sign(name, { public_key: SUBJECT_KEYS.ed25519 });
    expect(res.status).toBe(200);
    expect(decodeSignedKey(res.json.data.signed_key).principals).toEqual([]);
  });

  it("absent or empty valid_principals falls back to default_user (S8)", async () => {
    const name = await role({
      key_type: "ca",
      allow_user_certificates: true,
      allowed_users: "ubuntu",
      default_user: "ubuntu",
    });
    for (const body of [{}, { valid_principals: "" }]) {
      const res = await sign(name, { public_key: SUBJECT_KEYS.ed25519, ...body });
      expect(decodeSignedKey(res.json.data.signed_key).principals).toEqual(["ubuntu"]);
    }
  });

  it("default_user is not a principal of host certificates", async () => {
    const name = await role({
      key_type: "ca",
      allow_host_certificates: true,
      allowed_domains: "*",
      default_user: "ubuntu",
    });
    const res = await sign(name, { public_key: SUBJECT_KEYS.ed25519, cert_type: "host" });
    expect(res.json).toEqual({ errors: ["empty valid principals not allowed by role"] });
  });
});

describe("principal normalisation", () => {
  it("trims, de-duplicates and sorts", async () => {
    const name = await role(USER_ROLE);
    const res = await sign(name, { public_key: SUBJECT_KEYS.ed25519, valid_principals: "b, a,a" });
    expect(decodeSignedKey(res.json.data.signed_key).principals).toEqual(["a", "b"]);
  });

  it("checks principals in sorted order and names the first refused", async () => {
    const name = await role({ key_type: "ca", allow_user_certificates: true, allowed_users: "m" });
    const res = await sign(name, { public_key: SUBJECT_KEYS.ed25519, valid_principals: "z,m,c" });
    expect(res.json.errors).toEqual(["c is not a valid value for valid_principals"]);
  });
});

describe("host certificate domain rules", () => {
  async function hostSign(flags: Record<string, unknown>, principal: string) {
    const name = await role({
      key_type: "ca",
      allow_host_certificates: true,
      allowed_domains: "example.com",
      ...flags,
    });
    return sign(name, { public_key: SUBJECT_KEYS.ed25519, cert_type: "host", valid_principals: principal });
  }

  it("a bare domain needs allow_bare_domains", async () => {
    expect((await hostSign({}, "example.com")).json.errors).toEqual([
      "example.com is not a valid value for valid_principals",
    ]);
    expect((await hostSign({ allow_subdomains: true }, "example.com")).status).toBe(400);
    expect((await hostSign({ allow_bare_domains: true }, "example.com")).status).toBe(200);
  });

  it("subdomains at any depth need allow_subdomains", async () => {
    expect((await hostSign({ allow_bare_domains: true }, "a.b.example.com")).status).toBe(400);
    expect((await hostSign({ allow_subdomains: true }, "a.b.example.com")).status).toBe(200);
  });

  it("badexample.com never passes", async () => {
    const res = await hostSign({ allow_subdomains: true, allow_bare_domains: true }, "badexample.com");
    expect(res.json.errors).toEqual(["badexample.com is not a valid value for valid_principals"]);
  });

  it("allowed_domains * allows any host", async () => {
    const name = await role({ key_type: "ca", allow_host_certificates: true, allowed_domains: "*" });
    const res = await sign(name, {
      public_key: SUBJECT_KEYS.ed25519,
      cert_type: "host",
      valid_principals: "anything.test,10.0.0.1",
    });
    expect(decodeSignedKey(res.json.data.signed_key).principals).toEqual(["10.0.0.1", "anything.test"]);
  });
});

describe("certificate type", () => {
  it("cert_type must be user or host (case-sensitive)", async () => {
    const name = await role({ ...USER_ROLE, allow_host_certificates: true });
    for (const certType of ["foo", "", "User"]) {
      const res = await sign(name, { public_key: SUBJECT_KEYS.ed25519, valid_principals: "a", cert_type: certType });
      expect(res.json).toEqual({ errors: ["cert_type must be either 'user' or 'host'"] });
    }
  });

  it("a user certificate on a host-only role, and a host certificate on a user-only role, are refused", async () => {
    const hostOnly = await role({ key_type: "ca", allow_host_certificates: true, allowed_domains: "*" });
    expect((await sign(hostOnly, { public_key: SUBJECT_KEYS.ed25519, valid_principals: "a" })).json).toEqual({
      errors: ["cert_type 'user' is not allowed by role"],
    });
    const userOnly = await role(USER_ROLE);
    expect(
      (await sign(userOnly, { public_key: SUBJECT_KEYS.ed25519, valid_principals: "a", cert_type: "host" })).json,
    ).toEqual({
      errors: ["cert_type 'host' is not allowed by role"],
    });
  });

  it("signing with an OTP role fails on the certificate type", async () => {
    const name = await role({ key_type: "otp", default_user: "u", cidr_list: "10.0.0.0/8" });
    const res = await sign(name, { public_key: SUBJECT_KEYS.ed25519 });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ errors: ["cert_type 'user' is not allowed by role"] });
  });
});
