/**
 * Seeded fuzzing: random and mutated inputs must never make a decoder throw anything but
 * WireError. Seeds are fixed so failures reproduce.
 */
import { describe, expect, it } from "vitest";
import { parsePem } from "../../../../src/lib/crypto/pem";
import { decodeCertificate } from "../../../../src/lib/sshwire/certificate";
import { WireError } from "../../../../src/lib/sshwire/errors";
import { EC_CURVES } from "../../../../src/lib/sshwire/key-types";
import { decodeOpensshPrivateKey } from "../../../../src/lib/sshwire/openssh-private-key";
import { decodePublicKey, parsePublicKeyText } from "../../../../src/lib/sshwire/public-key";
import { decodeSignature, ecdsaSignatureToP1363 } from "../../../../src/lib/sshwire/signature";
import { SshWriter } from "../../../../src/lib/sshwire/writer";
import { certificateFixture, fixtureNames, fixtureText, publicKeyFixture, seededRandom } from "../support/fixtures";

type Decoder = (b: Uint8Array) => unknown;

const DECODERS: Record<string, Decoder> = {
  decodePublicKey,
  decodeCertificate,
  decodeOpensshPrivateKey,
  decodeSignature,
  ecdsaP256: (b) => ecdsaSignatureToP1363(EC_CURVES.nistp256, b),
  parsePublicKeyText: (b) => parsePublicKeyText(`ssh-ed25519 ${Buffer.from(b).toString("base64")}`),
};

/** Runs `fn`; returns the WireError code, "ok", or rethrows anything that is not a WireError. */
function outcome(fn: () => unknown, describeInput: () => string): string {
  try {
    fn();
    return "ok";
  } catch (e) {
    if (e instanceof WireError) return e.code;
    throw new Error(`non-WireError ${String(e)} for ${describeInput()}`);
  }
}

const corpus: Uint8Array[] = [
  ...fixtureNames("certs", /-cert\.pub$/).map(certificateFixture),
  ...fixtureNames("keys", /\.pub$/).map((f) => publicKeyFixture(f.slice(0, -4))),
  ...["rsa-2048", "ecdsa-256", "ed25519"].map((n) => parsePem(fixtureText(`keys/${n}`))[0]!.body),
];

/** Mutations that keep most structure: byte flips, length-field edits, splices, duplication. */
function mutate(rng: ReturnType<typeof seededRandom>, input: Uint8Array): Uint8Array {
  const b = input.slice();
  switch (rng.int(6)) {
    case 0: {
      const n = 1 + rng.int(4);
      for (let i = 0; i < n; i++) b[rng.int(b.length)] = rng.int(256);
      return b;
    }
    case 1: {
      // Overwrite a plausible length field with a small or huge value.
      const at = rng.int(Math.max(1, b.length - 4));
      const values = [0, 1, 0x7fffffff, 0xffffffff, rng.int(b.length + 8)];
      const v = values[rng.int(values.length)]!;
      new DataView(b.buffer).setUint32(at, v >>> 0);
      return b;
    }
    case 2:
      return b.subarray(0, rng.int(b.length));
    case 3: {
      const at = rng.int(b.length);
      return new Uint8Array([...b.subarray(0, at), ...rng.bytes(1 + rng.int(8)), ...b.subarray(at)]);
    }
    case 4: {
      const at = rng.int(b.length);
      const len = rng.int(Math.min(16, b.length - at));
      return new Uint8Array([...b.subarray(0, at), ...b.subarray(at + len)]);
    }
    default: {
      const at = rng.int(b.length);
      return new Uint8Array([...b.subarray(0, at), ...b.subarray(at, at + 16), ...b.subarray(at)]);
    }
  }
}

describe("fuzzing the wire decoders", () => {
  it.each(Object.keys(DECODERS))("%s: 3000 random inputs give only WireError", (name) => {
    const decode = DECODERS[name]!;
    const rng = seededRandom(0x5eed0000 + name.length);
    const codes = new Map<string, number>();
    for (let i = 0; i < 3000; i++) {
      const input = i % 3 === 0 ? rng.bytes(rng.int(64)) : prefixWithType(rng, rng.bytes(rng.int(400)));
      const c = outcome(
        () => decode(input),
        () => Buffer.from(input).toString("hex"),
      );
      codes.set(c, (codes.get(c) ?? 0) + 1);
    }
    expect([...codes.keys()].every((c) => c === "ok" || /^[A-Z_0-9]+$/.test(c))).toBe(true);
  });

  it.each(Object.keys(DECODERS))("%s: 4000 mutated valid blobs give only WireError", (name) => {
    const decode = DECODERS[name]!;
    const rng = seededRandom(0xc0ffee + name.length);
    for (let i = 0; i < 4000; i++) {
      const base = corpus[rng.int(corpus.length)]!;
      let input = mutate(rng, base);
      if (rng.int(4) === 0) input = mutate(rng, input);
      outcome(
        () => decode(input),
        () => Buffer.from(input).toString("hex"),
      );
    }
  });
});

/** Random bodies behind a real type name reach deeper into the decoders. */
function prefixWithType(rng: ReturnType<typeof seededRandom>, body: Uint8Array): Uint8Array {
  const names = [
    "ssh-rsa",
    "ssh-dss",
    "ecdsa-sha2-nistp256",
    "ssh-ed25519",
    "sk-ecdsa-sha2-nistp256@openssh.com",
    "ssh-ed25519-cert-v01@openssh.com",
    "ssh-rsa-cert-v01@openssh.com",
    "ecdsa-sha2-nistp521-cert-v01@openssh.com",
  ];
  const w = new SshWriter().writeText(names[rng.int(names.length)]!);
  if (rng.int(2) === 0) w.writeString(rng.bytes(32));
  return new Uint8Array([...w.finish(), ...body]);
}
