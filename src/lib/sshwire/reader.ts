/**
 * Strict, bounds-checked reader for the SSH binary encodings of RFC 4251 §5.
 *
 * Every read checks the remaining length first and throws {@link WireError} (`EOF`) rather than
 * returning short data; nested structures are read with {@link SshReader.subReader}, whose
 * caller must finish with {@link SshReader.expectEnd} so that nothing is silently ignored.
 */

import { WireError } from "./errors";

/** Strict UTF-8 that keeps a leading BOM, so decode → encode is byte-identical. */
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Reads SSH wire-format fields from a byte array, front to back. */
export class SshReader {
  private readonly buf: Uint8Array;
  private pos = 0;
  /** Name used in error messages ("certificate", "critical options"...). */
  readonly context: string;

  /**
   * @param buf bytes to read (not copied; slices returned by the reader are copies)
   * @param context what is being read, for error messages
   */
  constructor(buf: Uint8Array, context = "data") {
    this.buf = buf;
    this.context = context;
  }

  /** Current offset from the start of the buffer. */
  get offset(): number {
    return this.pos;
  }

  /** Bytes not read yet. */
  get remaining(): number {
    return this.buf.length - this.pos;
  }

  /** True when every byte has been read. */
  get atEnd(): boolean {
    return this.pos === this.buf.length;
  }

  /** @throws WireError `EOF` when fewer than `n` bytes remain. */
  private need(n: number, what: string): void {
    if (n > this.buf.length - this.pos) {
      throw new WireError(
        "EOF",
        `${this.context}: unexpected end of data reading ${what} (need ${n} bytes, have ${this.buf.length - this.pos})`,
      );
    }
  }

  /**
   * RFC 4251 §5 byte.
   * @throws WireError `EOF`
   */
  readByte(what = "byte"): number {
    this.need(1, what);
    return this.buf[this.pos++]!;
  }

  /**
   * RFC 4251 §5 boolean: any non-zero byte is true (the RFC asks writers for 1).
   * @throws WireError `EOF`
   */
  readBoolean(what = "boolean"): boolean {
    return this.readByte(what) !== 0;
  }

  /**
   * RFC 4251 §5 uint32, big-endian.
   * @throws WireError `EOF`
   */
  readUint32(what = "uint32"): number {
    this.need(4, what);
    const b = this.buf;
    const p = this.pos;
    this.pos += 4;
    return ((b[p]! << 24) | (b[p + 1]! << 16) | (b[p + 2]! << 8) | b[p + 3]!) >>> 0;
  }

  /**
   * RFC 4251 §5 uint64, big-endian, as a bigint.
   * @throws WireError `EOF`
   */
  readUint64(what = "uint64"): bigint {
    this.need(8, what);
    const hi = this.readUint32(what);
    const lo = this.readUint32(what);
    return (BigInt(hi) << 32n) | BigInt(lo);
  }

  /**
   * `n` raw bytes (a copy).
   * @throws WireError `EOF`
   */
  readRaw(n: number, what = "bytes"): Uint8Array {
    if (!Number.isInteger(n) || n < 0) throw new WireError("INVALID_VALUE", `${this.context}: bad length for ${what}`);
    this.need(n, what);
    const out = this.buf.slice(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /**
   * RFC 4251 §5 string: uint32 length then that many bytes (a copy).
   * @throws WireError `EOF`
   */
  readString(what = "string"): Uint8Array {
    const len = this.readUint32(`${what} length`);
    return this.readRaw(len, what);
  }

  /**
   * RFC 4251 §5 string holding UTF-8 text (RFC 4251 §5 "ISO-10646 UTF-8").
   * @throws WireError `EOF`, `INVALID_UTF8`
   */
  readText(what = "string"): string {
    return decodeUtf8(this.readString(what), `${this.context}: ${what}`);
  }

  /**
   * RFC 4251 §5 mpint that must be non-negative and minimally encoded. Returns the magnitude,
   * big-endian, without a sign byte (zero is the empty array).
   * @throws WireError `EOF`, `NON_MINIMAL_MPINT`, `NEGATIVE_MPINT`
   */
  readMpint(what = "mpint"): Uint8Array {
    const raw = this.readString(what);
    return mpintMagnitude(raw, `${this.context}: ${what}`);
  }

  /**
   * Reads a string and returns a reader over its contents, for nested structures
   * (PROTOCOL.certkeys option lists, signature blobs...). Finish it with {@link expectEnd}.
   * @throws WireError `EOF`
   */
  subReader(what: string): SshReader {
    return new SshReader(this.readString(what), `${this.context}: ${what}`);
  }

  /**
   * Asserts that the whole buffer has been consumed.
   * @throws WireError `TRAILING_DATA`
   */
  expectEnd(): void {
    if (this.pos !== this.buf.length) {
      throw new WireError("TRAILING_DATA", `${this.context}: ${this.buf.length - this.pos} unexpected trailing bytes`);
    }
  }
}

/**
 * Strict UTF-8 decode that keeps a leading BOM (so re-encoding is byte-identical).
 * @throws WireError `INVALID_UTF8`
 */
export function decodeUtf8(bytes: Uint8Array, what: string): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    throw new WireError("INVALID_UTF8", `${what} is not valid UTF-8`);
  }
}

/**
 * Checks an RFC 4251 §5 mpint body (two's complement, big-endian, no superfluous leading 0x00
 * or 0xff bytes, zero as the empty string) and returns the magnitude of a non-negative value.
 * @throws WireError `NON_MINIMAL_MPINT`, `NEGATIVE_MPINT`
 */
export function mpintMagnitude(raw: Uint8Array, what: string): Uint8Array {
  if (raw.length === 0) return raw;
  const first = raw[0]!;
  if (first & 0x80)
    throw new WireError("NEGATIVE_MPINT", `${what}: negative mpint where a non-negative one is required`);
  if (first === 0) {
    // RFC 4251 §5 mpint: a leading zero byte is allowed only to clear the sign bit.
    if (raw.length === 1 || (raw[1]! & 0x80) === 0) {
      throw new WireError("NON_MINIMAL_MPINT", `${what}: mpint has a superfluous leading zero byte`);
    }
    return raw.slice(1);
  }
  return raw;
}
