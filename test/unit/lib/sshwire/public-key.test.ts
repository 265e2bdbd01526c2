import { createHash } from "node:crypto";
import { p256 } from "@noble/curves/nist.js";
import { describe, expect, it } from "vitest";
import { bytesEqual, toBase64 } from "../../../../src/lib/bytes";
import { WireError } from "../../../../src/lib/sshwire/errors";
import { EC_CURVES } from "../../../../src/lib/sshwire/key-types";
import {
  decodePublicKey,
  encodePublicKey,
  formatPublicKeyText,
  parsePublicKeyText,
  publicKeyBits,
} from "../../../../src/lib/sshwire/public-key";
import { SshWriter } from "../../../../src/lib/sshwire/writer";
import { fixtureNames, fixtureText, publicKeyFixture } from "../support/fixtures";

/** Expected type and bits of every public key fixture. */
const EXPECTED: Record<string, [string, number]> = {
  "rsa-2048": ["ssh-rsa", 2048],
  "rsa-3072": ["ssh-rsa", 3072],
  "rsa-4096": ["ssh-rsa", 4096],
  "rsa-2048-pkcs1": ["ssh-rsa", 2048],
  "rsa-3072-pkcs8": ["ssh-rsa", 3072],
  "openssl-rsa-2048-pkcs1": ["ssh-rsa", 2048],
  "openssl-rsa-2048-pkcs8": ["ssh-rsa", 2048],
  "ecdsa-256": ["ecdsa-sha2-nistp256", 256],
  "ecdsa-384": ["ecdsa-sha2-nistp384", 384],
  "ecdsa-521": ["ecdsa-sha2-nistp521", 521],
  "ecdsa-256-sec1": ["ecdsa-sha2-nistp256", 256],
  "ecdsa-384-pkcs8": ["ecdsa-sha2-nistp384", 384],
  "ecdsa-521-sec1": ["ecdsa-sha2-nistp521", 521],
  "openssl-ec-256-pkcs8": ["ecdsa-sha2-nistp256", 256],
  "openssl-ec-256-sec1-params": ["ecdsa-sha2-nistp256", 256],
  "openssl-ec-384-sec1": ["ecdsa-sha2-nistp384", 384],
  "openssl-ec-521-pkcs8": ["ecdsa-sha2-nistp521", 521],
  ed25519: ["ssh-ed25519", 256],
  "openssl-ed25519-pkcs8": ["ssh-ed25519", 256],
  "sk-ecdsa": ["sk-ecdsa-sha2-nistp256@openssh.com", 256],
  "sk-ed25519": ["sk-ssh-ed25519@openssh.com", 256],
  "dsa-1024": ["ssh-dss", 1024],
};

const pubNames = fixtureNames("keys", /\.pub$/).map((f) => f.slice(0, -4));

describe("public key fixtures", () => {
  it("covers every fixture with an expectation", () => {
    expect(pubNames.sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(pubNames)("%s parses with the right type and size, and re-encodes byte-identically", (name) => {
    const blob = publicKeyFixture(name);
    const key = decodePublicKey(blob);
    const [type, bits] = EXPECTED[name]!;
    expect(key.type).toBe(type);
    expect(publicKeyBits(key)).toBe(bits);
    expect(bytesEqual(encodePublicKey(key), blob)).toBe(true);
    // The authorized_keys line reads back to the same blob, comment included.
    const line = fixtureText(`keys/${name}.pub`).trim();
    const parsed = parsePublicKeyText(line);
    expect(bytesEqual(parsed.blob, blob)).toBe(true);
    expect(parsed.label).toBe(type);
    expect(formatPublicKeyText(blob, parsed.comment)).toBe(line);
  });

  it("sk keys carry the application string", () => {
    const k = decodePublicKey(publicKeyFixture("sk-ecdsa"));
    expect(k.type === "sk-ecdsa-sha2-nistp256@openssh.com" && k.application).toBe("ssh:");
    const e = decodePublicKey(publicKeyFixture("sk-ed25519"));
    expect(e.type === "sk-ssh-ed25519@openssh.com" && e.application).toBe("ssh:");
  });
});

describe("parsePublicKeyText (Vault's path_issue_sign.go)", () => {
  const line = fixtureText("keys/ed25519.pub");
  const b64 = line.split(" ")[1]!;

  it("accepts a bare base64 blob, with or without a trailing newline", () => {
    expect(parsePublicKeyText(b64).key.type).toBe("ssh-ed25519");
    expect(parsePublicKeyText(`${b64}\n`).key.type).toBe("ssh-ed25519");
    expect(parsePublicKeyText(`${b64}\r\n`).key.type).toBe("ssh-ed25519");
  });

  it("trusts the blob, not the label (as Vault does)", () => {
    expect(parsePublicKeyText(`ssh-rsa ${b64}`).key.type).toBe("ssh-ed25519");
  });

  it("keeps the comment and ignores the newline", () => {
    expect(parsePublicKeyText(line).comment).toBe("ed25519@keyway-fixture");
  });

  it("refuses bad base64, double spaces and empty input with WireError", () => {
    for (const bad of ["", "ssh-ed25519 !!!!", `ssh-ed25519  ${b64}`, "ssh-ed25519"]) {
      expect(() => parsePublicKeyText(bad)).toThrow(WireError);
    }
  });

  it("recognises certificates (decision S17)", () => {
    const cert = fixtureText("certs/user-ed25519-by-ed25519-cert.pub");
    try {
      parsePublicKeyText(cert);
      throw new Error("expected failure");
    } catch (e) {
      expect(e).toBeInstanceOf(WireError);
      expect((e as WireError).code).toBe("CERTIFICATE");
      expect((e as WireError).message).toBe("certificates cannot be signed");
    }
  });
});

describe("strict decoding", () => {
  const code = (blob: Uint8Array): string => {
    try {
      decodePublicKey(blob);
      return "ok";
    } catch (e) {
      if (!(e instanceof WireError)) throw e;
      return e.code;
    }
  };

  it("refuses trailing bytes", () => {
    const blob = publicKeyFixture("ed25519");
    const longer = new Uint8Array(blob.length + 1);
    longer.set(blob);
    expect(code(longer)).toBe("TRAILING_DATA");
  });

  it("refuses unknown key types", () => {
    expect(code(new SshWriter().writeText("ssh-foo").finish())).toBe("UNKNOWN_KEY_TYPE");
  });

  it("refuses an EC point off the curve, of the wrong size or compressed", () => {
    const good = p256.getPublicKey(p256.utils.randomSecretKey(), false);
    const mk = (point: Uint8Array, curve = "nistp256") =>
      new SshWriter().writeText("ecdsa-sha2-nistp256").writeText(curve).writeString(point).finish();
    expect(code(mk(good))).toBe("ok");
    const off = good.slice();
    off[64] = off[64]! ^ 1;
    expect(code(mk(off))).toBe("INVALID_POINT");
    expect(code(mk(p256.getPublicKey(p256.utils.randomSecretKey(), true)))).toBe("INVALID_POINT");
    expect(code(mk(good.subarray(0, 64)))).toBe("INVALID_POINT");
    expect(code(mk(good, "nistp384"))).toBe("KEY_TYPE_MISMATCH");
    // Coordinates ≥ p are refused even if they would reduce to a point on the curve.
    const { p } = EC_CURVES.nistp256;
    const big = new Uint8Array(65);
    big[0] = 4;
    big.set(Uint8Array.from(Buffer.from(p.toString(16), "hex")), 1);
    expect(code(mk(big))).toBe("INVALID_POINT");
  });

  it("refuses non-minimal RSA mpints and even exponents", () => {
    const n = Uint8Array.from([0x00, 0x00, 0xc5]);
    const blob = new SshWriter()
      .writeText("ssh-rsa")
      .writeString(Uint8Array.of(1, 0, 1))
      .writeString(n)
      .finish();
    expect(code(blob)).toBe("NON_MINIMAL_MPINT");
    const even = new SshWriter()
      .writeText("ssh-rsa")
      .writeMpint(Uint8Array.of(4))
      .writeMpint(Uint8Array.of(0xc5))
      .finish();
    expect(code(even)).toBe("INVALID_VALUE");
  });

  it("refuses ed25519 keys of the wrong length", () => {
    expect(code(new SshWriter().writeText("ssh-ed25519").writeString(new Uint8Array(31)).finish())).toBe(
      "INVALID_VALUE",
    );
  });

  it("decision S7 hash input: the fixture blob is what sha256 is taken over", () => {
    const blob = publicKeyFixture("ed25519");
    const fp = createHash("sha256").update(blob).digest("base64").replace(/=+$/, "");
    expect(fp.length).toBe(43);
    expect(toBase64(blob).startsWith("AAAAC3NzaC1lZDI1NTE5")).toBe(true);
  });
});

describe("curve constants", () => {
  it("match @noble/curves (FIPS 186-4 D.1.2)", async () => {
    const { p256: a, p384: b, p521: c } = await import("@noble/curves/nist.js");
    for (const [ours, theirs] of [
      [EC_CURVES.nistp256, a],
      [EC_CURVES.nistp384, b],
      [EC_CURVES.nistp521, c],
    ] as const) {
      const curve = theirs.Point.CURVE();
      expect([ours.p, ours.n, ours.b]).toEqual([curve.p, curve.n, curve.b]);
    }
  });
});
