/**
 * Writer for the SSH binary encodings of RFC 4251 §5. Growable buffer; `finish()` returns the
 * bytes written. Writers refuse values the format cannot hold (negative or too-large integers)
 * with {@link WireError} `INVALID_VALUE`.
 */

import { utf8 } from "../bytes";
import { WireError } from "./errors";

const UINT64_MAX = (1n << 64n) - 1n;

/** Appends SSH wire-format fields to a growing buffer. */
export class SshWriter {
  private buf = new Uint8Array(256);
  private len = 0;

  private ensure(extra: number): void {
    if (this.len + extra <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.len + extra) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }

  /** Number of bytes written so far. */
  get length(): number {
    return this.len;
  }

  /** RFC 4251 §5 byte. */
  writeByte(value: number): this {
    if (!Number.isInteger(value) || value < 0 || value > 0xff)
      throw new WireError("INVALID_VALUE", `byte out of range: ${value}`);
    this.ensure(1);
    this.buf[this.len++] = value;
    return this;
  }

  /** RFC 4251 §5 uint32, big-endian. */
  writeUint32(value: number): this {
    if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) {
      throw new WireError("INVALID_VALUE", `uint32 out of range: ${value}`);
    }
    this.ensure(4);
    this.buf[this.len++] = (value >>> 24) & 0xff;
    this.buf[this.len++] = (value >>> 16) & 0xff;
    this.buf[this.len++] = (value >>> 8) & 0xff;
    this.buf[this.len++] = value & 0xff;
    return this;
  }

  /** RFC 4251 §5 uint64, big-endian, from a bigint in [0, 2^64). */
  writeUint64(value: bigint): this {
    if (typeof value !== "bigint" || value < 0n || value > UINT64_MAX) {
      throw new WireError("INVALID_VALUE", `uint64 out of range: ${String(value)}`);
    }
    this.writeUint32(Number(value >> 32n));
    this.writeUint32(Number(value & 0xffffffffn));
    return this;
  }

  /** Raw bytes, no length prefix. */
  writeRaw(bytes: Uint8Array): this {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.len);
    this.len += bytes.length;
    return this;
  }

  /** RFC 4251 §5 string: uint32 length then the bytes. */
  writeString(bytes: Uint8Array): this {
    this.writeUint32(bytes.length);
    return this.writeRaw(bytes);
  }

  /** RFC 4251 §5 string holding UTF-8 text. */
  writeText(text: string): this {
    return this.writeString(utf8(text));
  }

  /**
   * RFC 4251 §5 mpint from a non-negative big-endian magnitude: leading zero bytes stripped,
   * then one 0x00 prepended if the high bit is set; zero is the empty string.
   */
  writeMpint(magnitude: Uint8Array): this {
    return this.writeString(mpintEncode(magnitude));
  }

  /** Returns a copy of the bytes written. */
  finish(): Uint8Array {
    return this.buf.slice(0, this.len);
  }
}

/**
 * RFC 4251 §5 mpint body for a non-negative big-endian magnitude (minimal two's complement).
 */
export function mpintEncode(magnitude: Uint8Array): Uint8Array {
  let start = 0;
  while (start < magnitude.length && magnitude[start] === 0) start++;
  if (start === magnitude.length) return new Uint8Array(0);
  const body = magnitude.subarray(start);
  if (body[0]! & 0x80) {
    const out = new Uint8Array(body.length + 1);
    out.set(body, 1);
    return out;
  }
  return body.slice();
}

/** Strips leading zero bytes of a big-endian magnitude (a copy). */
export function stripLeadingZeros(magnitude: Uint8Array): Uint8Array {
  let start = 0;
  while (start < magnitude.length && magnitude[start] === 0) start++;
  return magnitude.slice(start);
}

/** Left-pads (or checks) a big-endian magnitude to exactly `size` bytes. */
export function padMagnitude(magnitude: Uint8Array, size: number, what: string): Uint8Array {
  const m = stripLeadingZeros(magnitude);
  if (m.length > size) throw new WireError("INVALID_VALUE", `${what} is longer than ${size} bytes`);
  const out = new Uint8Array(size);
  out.set(m, size - m.length);
  return out;
}

/** Number of significant bits of a big-endian magnitude. */
export function bitLength(magnitude: Uint8Array): number {
  let i = 0;
  while (i < magnitude.length && magnitude[i] === 0) i++;
  if (i === magnitude.length) return 0;
  return (magnitude.length - i - 1) * 8 + (32 - Math.clz32(magnitude[i]!));
}

/** Big-endian magnitude → bigint. */
export function bytesToBigInt(bytes: Uint8Array): bigint {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  return n;
}

/** Non-negative bigint → minimal big-endian magnitude (zero is empty). */
export function bigIntToBytes(value: bigint): Uint8Array {
  if (value < 0n) throw new WireError("INVALID_VALUE", "negative integer");
  const out: number[] = [];
  let v = value;
  while (v > 0n) {
    out.push(Number(v & 0xffn));
    v >>= 8n;
  }
  return Uint8Array.from(out.reverse());
}
