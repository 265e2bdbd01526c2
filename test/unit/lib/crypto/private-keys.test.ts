import { describe, expect, it } from "vitest";
import { bytesEqual } from "../../../../src/lib/bytes";
import { DerReader, derInteger, derOid, derSequence } from "../../../../src/lib/crypto/der";
import { formatPem, parsePem } from "../../../../src/lib/crypto/pem";
import {
  decodePkcs8,
  encodePkcs8,
  readPrivateKeyPem,
  writePrivateKeyPem,
} from "../../../../src/lib/crypto/private-key-formats";
import { importSigningKey, publicKeyMatches, SshKeyError } from "../../../../src/lib/crypto/ssh-keys-and-certificates";
import { WireError } from "../../../../src/lib/sshwire/errors";
import { decodePublicKey, publicKeyBits } from "../../../../src/lib/sshwire/public-key";
import { fixtureNames, fixtureText, privateKeyFixtureNames, publicKeyFixture, seededRandom } from "../support/fixtures";

const privateNames = privateKeyFixtureNames();

async function keyErrorCode(p: Promise<unknown> | (() => unknown)): Promise<string> {
  try {
    if (typeof p === "function") p();
    else await p;
    return "ok";
  } catch (e) {
    if (e instanceof SshKeyError) return e.code;
    throw e;
  }
}

describe("DER", () => {
  it("round-trips integers and OIDs", () => {
    for (const hex of ["", "00", "7f", "80", "0080", "ff00"]) {
      const enc = derInteger(Uint8Array.from(Buffer.from(hex, "hex")));
      const back = new DerReader(enc).integer("x");
      expect(Buffer.from(back).toString("hex")).toBe(hex.replace(/^(00)+/, ""));
    }
    for (const oid of ["1.2.840.10045.3.1.7", "1.3.132.0.35", "1.3.101.112", "2.999.1"]) {
      expect(new DerReader(derOid(oid)).oid("x")).toBe(oid);
    }
  });

  it("is strict about lengths and integers", () => {
    const code = (bytes: number[], fn: (r: DerReader) => unknown) => {
      try {
        fn(new DerReader(Uint8Array.from(bytes)));
        return "ok";
      } catch (e) {
        if (e instanceof WireError) return e.code;
        throw e;
      }
    };
    expect(code([0x02, 0x02, 0x00, 0x01], (r) => r.integer("x"))).toBe("INVALID_ENCODING");
    expect(code([0x02, 0x01, 0x80], (r) => r.integer("x"))).toBe("INVALID_ENCODING");
    expect(code([0x30, 0x81, 0x05], (r) => r.sequence("x"))).toBe("INVALID_ENCODING");
    expect(code([0x30, 0x80], (r) => r.sequence("x"))).toBe("INVALID_ENCODING");
    expect(code([0x30, 0x05, 0x00], (r) => r.sequence("x"))).toBe("EOF");
    expect(
      code([0x30, 0x00, 0x00], (r) => {
        r.sequence("x");
        r.expectEnd();
      }),
    ).toBe("TRAILING_DATA");
    expect(derSequence().length).toBe(2);
  });
});

describe("PEM", () => {
  it("parses several blocks, headers and CRLF", () => {
    const text =
      formatPem("A", Uint8Array.of(1, 2, 3)).replace(/\n/g, "\r\n") +
      "junk\n" +
      formatPem("B C", new Uint8Array(100), 70);
    const blocks = parsePem(text);
    expect(blocks.map((b) => b.label)).toEqual(["A", "B C"]);
    expect(blocks[1]!.body.length).toBe(100);
    const enc = parsePem(fixtureText("encrypted/pkcs1-rsa"));
    expect(enc[0]!.headers["Proc-Type"]).toBe("4,ENCRYPTED");
  });

  it("refuses unterminated blocks and mismatched labels", () => {
    expect(() => parsePem("-----BEGIN X-----\nAAAA\n")).toThrow(WireError);
    expect(() => parsePem("-----BEGIN X-----\nAAAA\n-----END Y-----\n")).toThrow(WireError);
  });
});

describe("reading private keys written by ssh-keygen and openssl", () => {
  it("has every container", () => {
    const labels = new Set(
      privateNames.map((n) =>
        parsePem(fixtureText(`keys/${n}`))
          .map((b) => b.label)
          .join("+"),
      ),
    );
    expect([...labels].sort()).toEqual(
      [
        "EC PARAMETERS+EC PRIVATE KEY",
        "EC PRIVATE KEY",
        "OPENSSH PRIVATE KEY",
        "PRIVATE KEY",
        "RSA PRIVATE KEY",
      ].sort(),
    );
  });

  it.each(privateNames)("%s imports and derives the public key ssh-keygen printed", async (name) => {
    const key = await importSigningKey(fixtureText(`keys/${name}`));
    const expected = publicKeyFixture(name);
    expect(bytesEqual(key.publicKeyBlob, expected)).toBe(true);
    expect(key.bits).toBe(publicKeyBits(decodePublicKey(expected)));
    expect(key.keyType).toBe(decodePublicKey(expected).type);
    expect(publicKeyMatches(fixtureText(`keys/${name}.pub`), key)).toBe(true);
    expect(key.publicKeyText()).toBe(`${fixtureText(`keys/${name}.pub`).split(" ").slice(0, 2).join(" ").trim()}\n`);
  });

  it("Ed25519 PKCS#8 without a public key derives it through WebCrypto", () => {
    const material = readPrivateKeyPem(fixtureText("keys/openssl-ed25519-pkcs8"));
    expect(material.kind === "ed25519" && material.publicKey).toBe(undefined);
  });

  it("a different key's public half does not match", async () => {
    const key = await importSigningKey(fixtureText("keys/ed25519"));
    expect(publicKeyMatches(fixtureText("keys/ecdsa-256.pub"), key)).toBe(false);
  });

  it.each(fixtureNames("encrypted"))("encrypted/%s is refused with ENCRYPTED_KEY", async (name) => {
    expect(await keyErrorCode(importSigningKey(fixtureText(`encrypted/${name}`)))).toBe("ENCRYPTED_KEY");
  });

  it("refuses garbage, public keys, DSA and unsupported curves with typed errors", async () => {
    expect(await keyErrorCode(importSigningKey("not a key"))).toBe("INVALID_KEY");
    expect(await keyErrorCode(importSigningKey(fixtureText("keys/ed25519.pub")))).toBe("INVALID_KEY");
    expect(
      await keyErrorCode(importSigningKey("-----BEGIN DSA PRIVATE KEY-----\nAAAA\n-----END DSA PRIVATE KEY-----\n")),
    ).toBe("UNSUPPORTED_KEY_TYPE");
    // secp256k1 (1.3.132.0.10) in a SEC1 container.
    const k1 = formatPem(
      "EC PRIVATE KEY",
      derSequence(
        derInteger(Uint8Array.of(1)),
        Uint8Array.of(4, 1, 1),
        new Uint8Array([0xa0, 7, ...derOid("1.3.132.0.10")]),
      ),
    );
    expect(await keyErrorCode(importSigningKey(k1))).toBe("UNSUPPORTED_KEY_TYPE");
  });

  it("refuses an RSA key whose primes do not multiply to the modulus", async () => {
    const m = readPrivateKeyPem(fixtureText("keys/rsa-2048-pkcs1"));
    if (m.kind !== "rsa") throw new Error("fixture");
    const broken = { ...m, q: m.p };
    expect(await keyErrorCode(() => readPrivateKeyPem(writePrivateKeyPem(broken)))).toBe("KEY_MISMATCH");
  });

  it("catches an EC private key stored with someone else's public point", async () => {
    const a = readPrivateKeyPem(fixtureText("keys/ecdsa-256-sec1"));
    const b = readPrivateKeyPem(fixtureText("keys/openssl-ec-256-pkcs8"));
    if (a.kind !== "ec" || b.kind !== "ec") throw new Error("fixture");
    const mixed = writePrivateKeyPem(a, b.point);
    const code = await keyErrorCode(importSigningKey(mixed));
    expect(["KEY_MISMATCH", "INVALID_KEY"]).toContain(code);
  });
});

/** The secret parts of a key, independent of which optional public parts a container kept. */
function secretOf(m: ReturnType<typeof readPrivateKeyPem>): unknown {
  switch (m.kind) {
    case "rsa":
      return { n: m.n, e: m.e, d: m.d, p: m.p, q: m.q, dp: m.dp, dq: m.dq, qi: m.qi };
    case "ec":
      return { curve: m.curve.name, d: m.d };
    case "ed25519":
      return { seed: m.seed };
  }
}

describe("writing private keys (decision S10) and PKCS#8 round trips", () => {
  it.each(privateNames)("%s: write → read gives the same key material", (name) => {
    const material = readPrivateKeyPem(fixtureText(`keys/${name}`));
    const pub = decodePublicKey(publicKeyFixture(name));
    const pubBytes = pub.type === "ssh-ed25519" ? pub.key : "point" in pub ? pub.point : undefined;
    const pem = writePrivateKeyPem(material, pubBytes);
    const label = parsePem(pem)[0]!.label;
    expect(label).toBe({ rsa: "RSA PRIVATE KEY", ec: "EC PRIVATE KEY", ed25519: "OPENSSH PRIVATE KEY" }[material.kind]);
    const back = readPrivateKeyPem(pem);
    expect(secretOf(back)).toEqual(secretOf(material));
    expect(secretOf(decodePkcs8(encodePkcs8(material)))).toEqual(secretOf(material));
  });

  it("PKCS#1 written by us is byte-identical to ssh-keygen -m PEM / openssl -traditional", () => {
    for (const name of ["rsa-2048-pkcs1", "openssl-rsa-2048-pkcs1"]) {
      const text = fixtureText(`keys/${name}`);
      expect(writePrivateKeyPem(readPrivateKeyPem(text))).toBe(text);
    }
  });

  it("SEC1 written by us is byte-identical to ssh-keygen -m PEM", () => {
    for (const name of ["ecdsa-256-sec1", "ecdsa-521-sec1"]) {
      const text = fixtureText(`keys/${name}`);
      expect(writePrivateKeyPem(readPrivateKeyPem(text))).toBe(text);
    }
  });
});

describe("fuzzing the private key reader", () => {
  const sources = privateNames.map((n) => parsePem(fixtureText(`keys/${n}`)));

  it("2000 mutated containers give only SshKeyError", () => {
    const rng = seededRandom(0xbadc0de);
    for (let i = 0; i < 2000; i++) {
      const blocks = sources[rng.int(sources.length)]!;
      const last = blocks[blocks.length - 1]!;
      const body = last.body.slice();
      const flips = 1 + rng.int(3);
      for (let f = 0; f < flips; f++) body[rng.int(body.length)] = rng.int(256);
      const cut = rng.int(3) === 0 ? body.subarray(0, rng.int(body.length)) : body;
      const text =
        blocks
          .slice(0, -1)
          .map((b) => formatPem(b.label, b.body))
          .join("") + formatPem(last.label, cut);
      try {
        readPrivateKeyPem(text);
      } catch (e) {
        if (!(e instanceof SshKeyError)) throw new Error(`non-SshKeyError ${String(e)} at iteration ${i}`);
      }
    }
  });
});
