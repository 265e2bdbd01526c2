/**
 * Private keys both ways with the real tools:
 * - keys we generate and write (decision S10 formats) load with `ssh-keygen -y -f` and give
 *   back our public key, and ssh-keygen can sign certificates with them;
 * - keys freshly written by ssh-keygen and openssl in every supported container load in our
 *   reader and derive the public key ssh-keygen prints.
 * RSA-4096 generation costs seconds, so it is done once and reused.
 * Decision B7: missing binaries fail with an install hint; these tests never skip.
 */
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  generateSshKeyPair,
  importSigningKey,
  type SshKeyKind,
  signCertificate,
  verifyCertificate,
} from "../../../src/lib/crypto/ssh-keys-and-certificates";
import { decodeCertificate } from "../../../src/lib/sshwire/certificate";
import { findBinary, OpensshSandbox, parseCertificateListing } from "../../support/openssh";
import { blobOfLine, fixtureText } from "../../unit/lib/support/fixtures";

let sandbox: OpensshSandbox;

beforeAll(async () => {
  findBinary("ssh-keygen");
  findBinary("openssl");
  sandbox = await OpensshSandbox.create();
  await sandbox.write("subject.pub", fixtureText("keys/ed25519.pub"), 0o644);
});

afterAll(async () => {
  await sandbox?.dispose();
});

/** `ssh-keygen -y -f file` → "type base64" (comment dropped). */
async function sshKeygenPublic(file: string): Promise<string> {
  const run = await sandbox.sshKeygen(["-y", "-f", file]);
  expect(run.code, run.stderr).toBe(0);
  return run.stdout.trim().split(" ").slice(0, 2).join(" ");
}

describe("keys we write load in OpenSSH", () => {
  const cases: Array<[SshKeyKind, number]> = [
    ["rsa", 2048],
    ["rsa", 3072],
    ["rsa", 4096],
    ["ec", 256],
    ["ec", 384],
    ["ec", 521],
    ["ed25519", 0],
  ];

  it.each(cases)("%s %i: ssh-keygen -y gives our public key and ssh-keygen can sign with it", async (kind, bits) => {
    const pair = await generateSshKeyPair(kind, bits);
    const file = `generated-${kind}-${bits}`;
    await sandbox.write(file, pair.privateKeyPem);
    expect(await sshKeygenPublic(file)).toBe(pair.publicKeyText.trim());

    // ssh-keygen uses our private key as a CA; we verify its certificate, it lists it.
    const run = await sandbox.sshKeygen([
      "-q",
      "-s",
      file,
      "-I",
      `by-${file}`,
      "-n",
      "alice",
      "-z",
      "9",
      "subject.pub",
    ]);
    expect(run.code, run.stderr).toBe(0);
    const certText = await sandbox.read("subject-cert.pub");
    const cert = decodeCertificate(blobOfLine(certText));
    expect(await verifyCertificate(cert)).toBe(true);
    expect(cert.signatureKey).toEqual(pair.signingKey.publicKeyBlob);

    // And we use the same key as a CA; ssh-keygen verifies our signature.
    const signed = await signCertificate(pair.signingKey, {
      subjectKeyBlob: blobOfLine(fixtureText("keys/ecdsa-256.pub")),
      serial: 5n,
      certType: 1,
      keyId: file,
      principals: ["alice"],
      validAfter: 0n,
      validBefore: (1n << 64n) - 1n,
      criticalOptions: {},
      extensions: { "permit-pty": "" },
    });
    await sandbox.write(`${file}-signed-cert.pub`, signed.text);
    const listed = await sandbox.sshKeygen(["-L", "-f", `${file}-signed-cert.pub`]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(parseCertificateListing(listed.stdout).keyId).toBe(file);
  });
});

describe("keys written by ssh-keygen and openssl load in our reader", () => {
  const sshKeygenCases: Array<[string, string[]]> = [
    ["openssh-ed25519", ["-t", "ed25519"]],
    ["openssh-ecdsa-256", ["-t", "ecdsa", "-b", "256"]],
    ["openssh-ecdsa-384", ["-t", "ecdsa", "-b", "384"]],
    ["openssh-ecdsa-521", ["-t", "ecdsa", "-b", "521"]],
    ["openssh-rsa-2048", ["-t", "rsa", "-b", "2048"]],
    ["pem-rsa-2048", ["-t", "rsa", "-b", "2048", "-m", "PEM"]],
    ["pkcs8-rsa-2048", ["-t", "rsa", "-b", "2048", "-m", "PKCS8"]],
    ["pem-ecdsa-384", ["-t", "ecdsa", "-b", "384", "-m", "PEM"]],
    ["pkcs8-ecdsa-521", ["-t", "ecdsa", "-b", "521", "-m", "PKCS8"]],
  ];

  it.each(sshKeygenCases)("ssh-keygen %s", async (name, args) => {
    const run = await sandbox.sshKeygen(["-q", "-N", "", "-C", "", "-f", name, ...args]);
    expect(run.code, run.stderr).toBe(0);
    const key = await importSigningKey(await sandbox.read(name));
    expect(key.publicKeyText().trim()).toBe((await sandbox.read(`${name}.pub`)).trim());
  });

  const opensslCases: Array<[string, string[]]> = [
    ["openssl-ed25519", ["genpkey", "-algorithm", "ed25519"]],
    ["openssl-ec-256", ["ecparam", "-name", "prime256v1", "-genkey"]],
    ["openssl-ec-384-pkcs8", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"]],
    ["openssl-rsa-2048", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"]],
  ];

  it.each(opensslCases)("%s", async (name, args) => {
    const run = await sandbox.run("openssl", [...args, "-out", name]);
    expect(run.code, run.stderr).toBe(0);
    const key = await importSigningKey(await sandbox.read(name));
    if (name === "openssl-ed25519") {
      // ssh-keygen 9.2 cannot read Ed25519 PKCS#8: compare with openssl's raw public key.
      const der = await sandbox.run("openssl", [
        "pkey",
        "-in",
        name,
        "-pubout",
        "-outform",
        "DER",
        "-out",
        `${name}.der`,
      ]);
      expect(der.code, der.stderr).toBe(0);
      const raw = await readFile(sandbox.path(`${name}.der`));
      expect(key.publicKeyBlob.subarray(-32)).toEqual(new Uint8Array(raw.subarray(-32)));
      expect(key.keyType).toBe("ssh-ed25519");
    } else {
      // ssh-keygen refuses private keys readable by others: rewrite with mode 0600.
      await sandbox.write(name, await sandbox.read(name));
      expect(key.publicKeyText().trim()).toBe(await sshKeygenPublic(name));
    }
  });
});
