/**
 * The KRL encoder (src/lib/sshwire/krl.ts) against OpenSSH: for each revocation spec, the
 * KRL `ssh-keygen -k` writes and the one we encode from the same revocations are compared
 * byte for byte where both choose the same encoding (sparse serials, long ranges, key ids,
 * keys, SHA256 hashes, several CAs, the empty KRL), and always semantically: `ssh-keygen
 * -Q -l -f` dumps both identically, and `ssh-keygen -Q -f` finds the same certificates
 * revoked. Decision B7: a missing ssh-keygen fails these tests; they never skip.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WireError } from "../../../src/lib/sshwire/errors";
import { encodeKrl, type KrlContents, krlVersionOf } from "../../../src/lib/sshwire/krl";
import { OpensshSandbox } from "../../support/openssh";
import { blobOfLine, fixtureText, seededRandom } from "../../unit/lib/support/fixtures";

let box: OpensshSandbox;

const CAS = ["ed25519", "ecdsa-256", "rsa-2048"] as const;
const caBlob = (name: string) => blobOfLine(fixtureText(`keys/${name}.pub`));

beforeAll(async () => {
  box = await OpensshSandbox.create("keyway-krl-");
  for (const ca of CAS) {
    await box.write(`ca-${ca}`, fixtureText(`keys/${ca}`));
    await box.write(`ca-${ca}.pub`, fixtureText(`keys/${ca}.pub`));
  }
  // One subject key for every certificate (a KRL entry is about the cert, not the key).
  const gen = await box.sshKeygen(["-q", "-t", "ed25519", "-N", "", "-C", "subject", "-f", "subject"]);
  expect(gen.code, gen.stderr).toBe(0);
});

afterAll(async () => {
  await box.dispose();
});

let counter = 0;

/** `ssh-keygen -k` over a spec per CA (the first creates, the rest update with -u). */
async function opensshKrl(
  version: number,
  parts: Array<{ ca?: string; spec: string | Uint8Array }>,
): Promise<Uint8Array> {
  const out = `krl-${++counter}`;
  if (parts.length === 0) {
    const r = await box.sshKeygen(["-k", "-z", String(version), "-f", out]);
    expect(r.code, r.stderr).toBe(0);
  }
  for (const [i, part] of parts.entries()) {
    const spec = await box.write(`spec-${counter}-${i}`, part.spec);
    const args = [
      "-k",
      ...(i > 0 ? ["-u"] : []),
      "-z",
      String(version),
      "-f",
      out,
      ...(part.ca ? ["-s", `ca-${part.ca}.pub`] : []),
      spec,
    ];
    const r = await box.sshKeygen(args);
    expect(r.code, r.stderr).toBe(0);
  }
  return new Uint8Array(await readFile(box.path(out)));
}

/** generated_date of a KRL (PROTOCOL.krl §1: after magic, format version and krl_version). */
function generatedDateOf(krl: Uint8Array): bigint {
  return new DataView(krl.buffer, krl.byteOffset).getBigUint64(20);
}

async function dump(krl: Uint8Array): Promise<string> {
  const file = await box.write(`dump-${++counter}`, krl);
  const r = await box.sshKeygen(["-Q", "-l", "-f", file]);
  expect(r.code, r.stderr).toBe(0);
  // The generation time is the one field that may differ.
  return r.stdout.replace(/^# Generated at .*$/m, "");
}

/** Signs a user certificate over the subject key; returns its file name. */
async function cert(ca: string, serial: bigint, keyId: string): Promise<string> {
  const name = `cert-${++counter}`;
  await box.write(`${name}.pub`, await box.read("subject.pub"));
  const r = await box.sshKeygen([
    "-q",
    "-s",
    `ca-${ca}`,
    "-I",
    keyId,
    "-z",
    serial.toString(),
    "-n",
    "u",
    `${name}.pub`,
  ]);
  expect(r.code, r.stderr).toBe(0);
  return `${name}-cert.pub`;
}

/** `ssh-keygen -Q -f krl file`: true when OpenSSH finds it revoked. */
async function revoked(krl: Uint8Array, file: string): Promise<boolean> {
  const k = await box.write(`q-${++counter}`, krl);
  const r = await box.sshKeygen(["-Q", "-f", k, file]);
  if (r.stdout.includes("REVOKED")) return true;
  expect(r.stdout, r.stderr).toContain(": ok");
  return false;
}

/** Ours, with OpenSSH's generated_date, then: same dump, and same bytes when `bytes`. */
async function compare(
  theirs: Uint8Array,
  contents: Omit<KrlContents, "generatedDate">,
  bytes: boolean,
): Promise<Uint8Array> {
  const ours = encodeKrl({ ...contents, generatedDate: generatedDateOf(theirs) });
  expect(await dump(ours)).toBe(await dump(theirs));
  if (bytes) expect(Buffer.from(ours).toString("hex")).toBe(Buffer.from(theirs).toString("hex"));
  return ours;
}

describe("KRL encoder against ssh-keygen -k", () => {
  it("the empty KRL, byte for byte", async () => {
    const theirs = await opensshKrl(0, []);
    await compare(theirs, { krlVersion: 0n }, true);
    const v = await opensshKrl(42, []);
    const ours = await compare(v, { krlVersion: 42n }, true);
    expect(krlVersionOf(ours)).toBe(42n);
  });

  it("many sparse random 64-bit serials (one list section), byte for byte and by ssh-keygen -Q", async () => {
    const rnd = seededRandom(18);
    const serials: bigint[] = [];
    for (let i = 0; i < 300; i++) {
      const hi = BigInt(rnd.int(0x100000000));
      const lo = BigInt(rnd.int(0x100000000));
      serials.push((hi << 32n) | lo || 1n);
    }
    const theirs = await opensshKrl(3, [{ ca: "ed25519", spec: serials.map((s) => `serial: ${s}\n`).join("") }]);
    const ours = await compare(
      theirs,
      { krlVersion: 3n, certificates: [{ caKey: caBlob("ed25519"), serials: serials.map((s) => ({ lo: s, hi: s })) }] },
      true,
    );
    expect(await revoked(ours, await cert("ed25519", serials[7]!, "x"))).toBe(true);
    expect(await revoked(ours, await cert("ed25519", serials[299]!, "x"))).toBe(true);
    expect(await revoked(ours, await cert("ed25519", serials[7]! ^ 1n, "x"))).toBe(false);
    expect(await revoked(ours, await cert("ecdsa-256", serials[7]!, "x"))).toBe(false);
  });

  it("wide ranges between single serials, byte for byte; short runs semantically", async () => {
    const spec = [
      "serial: 1",
      "serial: 1000-5000",
      "serial: 0x7fff000000000000-0x7fff0000ffffffff",
      "serial: 18446744073709551615",
      "serial: 900000000000",
    ];
    const ranges = [
      { lo: 1n, hi: 1n },
      { lo: 1000n, hi: 5000n },
      { lo: 0x7fff000000000000n, hi: 0x7fff0000ffffffffn },
      { lo: 18446744073709551615n, hi: 18446744073709551615n },
      { lo: 900000000000n, hi: 900000000000n },
    ];
    const theirs = await opensshKrl(9, [{ ca: "ecdsa-256", spec: spec.map((l) => `${l}\n`).join("") }]);
    const ours = await compare(
      theirs,
      { krlVersion: 9n, certificates: [{ caKey: caBlob("ecdsa-256"), serials: ranges }] },
      true,
    );
    for (const [serial, expected] of [
      [999n, false],
      [1000n, true],
      [3333n, true],
      [5000n, true],
      [5001n, false],
      [0x7fff00000000abcdn, true],
      [0x7fff000100000000n, false],
      [18446744073709551615n, true],
    ] as const) {
      expect(await revoked(ours, await cert("ecdsa-256", serial, "x")), String(serial)).toBe(expected);
    }

    // Runs of 2..60 serials: OpenSSH writes bitmaps, we write lists and ranges; same meaning.
    const short = [
      { lo: 10n, hi: 11n },
      { lo: 20n, hi: 40n },
      { lo: 42n, hi: 42n },
      { lo: 41n, hi: 41n },
      { lo: 100n, hi: 102n },
    ];
    const theirsShort = await opensshKrl(10, [
      { ca: "ecdsa-256", spec: "serial: 10-11\nserial: 20-40\nserial: 42\nserial: 41\nserial: 100-102\n" },
    ]);
    const oursShort = await compare(
      theirsShort,
      { krlVersion: 10n, certificates: [{ caKey: caBlob("ecdsa-256"), serials: short }] },
      false,
    );
    expect(await revoked(oursShort, await cert("ecdsa-256", 42n, "x"))).toBe(true);
    expect(await revoked(oursShort, await cert("ecdsa-256", 43n, "x"))).toBe(false);
  });

  it("key ids with odd bytes, byte for byte", async () => {
    const ids: Array<string | Uint8Array> = [
      "alice@example.com",
      "vault-token-4f2a9b7c 'quoted' \"double\" back\\slash",
      "ünïcødé ✓ 🔑",
      "tab\tinside",
      "%s %n $HOME `id` ;|&",
      "Z",
      "a",
      Uint8Array.of(0xff, 0xfe, 0x80, 0x41),
      "x".repeat(1024),
    ];
    const spec = Buffer.concat(
      ids.map((id) => Buffer.concat([Buffer.from("id: "), Buffer.from(id), Buffer.from("\n")])),
    );
    const theirs = await opensshKrl(5, [{ ca: "rsa-2048", spec }]);
    const ours = await compare(
      theirs,
      { krlVersion: 5n, certificates: [{ caKey: caBlob("rsa-2048"), keyIds: ids }] },
      true,
    );
    expect(await revoked(ours, await cert("rsa-2048", 77n, "ünïcødé ✓ 🔑"))).toBe(true);
    expect(await revoked(ours, await cert("rsa-2048", 77n, "%s %n $HOME `id` ;|&"))).toBe(true);
    expect(await revoked(ours, await cert("rsa-2048", 77n, "alice@example.co"))).toBe(false);
    expect(await revoked(ours, await cert("ed25519", 77n, "alice@example.com"))).toBe(false);
  });

  it("several CAs, each with serials and key ids, plus explicit keys and SHA256 hashes, byte for byte", async () => {
    const keyA = fixtureText("keys/ecdsa-384.pub").trim();
    const keyB = fixtureText("keys/ed25519.pub").trim();
    const keyC = fixtureText("keys/ecdsa-521.pub").trim();
    const keyD = fixtureText("keys/rsa-2048.pub").trim();
    const theirs = await opensshKrl(77, [
      { ca: "ed25519", spec: "serial: 5\nserial: 123456789\nid: deploy\n" },
      { ca: "rsa-2048", spec: `serial: 5\nid: deploy\nid: bob\nkey: ${keyA}\nkey: ${keyB}\n` },
      { ca: "ecdsa-256", spec: `serial: 40000-90000\nsha256: ${keyC}\nsha256: ${keyD}\n` },
    ]);
    const sha = (line: string) => new Uint8Array(createHash("sha256").update(blobOfLine(line)).digest());
    const ours = await compare(
      theirs,
      {
        krlVersion: 77n,
        certificates: [
          {
            caKey: caBlob("ed25519"),
            serials: [
              { lo: 123456789n, hi: 123456789n },
              { lo: 5n, hi: 5n },
            ],
            keyIds: ["deploy"],
          },
          { caKey: caBlob("rsa-2048"), serials: [{ lo: 5n, hi: 5n }], keyIds: ["deploy", "bob", "deploy"] },
          { caKey: caBlob("ecdsa-256"), serials: [{ lo: 40000n, hi: 90000n }] },
        ],
        explicitKeys: [blobOfLine(keyB), blobOfLine(keyA)],
        sha256Fingerprints: [sha(keyD), sha(keyC)],
      },
      true,
    );
    expect(await revoked(ours, await cert("rsa-2048", 9n, "bob"))).toBe(true);
    expect(await revoked(ours, await cert("ecdsa-256", 9n, "bob"))).toBe(false);
    expect(await revoked(ours, await cert("ecdsa-256", 50000n, "y"))).toBe(true);
    for (const name of ["ecdsa-384", "ed25519", "ecdsa-521", "rsa-2048"]) {
      await box.write(`plain-${name}.pub`, fixtureText(`keys/${name}.pub`));
      expect(await revoked(ours, `plain-${name}.pub`), name).toBe(true);
    }
    await box.write("plain-ecdsa-256.pub", fixtureText("keys/ecdsa-256.pub"));
    expect(await revoked(ours, "plain-ecdsa-256.pub")).toBe(false);
  });

  it("refuses what OpenSSH would refuse or misread", () => {
    const base = { krlVersion: 1n, generatedDate: 1n };
    const ca = caBlob("ed25519");
    const bad: KrlContents[] = [
      { ...base, certificates: [{ caKey: ca, serials: [{ lo: 0n, hi: 0n }] }] },
      { ...base, certificates: [{ caKey: ca, serials: [{ lo: 5n, hi: 4n }] }] },
      { ...base, certificates: [{ caKey: ca, serials: [{ lo: 1n, hi: 1n << 64n }] }] },
      { ...base, certificates: [{ caKey: ca, keyIds: ["a\0b"] }] },
      { ...base, certificates: [{ caKey: ca, keyIds: [""] }] },
      { ...base, certificates: [{ caKey: new Uint8Array(0), keyIds: ["a"] }] },
      { ...base, certificates: [{ caKey: ca }, { caKey: ca }] },
      { ...base, explicitKeys: [blobOfLine(fixtureText("certs/user-ed25519-by-ed25519-cert.pub"))] },
      { ...base, sha256Fingerprints: [new Uint8Array(20)] },
      { ...base, krlVersion: -1n },
    ];
    for (const krl of bad) expect(() => encodeKrl(krl)).toThrow(WireError);
  });
});
