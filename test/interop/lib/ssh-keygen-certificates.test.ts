/**
 * Certificates we sign, checked by the real OpenSSH: `ssh-keygen -L -f` verifies the CA
 * signature and prints every field. Matrix: each CA type (RSA with each of the three
 * signature algorithms, ECDSA 256/384/521, Ed25519) × each subject key type, with
 * `force-command` and `source-address` critical options and all five `permit-*` extensions.
 * Decision B7: a missing ssh-keygen fails these tests with an install hint; they never skip.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toBase64 } from "../../../src/lib/bytes";
import {
  type CertificateTemplate,
  importSigningKey,
  type SshSigningKey,
  signCertificate,
} from "../../../src/lib/crypto/ssh-keys-and-certificates";
import { decodeCertificate } from "../../../src/lib/sshwire/certificate";
import type { RsaSignatureAlgorithm } from "../../../src/lib/sshwire/key-types";
import { findBinary, OpensshSandbox, parseCertificateListing } from "../../support/openssh";
import { fixtureText, publicKeyFixture } from "../../unit/lib/support/fixtures";

const CA_CONFIGS: Array<[label: string, key: string, algorithm: RsaSignatureAlgorithm | undefined, using: string]> = [
  ["rsa ssh-rsa", "rsa-2048", "ssh-rsa", "ssh-rsa"],
  ["rsa rsa-sha2-256", "rsa-2048", "rsa-sha2-256", "rsa-sha2-256"],
  ["rsa rsa-sha2-512", "rsa-2048", "rsa-sha2-512", "rsa-sha2-512"],
  ["ecdsa-256", "ecdsa-256", undefined, "ecdsa-sha2-nistp256"],
  ["ecdsa-384", "ecdsa-384", undefined, "ecdsa-sha2-nistp384"],
  ["ecdsa-521", "ecdsa-521", undefined, "ecdsa-sha2-nistp521"],
  ["ed25519", "ed25519", undefined, "ssh-ed25519"],
];

/** Subject fixture → the key label ssh-keygen prints for its certificate. */
const SUBJECTS: Record<string, string> = {
  "rsa-2048": "RSA-CERT",
  "ecdsa-256": "ECDSA-CERT",
  "ecdsa-384": "ECDSA-CERT",
  "ecdsa-521": "ECDSA-CERT",
  ed25519: "ED25519-CERT",
  "sk-ecdsa": "ECDSA-SK-CERT",
  "sk-ed25519": "ED25519-SK-CERT",
};

const CA_LABEL: Record<string, string> = {
  "ssh-rsa": "RSA",
  "ecdsa-sha2-nistp256": "ECDSA",
  "ecdsa-sha2-nistp384": "ECDSA",
  "ecdsa-sha2-nistp521": "ECDSA",
  "ssh-ed25519": "ED25519",
};

const PERMIT_ALL = [
  "permit-X11-forwarding",
  "permit-agent-forwarding",
  "permit-port-forwarding",
  "permit-pty",
  "permit-user-rc",
];

function fingerprint(blob: Uint8Array): string {
  return `SHA256:${createHash("sha256").update(blob).digest("base64").replace(/=+$/, "")}`;
}

function template(subject: string, serial: bigint): CertificateTemplate {
  return {
    subjectKeyBlob: publicKeyFixture(subject),
    serial,
    certType: 1,
    keyId: `keyway ${subject}`,
    principals: ["alice", "bob"],
    validAfter: 1_700_000_000n,
    validBefore: 1_700_003_600n,
    criticalOptions: { "source-address": "10.0.0.0/8,192.168.1.1/32", "force-command": "/usr/bin/id -u" },
    extensions: Object.fromEntries(PERMIT_ALL.map((e) => [e, ""])),
  };
}

let sandbox: OpensshSandbox;
const cas = new Map<string, SshSigningKey>();

beforeAll(async () => {
  findBinary("ssh-keygen"); // throws with `apt-get install openssh-client` when missing
  sandbox = await OpensshSandbox.create();
  for (const name of new Set(CA_CONFIGS.map((c) => c[1])))
    cas.set(name, await importSigningKey(fixtureText(`keys/${name}`)));
});

afterAll(async () => {
  await sandbox?.dispose();
});

/** Writes a certificate line and lists it with ssh-keygen -L. */
async function listCertificate(file: string, text: string) {
  await sandbox.write(file, text, 0o644);
  return sandbox.sshKeygen(["-L", "-f", file]);
}

describe("ssh-keygen -L accepts what we sign", () => {
  it.each(CA_CONFIGS)("CA %s × every subject key type", async (label, caName, algorithm, using) => {
    const ca = cas.get(caName)!;
    const subjects = Object.keys(SUBJECTS);
    const results = await Promise.all(
      subjects.map(async (subject, i) => {
        const serial = BigInt(1000 + i) * 0x100000001n;
        const signed = await signCertificate(ca, template(subject, serial), algorithm);
        const file = `${label.replace(/\W+/g, "_")}-${subject}-cert.pub`;
        return { subject, serial, signed, run: await listCertificate(file, signed.text) };
      }),
    );
    for (const { subject, serial, signed, run } of results) {
      expect(run.stderr, `${label} / ${subject}`).toBe("");
      expect(run.code, `${label} / ${subject}: ${run.stderr}`).toBe(0);
      const listing = parseCertificateListing(run.stdout);
      expect(listing.type).toBe(signed.typeName);
      expect(listing.kind).toBe("user");
      expect(listing.publicKey).toBe(`${SUBJECTS[subject]} ${fingerprint(publicKeyFixture(subject))}`);
      expect(listing.signingCa).toBe(`${CA_LABEL[ca.keyType]} ${fingerprint(ca.publicKeyBlob)} (using ${using})`);
      expect(listing.keyId).toBe(`keyway ${subject}`);
      expect(listing.serial).toBe(serial);
      expect(listing.valid).toBe("from 2023-11-14T22:13:20 to 2023-11-14T23:13:20");
      expect(listing.principals).toEqual(["alice", "bob"]);
      expect(listing.criticalOptions).toEqual([
        ["force-command", "/usr/bin/id -u"],
        ["source-address", "10.0.0.0/8,192.168.1.1/32"],
      ]);
      expect(listing.extensions).toEqual(PERMIT_ALL.map((e) => [e, ""]));
    }
  });

  it("host certificates, empty principals, custom options and the maximum serial", async () => {
    const ca = cas.get("ed25519")!;
    const host = await signCertificate(ca, {
      ...template("ecdsa-384", 0n),
      certType: 2,
      keyId: "host.example.com",
      principals: ["host.example.com", "10.1.2.3"],
      criticalOptions: {},
      extensions: {},
      validAfter: 0n,
      validBefore: (1n << 64n) - 1n,
    });
    const h = parseCertificateListing((await listCertificate("host-cert.pub", host.text)).stdout);
    expect([h.kind, h.principals, h.valid, h.criticalOptions, h.extensions]).toEqual([
      "host",
      ["host.example.com", "10.1.2.3"],
      "forever",
      [],
      [],
    ]);

    const custom = await signCertificate(ca, {
      ...template("ed25519", (1n << 64n) - 1n),
      principals: [],
      criticalOptions: { "verify-required": "" },
      extensions: { "login@github.com": "alice", "permit-pty": "" },
    });
    const run = await listCertificate("custom-cert.pub", custom.text);
    expect(run.code).toBe(0);
    const c = parseCertificateListing(run.stdout);
    expect(c.serial).toBe((1n << 64n) - 1n);
    expect(c.principals).toEqual([]);
    expect(c.criticalOptions).toEqual([["verify-required", ""]]);
    // ssh-keygen shows unknown extensions' raw data: the nested string "alice".
    expect(c.extensions).toEqual([
      ["login@github.com", "UNKNOWN OPTION: 00000005616c696365 (len 9)"],
      ["permit-pty", ""],
    ]);
  });
});

describe("ssh-keygen -L refuses tampered certificates", () => {
  it("flipped bytes in the nonce, key id, extensions, signature key and signature", async () => {
    const signed = await signCertificate(cas.get("ecdsa-384")!, template("ed25519", 7n));
    const blob = signed.blob;
    const cert = decodeCertificate(blob);
    const hex = Buffer.from(blob).toString("hex");
    const at = (needle: string) => hex.indexOf(Buffer.from(needle).toString("hex")) / 2;
    const validBefore = hex.indexOf(1_700_003_600n.toString(16).padStart(16, "0")) / 2;
    const offsets: Array<[string, number]> = [
      ["nonce", 4 + signed.typeName.length + 4 + 5],
      ["key id", at("keyway ed25519") + 3],
      ["extension name", at("permit-pty") + 7],
      ["valid before", validBefore + 7],
      ["signature key point", cert.signedBytes.length - 10],
      ["signature", blob.length - 5],
    ];
    expect(offsets.every(([, o]) => o > 0 && o < blob.length)).toBe(true);
    for (const [what, offset] of offsets) {
      const t = blob.slice();
      t[offset] = t[offset]! ^ 0x01;
      const run = await listCertificate(`tampered-${offset}-cert.pub`, `${signed.typeName} ${toBase64(t)}\n`);
      expect(run.code, `${what} @${offset}: ${run.stdout}`).not.toBe(0);
    }
    // The untouched certificate is accepted by the same command.
    expect((await listCertificate("untampered-cert.pub", signed.text)).code).toBe(0);
    // A nonce flip keeps the structure, so OpenSSH reports the signature itself.
    const t = blob.slice();
    t[offsets[0]![1]] = t[offsets[0]![1]]! ^ 0x01;
    const run = await listCertificate("nonce-cert.pub", `${signed.typeName} ${toBase64(t)}\n`);
    expect(run.stderr).toContain("incorrect signature");
  });
});
