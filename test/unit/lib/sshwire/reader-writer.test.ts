import { describe, expect, it } from "vitest";
import { fromHex, toHex } from "../../../../src/lib/bytes";
import { WireError } from "../../../../src/lib/sshwire/errors";
import { mpintMagnitude, SshReader } from "../../../../src/lib/sshwire/reader";
import { bigIntToBytes, bitLength, bytesToBigInt, mpintEncode, SshWriter } from "../../../../src/lib/sshwire/writer";

function wireError(fn: () => unknown): WireError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(WireError);
    return e as WireError;
  }
  throw new Error("expected a WireError");
}

describe("RFC 4251 §5 mpint", () => {
  // The examples of RFC 4251 §5.
  const examples: Array<[string, string]> = [
    ["", "00000000"],
    ["09a378f9b2e332a7", "0000000809a378f9b2e332a7"],
    ["80", "000000020080"],
  ];
  it.each(examples)("encodes magnitude %s as %s", (magnitude, wire) => {
    expect(toHex(new SshWriter().writeMpint(fromHex(magnitude)).finish())).toBe(wire);
    expect(toHex(new SshReader(fromHex(wire)).readMpint())).toBe(magnitude);
  });

  it("strips leading zero bytes before encoding (minimal)", () => {
    expect(toHex(mpintEncode(fromHex("000000ff")))).toBe("00ff");
    expect(toHex(mpintEncode(fromHex("00007f")))).toBe("7f");
    expect(toHex(mpintEncode(fromHex("0000")))).toBe("");
  });

  it("refuses non-minimal and negative encodings", () => {
    expect(wireError(() => mpintMagnitude(fromHex("00"), "x")).code).toBe("NON_MINIMAL_MPINT");
    expect(wireError(() => mpintMagnitude(fromHex("007f"), "x")).code).toBe("NON_MINIMAL_MPINT");
    expect(wireError(() => mpintMagnitude(fromHex("0000ff"), "x")).code).toBe("NON_MINIMAL_MPINT");
    expect(wireError(() => mpintMagnitude(fromHex("ff"), "x")).code).toBe("NEGATIVE_MPINT");
    expect(wireError(() => mpintMagnitude(fromHex("80"), "x")).code).toBe("NEGATIVE_MPINT");
  });
});

describe("SshReader", () => {
  it("reads every integer width big-endian", () => {
    const w = new SshWriter()
      .writeByte(7)
      .writeUint32(0xdeadbeef)
      .writeUint64(0xfedcba9876543210n)
      .writeUint64((1n << 64n) - 1n);
    const r = new SshReader(w.finish());
    expect(r.readByte()).toBe(7);
    expect(r.readUint32()).toBe(0xdeadbeef);
    expect(r.readUint64()).toBe(0xfedcba9876543210n);
    expect(r.readUint64()).toBe((1n << 64n) - 1n);
    r.expectEnd();
  });

  it("bounds-checks every read with EOF", () => {
    expect(wireError(() => new SshReader(new Uint8Array(3)).readUint32()).code).toBe("EOF");
    expect(wireError(() => new SshReader(new Uint8Array(7)).readUint64()).code).toBe("EOF");
    expect(wireError(() => new SshReader(fromHex("0000000561")).readString()).code).toBe("EOF");
    // A length near 2^32 must not allocate or wrap.
    expect(wireError(() => new SshReader(fromHex("ffffffff00")).readString()).code).toBe("EOF");
    expect(wireError(() => new SshReader(new Uint8Array(0)).readByte()).code).toBe("EOF");
  });

  it("sub-readers must end exactly", () => {
    const inner = new SshWriter().writeText("a").writeByte(1).finish();
    const r = new SshReader(new SshWriter().writeString(inner).finish());
    const sub = r.subReader("list");
    expect(sub.readText()).toBe("a");
    expect(wireError(() => sub.expectEnd()).code).toBe("TRAILING_DATA");
  });

  it("refuses invalid UTF-8 and keeps a BOM", () => {
    expect(wireError(() => new SshReader(fromHex("00000001ff")).readText()).code).toBe("INVALID_UTF8");
    const bom = new SshWriter().writeText("\uFEFFx").finish();
    expect(new SshReader(bom).readText()).toBe("\uFEFFx");
  });
});

describe("SshWriter", () => {
  it("refuses values the format cannot hold", () => {
    expect(wireError(() => new SshWriter().writeUint64(-1n)).code).toBe("INVALID_VALUE");
    expect(wireError(() => new SshWriter().writeUint64(1n << 64n)).code).toBe("INVALID_VALUE");
    expect(wireError(() => new SshWriter().writeUint32(2 ** 32)).code).toBe("INVALID_VALUE");
    expect(wireError(() => new SshWriter().writeByte(256)).code).toBe("INVALID_VALUE");
  });

  it("grows past its initial buffer", () => {
    const big = new Uint8Array(10_000).fill(1);
    const out = new SshWriter().writeString(big).writeString(big).finish();
    expect(out.length).toBe(20_008);
  });

  it("bigint helpers round-trip", () => {
    for (const v of [0n, 1n, 255n, 256n, (1n << 521n) - 1n]) expect(bytesToBigInt(bigIntToBytes(v))).toBe(v);
    expect(bitLength(fromHex("0001ff"))).toBe(9);
    expect(bitLength(fromHex("0000"))).toBe(0);
  });
});
