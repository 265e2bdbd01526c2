import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { bytesEqual, fromBase64, toHex } from "../../../../src/lib/bytes";
import {
  type CertificateTemplate,
  generateSshKeyPair,
  importSigningKey,
  parseSubjectPublicKey,
  publicKeyHash,
  SshKeyError,
  type SshSigningKey,
  SubjectKeyError,
  signCertificate,
  verifyCertificate,
} from "../../../../src/lib/crypto/ssh-keys-and-certificates";
import { decodeCertificate, encodeCertificate, optionsToRecord } from "../../../../src/lib/sshwire/certificate";
import { WireError } from "../../../../src/lib/sshwire/errors";
import { EC_CURVES, type RsaSignatureAlgorithm } from "../../../../src/lib/sshwire/key-types";
import { SshReader } from "../../../../src/lib/sshwire/reader";
import { decodeSignature, ecdsaSignatureFromP1363, ecdsaSignatureToP1363 } from "../../../../src/lib/sshwire/signature";
import { certificateFixture, fixtureNames, fixtureText, publicKeyFixture } from "../support/fixtures";

/** CA configurations: fixture key and, for RSA, the signature algorithm. */
const CA_CONFIGS: Array<[string, string, RsaSignatureAlgorithm | undefined]> = [
  ["rsa/ssh-rsa", "rsa-2048", "ssh-rsa"],
  ["rsa/rsa-sha2-256", "rsa-2048", "rsa-sha2-256"],
  ["rsa/rsa-sha2-512", "rsa-2048", "rsa-sha2-512"],
  ["ecdsa-256", "ecdsa-256", undefined],
  ["ecdsa-384", "ecdsa-384", undefined],
  ["ecdsa-521", "ecdsa-521", undefined],
  ["ed25519", "ed25519", undefined],
];
const SUBJECTS = ["rsa-3072", "ecdsa-256", "ecdsa-384", "ecdsa-521", "ed25519", "sk-ecdsa", "sk-ed25519"];

const cas = new Map<string, SshSigningKey>();
beforeAll(async () => {
  for (const name of new Set(CA_CONFIGS.map((c) => c[1])))
    cas.set(name, await importSigningKey(fixtureText(`keys/${name}`)));
});

function template(subject: string, overrides: Partial<CertificateTemplate> = {}): CertificateTemplate {
  return {
    subjectKeyBlob: publicKeyFixture(subject),
    serial: 0xf65ed2fd21443d5cn,
    certType: 1,
    keyId: "vault-root-abc",
    principals: ["alice", "bob"],
    validAfter: 1_700_000_000n,
    validBefore: 1_700_003_600n,
    criticalOptions: { "source-address": "10.0.0.0/8", "force-command": "/bin/true" },
    extensions: {
      "permit-pty": "",
      "permit-X11-forwarding": "",
      "permit-agent-forwarding": "",
      "permit-user-rc": "",
      "permit-port-forwarding": "",
    },
    ...overrides,
  };
}

describe("verifyCertificate against ssh-keygen's signatures", () => {
  it.each(fixtureNames("certs", /-cert\.pub$/))("%s verifies", async (name) => {
    expect(await verifyCertificate(certificateFixture(name))).toBe(true);
  });
});

describe("signCertificate", () => {
  const matrix = CA_CONFIGS.flatMap(([label, ca, alg]) => SUBJECTS.map((s) => [label, ca, alg, s] as const));

  it.each(matrix)("CA %s signs a %s… subject %s that decodes and verifies", async (_label, caName, alg, subject) => {
    const ca = cas.get(caName)!;
    const t = template(subject);
    const signed = await signCertificate(ca, t, alg);
    const cert = decodeCertificate(signed.blob);
    expect(bytesEqual(encodeCertificate(cert), signed.blob)).toBe(true);
    expect(await verifyCertificate(signed.blob)).toBe(true);
    expect(cert.signature.algorithm).toBe(alg ?? ca.keyType);
    expect(signed.algorithm).toBe(alg ?? ca.keyType);
    expect(bytesEqual(cert.signatureKey, ca.publicKeyBlob)).toBe(true);
    expect(cert.serial).toBe(t.serial);
    expect(cert.keyId).toBe(t.keyId);
    expect(cert.principals).toEqual(t.principals);
    expect([cert.validAfter, cert.validBefore]).toEqual([t.validAfter, t.validBefore]);
    expect(cert.criticalOptions.map((o) => o.name)).toEqual(["force-command", "source-address"]);
    expect(optionsToRecord(cert.criticalOptions)).toEqual(t.criticalOptions);
    expect(cert.extensions.map((o) => o.name)).toEqual([
      "permit-X11-forwarding",
      "permit-agent-forwarding",
      "permit-port-forwarding",
      "permit-pty",
      "permit-user-rc",
    ]);
    expect(cert.nonce.length).toBe(32);
    expect(signed.text).toBe(`${signed.typeName} ${Buffer.from(signed.blob).toString("base64")}\n`);
    expect(signed.typeName).toBe(cert.typeName);
  });

  it("defaults RSA CAs to rsa-sha2-256 (decision S11)", async () => {
    const signed = await signCertificate(cas.get("rsa-2048")!, template("ed25519"));
    expect(decodeCertificate(signed.blob).signature.algorithm).toBe("rsa-sha2-256");
  });

  it("uses a given nonce, a host type and empty options", async () => {
    const nonce = new Uint8Array(32).fill(7);
    const signed = await signCertificate(
      cas.get("ed25519")!,
      template("ed25519", { nonce, certType: 2, criticalOptions: {}, extensions: {}, principals: [] }),
    );
    const cert = decodeCertificate(signed.blob);
    expect(bytesEqual(cert.nonce, nonce)).toBe(true);
    expect([cert.certType, cert.principals, cert.criticalOptions, cert.extensions]).toEqual([2, [], [], []]);
    // Two certificates differ only where they should: fresh nonces by default.
    const a = await signCertificate(cas.get("ed25519")!, template("ed25519"));
    const b = await signCertificate(cas.get("ed25519")!, template("ed25519"));
    expect(bytesEqual(decodeCertificate(a.blob).nonce, decodeCertificate(b.blob).nonce)).toBe(false);
  });

  it("refuses an RSA algorithm with a non-RSA CA, DSA and certificate subjects, and bad integers", async () => {
    const code = async (p: Promise<unknown>) => {
      try {
        await p;
        return "ok";
      } catch (e) {
        if (e instanceof SshKeyError || e instanceof WireError) return e.code;
        throw e;
      }
    };
    const ed = cas.get("ed25519")!;
    expect(await code(signCertificate(ed, template("ed25519"), "rsa-sha2-256"))).toBe("ALGORITHM_MISMATCH");
    expect(await code(signCertificate(ed, template("dsa-1024")))).toBe("UNSUPPORTED_KEY_TYPE");
    expect(
      await code(
        signCertificate(ed, {
          ...template("ed25519"),
          subjectKeyBlob: certificateFixture("user-ed25519-by-ed25519-cert.pub"),
        }),
      ),
    ).toBe("CERTIFICATE");
    expect(await code(signCertificate(ed, template("ed25519", { serial: 1n << 64n })))).toBe("INVALID_VALUE");
    expect(await code(signCertificate(ed, template("ed25519", { validBefore: -1n })))).toBe("INVALID_VALUE");
    expect(await code(ed.sign(new Uint8Array(1), "rsa-sha2-512"))).toBe("ALGORITHM_MISMATCH");
  });
});

describe("tampering", () => {
  it.each(CA_CONFIGS)(
    "CA %s: flipping any byte of the certificate breaks verification",
    async (_label, caName, alg) => {
      const signed = await signCertificate(cas.get(caName)!, template("ed25519"), alg);
      const blob = signed.blob;
      let failures = 0;
      for (let i = 0; i < blob.length; i++) {
        const t = blob.slice();
        t[i] = t[i]! ^ 0x01;
        let ok: boolean;
        try {
          ok = await verifyCertificate(t);
        } catch (e) {
          if (!(e instanceof WireError) && !(e instanceof SshKeyError)) throw e;
          ok = false;
        }
        if (ok) throw new Error(`flipping byte ${i} of ${blob.length} still verifies`);
        failures++;
      }
      expect(failures).toBe(blob.length);
    },
  );
});

describe("signature encodings", () => {
  it("ECDSA r and s are minimal mpints (RFC 5656 §3.1.2, RFC 4251 §5)", () => {
    const curve = EC_CURVES.nistp256;
    const rs = new Uint8Array(64);
    rs[31] = 5; // r = 5: three leading zero bytes would be non-minimal
    rs[32] = 0x80; // s has its high bit set: needs a 0x00 sign byte
    const blob = ecdsaSignatureFromP1363(curve, rs);
    expect(toHex(blob)).toBe(`0000000105${"00000021"}00${"80"}${"00".repeat(31)}`);
    expect(bytesEqual(ecdsaSignatureToP1363(curve, blob), rs)).toBe(true);
  });

  it("every ECDSA signature we make decodes strictly", async () => {
    for (const name of ["ecdsa-256", "ecdsa-384", "ecdsa-521"]) {
      const ca = cas.get(name)!;
      for (let i = 0; i < 20; i++) {
        const sig = decodeSignature(await ca.sign(Uint8Array.of(i)));
        const r = new SshReader(sig.blob);
        r.readMpint("r");
        r.readMpint("s");
        r.expectEnd();
      }
    }
  });

  it("RSA signatures are modulus-length, Ed25519 64 bytes", async () => {
    expect(decodeSignature(await cas.get("rsa-2048")!.sign(Uint8Array.of(1))).blob.length).toBe(256);
    expect(decodeSignature(await cas.get("ed25519")!.sign(Uint8Array.of(1))).blob.length).toBe(64);
  });
});

describe("generateSshKeyPair", () => {
  it.each([
    ["rsa", 1024],
    ["rsa", 2047],
    ["rsa", 8192],
    ["rsa", 0],
    ["ec", 0],
    ["ec", 224],
    ["ec", 512],
  ] as const)("refuses %s %i with INVALID_KEY_SIZE before generating", async (kind, bits) => {
    await expect(generateSshKeyPair(kind, bits)).rejects.toMatchObject({
      name: "SshKeyError",
      code: "INVALID_KEY_SIZE",
    });
  });

  it("accepts other RSA sizes only when asked", async () => {
    await expect(generateSshKeyPair("rsa", 1024, { anyRsaSize: true })).rejects.toMatchObject({
      code: "INVALID_KEY_SIZE",
    });
    // workerd's BoringSSL only generates multiples of 128 bits.
    await expect(generateSshKeyPair("rsa", 2056, { anyRsaSize: true })).rejects.toMatchObject({
      code: "INVALID_KEY_SIZE",
    });
    const k = await generateSshKeyPair("rsa", 2176, { anyRsaSize: true });
    expect(k.signingKey.bits).toBe(2176);
  });

  it.each([
    ["ec", 256, "ecdsa-sha2-nistp256", "EC PRIVATE KEY"],
    ["ec", 384, "ecdsa-sha2-nistp384", "EC PRIVATE KEY"],
    ["ec", 521, "ecdsa-sha2-nistp521", "EC PRIVATE KEY"],
    ["ed25519", 0, "ssh-ed25519", "OPENSSH PRIVATE KEY"],
    ["rsa", 2048, "ssh-rsa", "RSA PRIVATE KEY"],
  ] as const)(
    "%s %i: key type, PEM label, and the PEM imports back to the same key",
    async (kind, bits, type, label) => {
      const pair = await generateSshKeyPair(kind, bits);
      expect(pair.signingKey.keyType).toBe(type);
      expect(pair.privateKeyPem.startsWith(`-----BEGIN ${label}-----\n`)).toBe(true);
      expect(pair.privateKeyPem.endsWith(`-----END ${label}-----\n`)).toBe(true);
      expect(pair.publicKeyText).toMatch(new RegExp(`^${type} [A-Za-z0-9+/=]+\\n$`));
      const again = await importSigningKey(pair.privateKeyPem);
      expect(bytesEqual(again.publicKeyBlob, pair.signingKey.publicKeyBlob)).toBe(true);
      const signed = await signCertificate(pair.signingKey, template("ed25519"));
      expect(await verifyCertificate(signed.blob)).toBe(true);
    },
  );
});

describe("subject keys (decision S17) and key IDs (decision S7)", () => {
  it("parses every supported subject type with its bits", () => {
    expect(parseSubjectPublicKey(fixtureText("keys/rsa-4096.pub"))).toMatchObject({ type: "ssh-rsa", bits: 4096 });
    expect(parseSubjectPublicKey(fixtureText("keys/ecdsa-521.pub"))).toMatchObject({
      type: "ecdsa-sha2-nistp521",
      bits: 521,
    });
    expect(parseSubjectPublicKey(fixtureText("keys/sk-ed25519.pub"))).toMatchObject({
      type: "sk-ssh-ed25519@openssh.com",
      bits: 256,
    });
  });

  const refusal = (text: string): SubjectKeyError => {
    try {
      parseSubjectPublicKey(text);
    } catch (e) {
      expect(e).toBeInstanceOf(SubjectKeyError);
      return e as SubjectKeyError;
    }
    throw new Error("expected a refusal");
  };

  it("refuses DSA, certificates and garbage with Vault's messages", () => {
    expect(refusal(fixtureText("keys/dsa-1024.pub")).message).toBe(
      "public_key failed to meet the key requirements: ssh-dss keys are not supported",
    );
    expect(refusal(fixtureText("certs/user-ed25519-by-ed25519-cert.pub")).message).toBe(
      "failed to parse public_key as SSH key: certificates cannot be signed",
    );
    const garbage = refusal("ssh-ed25519 AAAA");
    expect(garbage.code).toBe("INVALID");
    expect(garbage.message.startsWith("failed to parse public_key as SSH key: ")).toBe(true);
  });

  it("publicKeyHash is the hex SHA-256 of the wire blob", async () => {
    const text = fixtureText("keys/ed25519.pub");
    const blob = fromBase64(text.split(" ")[1]!);
    expect(await publicKeyHash(parseSubjectPublicKey(text).blob)).toBe(createHash("sha256").update(blob).digest("hex"));
  });
});

describe("fuzzing verification", () => {
  it("mutated certificates give false or WireError, never another exception", async () => {
    const { seededRandom } = await import("../support/fixtures");
    const rng = seededRandom(0x7e57);
    const sources = await Promise.all(
      CA_CONFIGS.map(([, ca, alg]) => signCertificate(cas.get(ca)!, template("ecdsa-256"), alg)),
    );
    let decoded = 0;
    for (let i = 0; i < 1500; i++) {
      const blob = sources[rng.int(sources.length)]!.blob.slice();
      // XOR with a non-zero value so every mutation really changes the blob.
      for (let f = 0, n = 1 + rng.int(3); f < n; f++) {
        const at = rng.int(blob.length);
        blob[at] = blob[at]! ^ (1 + rng.int(255));
      }
      try {
        expect(await verifyCertificate(blob)).toBe(false);
        decoded++;
      } catch (e) {
        if (!(e instanceof WireError)) throw e;
      }
    }
    expect(decoded).toBeGreaterThan(300);
  });
});
