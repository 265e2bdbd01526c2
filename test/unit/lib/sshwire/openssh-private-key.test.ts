import { describe, expect, it } from "vitest";
import { bytesEqual } from "../../../../src/lib/bytes";
import { parsePem } from "../../../../src/lib/crypto/pem";
import { WireError } from "../../../../src/lib/sshwire/errors";
import { decodeOpensshPrivateKey, encodeOpensshPrivateKey } from "../../../../src/lib/sshwire/openssh-private-key";
import { fixtureText, publicKeyFixture } from "../support/fixtures";

const OPENSSH_KEYS = ["rsa-2048", "rsa-3072", "rsa-4096", "ecdsa-256", "ecdsa-384", "ecdsa-521", "ed25519"];

function binaryOf(relative: string): Uint8Array {
  const blocks = parsePem(fixtureText(relative));
  expect(blocks[0]!.label).toBe("OPENSSH PRIVATE KEY");
  return blocks[0]!.body;
}

function wireCode(fn: () => unknown): string {
  try {
    fn();
    return "ok";
  } catch (e) {
    if (!(e instanceof WireError)) throw e;
    return e.code;
  }
}

describe("openssh-key-v1 (PROTOCOL.key)", () => {
  it.each(OPENSSH_KEYS)("%s from ssh-keygen decodes and re-encodes byte-identically", (name) => {
    const bin = binaryOf(`keys/${name}`);
    const decoded = decodeOpensshPrivateKey(bin);
    expect(decoded.comment).toBe(`${name}@keyway-fixture`);
    expect(bytesEqual(decoded.publicKeyBlob, publicKeyFixture(name))).toBe(true);
    const again = encodeOpensshPrivateKey(decoded.key, decoded.comment, decoded.checkInt);
    expect(bytesEqual(again, bin)).toBe(true);
  });

  it("refuses an encrypted key with ENCRYPTED", () => {
    expect(wireCode(() => decodeOpensshPrivateKey(binaryOf("encrypted/openssh-ed25519")))).toBe("ENCRYPTED");
  });

  it("pads with 1, 2, 3… to a multiple of 8 and uses equal random check ints", () => {
    const { key } = decodeOpensshPrivateKey(binaryOf("keys/ed25519"));
    const a = encodeOpensshPrivateKey(key, "");
    const b = encodeOpensshPrivateKey(key, "");
    expect(bytesEqual(a, b)).toBe(false); // random check ints
    expect(decodeOpensshPrivateKey(a).comment).toBe("");
  });

  it("refuses differing check ints, bad padding, a mismatched public key and truncation", () => {
    const bin = binaryOf("keys/ed25519");
    const { key } = decodeOpensshPrivateKey(bin);
    const good = encodeOpensshPrivateKey(key, "c", 0x11223344);
    // Private section starts after magic(15) + 3 strings ("none","none","") + uint32 + pub string + uint32 length.
    const pubLen = publicKeyFixture("ed25519").length;
    const sectionStart = 15 + 8 + 8 + 4 + 4 + 4 + pubLen + 4;
    const badCheck = good.slice();
    badCheck[sectionStart] = 0x99;
    expect(wireCode(() => decodeOpensshPrivateKey(badCheck))).toBe("INVALID_VALUE");
    const badPad = good.slice();
    badPad[badPad.length - 1] = 0x7f;
    expect(wireCode(() => decodeOpensshPrivateKey(badPad))).toBe("INVALID_VALUE");
    for (let i = 0; i < good.length; i++) {
      const c = wireCode(() => decodeOpensshPrivateKey(good.subarray(0, i)));
      if (c !== "EOF") throw new Error(`offset ${i}: ${c}`);
    }
  });

  it("refuses a private half that does not belong to the stored public key", () => {
    const { key } = decodeOpensshPrivateKey(binaryOf("keys/ed25519"));
    if (key.type !== "ssh-ed25519") throw new Error("fixture type");
    const otherPub = key.publicKey.slice();
    otherPub[0] = otherPub[0]! ^ 1;
    // sk = seed || pk must agree with pk; change both and the public blob stays the original.
    const mixed = encodeOpensshPrivateKey({ ...key, publicKey: otherPub }, "");
    const original = encodeOpensshPrivateKey(key, "");
    // Splice the original public key blob into the mixed container.
    const pubLen = publicKeyFixture("ed25519").length;
    const pubAt = 15 + 8 + 8 + 4 + 4 + 4;
    const spliced = mixed.slice();
    spliced.set(original.subarray(pubAt, pubAt + pubLen), pubAt);
    expect(wireCode(() => decodeOpensshPrivateKey(spliced))).toBe("KEY_TYPE_MISMATCH");
  });
});
