/**
 * CA configuration and public key (decisions B2, S3, S4, S9, S16):
 * Vault's backend_test.go and path_config_ca_test.go, adapted where S9 makes POST config/ca a replacement.
 * Mount `ssh-two` is used by the tests that need an unconfigured CA; each of them deletes
 * the CA first.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { decryptSecret } from "../../../../src/lib/crypto/kek";
import { uniqueName, vault } from "../../../helpers/vault";
import { blobOf, CA_KEYS, decodeSignedKey, ENCRYPTED_PRIVATE_KEY, SUBJECT_KEYS } from "../ca-fixtures";

async function configure(mount: string, body: Record<string, unknown>) {
  return vault("POST", `${mount}/config/ca`, { body });
}

async function publicKey(mount: string) {
  return vault("GET", `${mount}/public_key`, { token: null });
}

async function importPair(mount: string, pair: { privateKey: string; publicKey: string }) {
  return configure(mount, { private_key: pair.privateKey, public_key: pair.publicKey });
}

describe("config/ca update and delete (S9: POST replaces)", () => {
  it("generates, replaces, deletes, imports, replaces an import, regenerates", async () => {
    const mount = "ssh";
    const first = await vault("POST", `${mount}/config/ca`);
    expect(first.status).toBe(200);
    expect(first.json.data.public_key).toMatch(/^ssh-rsa AAAA[A-Za-z0-9+/=]+$/);

    // Vault: 400 "keys are already configured". S9: the pair is replaced.
    const second = await configure(mount, { key_type: "ed25519" });
    expect(second.status).toBe(200);
    expect(second.json.data.public_key).toMatch(/^ssh-ed25519 /);
    expect((await publicKey(mount)).text).toBe(second.json.data.public_key);

    expect((await vault("DELETE", `${mount}/config/ca`)).status).toBe(204);
    const imported = await importPair(mount, CA_KEYS.rsa2048);
    expect(imported.status).toBe(204);
    expect(imported.text).toBe("");
    const replaced = await importPair(mount, CA_KEYS.ecdsa384);
    expect(replaced.status).toBe(204);
    expect((await publicKey(mount)).text).toBe(CA_KEYS.ecdsa384.publicKey.trim());

    expect((await vault("DELETE", `${mount}/config/ca`)).status).toBe(204);
    const regenerated = await configure(mount, { key_type: "ec" });
    expect(regenerated.status).toBe(200);
    expect((await vault("DELETE", `${mount}/config/ca`)).status).toBe(204);
    // DELETE is 204 even with nothing configured.
    expect((await vault("DELETE", `${mount}/config/ca`)).status).toBe(204);
  });

  it("after a replacement, new certificates are signed by the new CA (S9)", async () => {
    const mount = "ssh";
    const role = uniqueName("rot");
    await vault("POST", `${mount}/roles/${role}`, {
      body: { key_type: "ca", allow_user_certificates: true, allowed_users: "*" },
    });
    const sign = () =>
      vault("POST", `${mount}/sign/${role}`, { body: { public_key: SUBJECT_KEYS.ed25519, valid_principals: "a" } });

    await importPair(mount, CA_KEYS.ed25519);
    const before = decodeSignedKey((await sign()).json.data.signed_key);
    expect(before.signatureKey).toEqual(blobOf(CA_KEYS.ed25519.publicKey));

    await importPair(mount, CA_KEYS.ecdsa256);
    const after = decodeSignedKey((await sign()).json.data.signed_key);
    expect(after.signatureKey).toEqual(blobOf(CA_KEYS.ecdsa256.publicKey));

    await vault("DELETE", `${mount}/config/ca`);
    const none = await sign();
    expect(none.status).toBe(400);
    expect(none.json.errors).toEqual(["failed to read CA private key"]);
  });
});

describe("generated CA key types (TestSSH_ConfigCAKeyTypes)", () => {
  const matrix: [string, number, string][] = [
    ["ssh-rsa", 2048, "ssh-rsa"],
    ["ssh-rsa", 4096, "ssh-rsa"],
    ["ssh-rsa", 0, "ssh-rsa"],
    ["rsa", 2048, "ssh-rsa"],
    ["rsa", 4096, "ssh-rsa"],
    // Vault accepts any size ≥ 2048; WebCrypto in workerd needs a multiple of 128.
    ["rsa", 2176, "ssh-rsa"],
    ["ecdsa-sha2-nistp256", 0, "ecdsa-sha2-nistp256"],
    ["ecdsa-sha2-nistp384", 0, "ecdsa-sha2-nistp384"],
    ["ecdsa-sha2-nistp521", 0, "ecdsa-sha2-nistp521"],
    ["ec", 256, "ecdsa-sha2-nistp256"],
    ["ec", 384, "ecdsa-sha2-nistp384"],
    ["ec", 521, "ecdsa-sha2-nistp521"],
    ["ec", 0, "ecdsa-sha2-nistp256"],
    ["ssh-ed25519", 0, "ssh-ed25519"],
    ["ed25519", 0, "ssh-ed25519"],
  ];
  it.each(matrix)("key_type %s key_bits %i → %s; signs an ed25519 user key", async (keyType, keyBits, sshType) => {
    const mount = "ssh";
    const role = uniqueName("ca-issuance");
    await vault("POST", `${mount}/roles/${role}`, {
      body: {
        key_type: "ca",
        allow_user_certificates: true,
        allowed_users: "*",
        ttl: "30s",
        not_before_duration: "2h",
      },
    });
    const gen = await configure(mount, { key_type: keyType, key_bits: keyBits });
    expect(gen.status).toBe(200);
    expect(gen.json.data.public_key.startsWith(`${sshType} `)).toBe(true);
    expect(gen.json.data.public_key).toBe(gen.json.data.public_key.trim()); // B17: canonical, no trailing newline
    const signed = await vault("POST", `${mount}/sign/${role}`, {
      body: { public_key: SUBJECT_KEYS.ed25519, valid_principals: "u" },
    });
    expect(signed.status).toBe(200);
    const cert = decodeSignedKey(signed.json.data.signed_key);
    expect(cert.signatureKey).toEqual(blobOf(gen.json.data.public_key));
    expect(cert.signatureKeyParsed.type).toBe(sshType);
    if (sshType === "ssh-rsa") {
      const bits = keyBits === 0 ? 4096 : keyBits;
      expect((cert.signatureKeyParsed as { n: Uint8Array }).n.length * 8).toBe(bits);
    }
    expect((await vault("DELETE", `${mount}/config/ca`)).status).toBe(204);
  });
});

describe("the config/ca decision table and parameter errors", () => {
  const errors: [string, Record<string, unknown>, string | RegExp][] = [
    [
      "generate_signing_key true with keys",
      { generate_signing_key: true, public_key: CA_KEYS.ed25519.publicKey },
      "public_key and private_key must not be set when generate_signing_key is set to true",
    ],
    [
      "only public_key, flag unset",
      { public_key: CA_KEYS.ed25519.publicKey },
      "only one of public_key and private_key set; both must be set to use, or both must be blank to auto-generate",
    ],
    [
      "only private_key, flag unset",
      { private_key: CA_KEYS.ed25519.privateKey },
      "only one of public_key and private_key set; both must be set to use, or both must be blank to auto-generate",
    ],
    ["generate_signing_key false, no keys", { generate_signing_key: false }, "missing public_key"],
    [
      "generate_signing_key false, only a public key",
      { generate_signing_key: "false", public_key: CA_KEYS.ed25519.publicKey },
      "missing private_key",
    ],
    [
      "garbage private key",
      { private_key: "garbage", public_key: CA_KEYS.ed25519.publicKey },
      /^Unable to parse private_key as an SSH private key: /,
    ],
    [
      "passphrase-protected private key",
      { private_key: ENCRYPTED_PRIVATE_KEY, public_key: CA_KEYS.ed25519.publicKey },
      /^Unable to parse private_key as an SSH private key: .*(passphrase|encrypted)/i,
    ],
    [
      "garbage public key",
      { private_key: CA_KEYS.ed25519.privateKey, public_key: "ssh-ed25519 !!!" },
      /^Unable to parse public_key as an SSH public key: /,
    ],
    [
      "a certificate as the public key",
      { private_key: CA_KEYS.ed25519.privateKey, public_key: SUBJECT_KEYS.certificate },
      /^Unable to parse public_key as an SSH public key: /,
    ],
    [
      "a public key of another pair (S9)",
      { private_key: CA_KEYS.ed25519.privateKey, public_key: CA_KEYS.rsa2048.publicKey },
      "public_key does not match private_key",
    ],
    ["key_type foo (S4: 400)", { key_type: "foo" }, "unknown ssh key pair algorithm: foo"],
    ["key types are case-sensitive", { key_type: "RSA" }, "unknown ssh key pair algorithm: RSA"],
    ["weak RSA", { key_bits: 1024 }, "refusing to generate weak ssh-rsa key: 1024 bits < 2048 bits"],
    [
      "weak RSA by name rsa",
      { key_type: "rsa", key_bits: 1000 },
      "refusing to generate weak rsa key: 1000 bits < 2048 bits",
    ],
    ["huge RSA", { key_type: "rsa", key_bits: 1_000_000 }, /^refusing to generate rsa key of 1000000 bits/],
    [
      "RSA size WebCrypto cannot generate",
      { key_type: "rsa", key_bits: 3000 },
      /^refusing to generate rsa key of 3000 bits: the size must be a multiple of 128/,
    ],
    ["bad EC bits", { key_type: "ec", key_bits: 123 }, "unknown ECDSA key pair algorithm and bits: ec / 123"],
    ["key_bits not a number", { key_bits: "many" }, /^Field validation failed: .*"key_bits"/],
    [
      "generate_signing_key not a bool",
      { generate_signing_key: "perhaps" },
      /^Field validation failed: .*"generate_signing_key"/,
    ],
  ];

  it.each(errors)("%s → 400, and the configured CA is unchanged", async (_what, body, message) => {
    const mount = "ssh-two";
    await importPair(mount, CA_KEYS.ecdsa256);
    const started = Date.now();
    const res = await configure(mount, body);
    expect(res.status).toBe(400);
    expect(res.json.errors).toHaveLength(1);
    if (typeof message === "string") expect(res.json.errors[0]).toBe(message);
    else expect(res.json.errors[0]).toMatch(message);
    // S9: parameters are validated before anything is generated.
    expect(Date.now() - started).toBeLessThan(1000);
    expect((await publicKey(mount)).text).toBe(CA_KEYS.ecdsa256.publicKey.trim());
  });

  it("imports every supported private key container", async () => {
    for (const pair of [
      CA_KEYS.rsa2048Pkcs1,
      CA_KEYS.ecdsa256Sec1,
      CA_KEYS.ed25519Pkcs8,
      CA_KEYS.rsa2048,
      CA_KEYS.ecdsa384,
    ]) {
      const res = await importPair("ssh-two", pair);
      expect(res.status, pair.publicKey).toBe(204);
    }
  });

  it("unknown fields are warned about; a generated CA still answers its public key", async () => {
    const res = await configure("ssh-two", { key_type: "ed25519", colour: "blue" });
    expect(res.status).toBe(200);
    expect(res.json.warnings).toEqual(["Endpoint ignored these unrecognized parameters: [colour]"]);
    // A supplied pair answers 204, or 200 with the warnings and null data.
    const imported = await configure("ssh-two", {
      private_key: CA_KEYS.ed25519.privateKey,
      public_key: CA_KEYS.ed25519.publicKey,
      x: 1,
    });
    expect(imported.status).toBe(200);
    expect(imported.json.data).toBeNull();
    expect(imported.json.warnings).toEqual(["Endpoint ignored these unrecognized parameters: [x]"]);
  });
});

describe("GET config/ca", () => {
  it("is 400 `keys haven't been configured yet` before configuration (S3), the public key after", async () => {
    const mount = "ssh-two";
    await vault("DELETE", `${mount}/config/ca`);
    const before = await vault("GET", `${mount}/config/ca`);
    expect(before.status).toBe(400);
    expect(before.json).toEqual({ errors: ["keys haven't been configured yet"] });

    await importPair(mount, CA_KEYS.ed25519);
    const after = await vault("GET", `${mount}/config/ca`);
    expect(after.status).toBe(200);
    expect(after.json.data).toEqual({ public_key: CA_KEYS.ed25519.publicKey.trim() });
  });
});

describe("GET public_key (S16)", () => {
  it("17: serves an imported public key unauthenticated, text/plain, in its canonical form (B17)", async () => {
    const mount = "ssh-two";
    // B17: the comment is kept, surrounding space and the trailing newline are not.
    const pub = `  ${CA_KEYS.rsa2048.publicKey.trim()}   extra\twords\r\n`;
    const canonical = `${CA_KEYS.rsa2048.publicKey.trim()} extra words`;
    expect((await configure(mount, { private_key: CA_KEYS.rsa2048.privateKey, public_key: pub })).status).toBe(204);
    const res = await publicKey(mount);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain");
    expect(res.text).toBe(canonical);
    // A token is accepted too.
    expect((await vault("GET", `${mount}/public_key`)).text).toBe(canonical);
  });

  it("18: serves an auto-generated key exactly as config/ca returned it", async () => {
    const mount = "ssh-two";
    const gen = await vault("POST", `${mount}/config/ca`, { body: {} });
    expect(gen.status).toBe(200);
    expect(gen.json.data.public_key).not.toBe("");
    expect((await publicKey(mount)).text).toBe(gen.json.data.public_key);
  });
});

describe("public_key before configuration and with other methods", () => {
  it('is 404 {"errors":[]} before configuration', async () => {
    await vault("DELETE", "ssh-two/config/ca");
    const res = await publicKey("ssh-two");
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ errors: [] });
  });

  it("POST, PUT and DELETE are never 2xx: 405 with a token, 403 without (S2a, S16)", async () => {
    for (const method of ["POST", "PUT", "DELETE"]) {
      const withToken = await vault(method, "ssh/public_key", { body: {} });
      expect(withToken.status, method).toBe(405);
      expect(withToken.json).toEqual({ errors: ["unsupported operation"] });
      expect((await vault(method, "ssh/public_key", { token: null, body: {} })).status, method).toBe(403);
    }
  });

  it("config/ca needs a token for every method", async () => {
    for (const method of ["GET", "POST", "DELETE"]) {
      expect((await vault(method, "ssh/config/ca", { token: null })).status, method).toBe(403);
    }
  });
});

describe("the CA private key at rest and in answers (B2)", () => {
  it("is stored encrypted under KEYWAY_KEK bound to the mount and never returned", async () => {
    const mount = "ssh-two";
    const gen = await configure(mount, { key_type: "ed25519" });
    const row = await env.DB.prepare(
      // S20: the mount's CA is its default issuer.
      "SELECT i.* FROM ssh_issuers i JOIN ssh_issuer_config c ON c.default_issuer_id = i.id WHERE i.mount = ?",
    )
      .bind(mount)
      .first<Record<string, string>>();
    expect(row).not.toBeNull();
    const stored = row!.private_key_encrypted!;
    expect(stored).toMatch(/^v1\.t1\./);
    expect(stored).not.toContain("PRIVATE KEY");
    const pem = await decryptSecret(env.KEYWAY_KEK, `ssh-ca:${mount}`, stored);
    expect(pem).toContain("-----BEGIN OPENSSH PRIVATE KEY-----");
    // Bound to its mount: the same ciphertext does not decrypt as another mount's.
    await expect(decryptSecret(env.KEYWAY_KEK, "ssh-ca:ssh", stored)).rejects.toThrow();

    for (const res of [gen, await vault("GET", `${mount}/config/ca`), await publicKey(mount)]) {
      expect(res.text).not.toContain("PRIVATE KEY");
    }
  });

  it("each mount has its own CA (S1)", async () => {
    await importPair("ssh", CA_KEYS.ed25519);
    await importPair("ssh-two", CA_KEYS.ecdsa384);
    expect((await publicKey("ssh")).text).toBe(CA_KEYS.ed25519.publicKey.trim());
    expect((await publicKey("ssh-two")).text).toBe(CA_KEYS.ecdsa384.publicKey.trim());
  });
});
