/**
 * A tiny DER (ITU-T X.690 §10) reader and writer, just enough for the key containers we read
 * and write: PKCS#1 RSAPrivateKey (RFC 8017 A.1.2), SEC1 ECPrivateKey (RFC 5915 §3), PKCS#8
 * PrivateKeyInfo / OneAsymmetricKey (RFC 5208 §5, RFC 5958 §2) and SubjectPublicKeyInfo.
 *
 * Pure (bytes only). Strict: definite minimal lengths, minimal INTEGERs, no trailing bytes.
 * Errors are {@link WireError}s; the private-key reader turns them into `SshKeyError`s.
 */

import { concatBytes } from "../bytes";
import { WireError } from "../sshwire/errors";

/** X.690 universal tags used here. */
export const DER_TAG = {
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  OID: 0x06,
  SEQUENCE: 0x30,
} as const;

/** Reads DER elements front to back. */
export class DerReader {
  private readonly buf: Uint8Array;
  private pos = 0;
  readonly context: string;

  constructor(buf: Uint8Array, context = "DER") {
    this.buf = buf;
    this.context = context;
  }

  /** True when every byte has been read. */
  get atEnd(): boolean {
    return this.pos >= this.buf.length;
  }

  /** Tag of the next element, or undefined at the end. */
  peekTag(): number | undefined {
    return this.atEnd ? undefined : this.buf[this.pos];
  }

  /**
   * Reads one element with the given tag and returns its contents.
   * @throws WireError `EOF`, `INVALID_ENCODING`
   */
  read(tag: number, what: string): Uint8Array {
    const start = this.pos;
    if (this.buf.length - start < 2) throw new WireError("EOF", `${this.context}: truncated ${what}`);
    const actual = this.buf[start]!;
    if (actual !== tag) {
      throw new WireError(
        "INVALID_ENCODING",
        `${this.context}: expected ${what} (tag 0x${tag.toString(16)}), found tag 0x${actual.toString(16)}`,
      );
    }
    let p = start + 1;
    const first = this.buf[p++]!;
    let len: number;
    if (first < 0x80) {
      len = first;
    } else {
      // X.690 §10.1: definite form, minimal number of length octets.
      const count = first & 0x7f;
      if (count === 0 || count > 4)
        throw new WireError("INVALID_ENCODING", `${this.context}: unsupported length form in ${what}`);
      if (this.buf.length - p < count) throw new WireError("EOF", `${this.context}: truncated length of ${what}`);
      len = 0;
      for (let i = 0; i < count; i++) len = len * 256 + this.buf[p++]!;
      if (len < 0x80 || (count > 1 && this.buf[p - count] === 0)) {
        throw new WireError("INVALID_ENCODING", `${this.context}: non-minimal length in ${what}`);
      }
    }
    if (this.buf.length - p < len) throw new WireError("EOF", `${this.context}: truncated ${what}`);
    this.pos = p + len;
    return this.buf.slice(p, p + len);
  }

  /** SEQUENCE → reader over its contents. */
  sequence(what: string): DerReader {
    return new DerReader(this.read(DER_TAG.SEQUENCE, what), `${this.context}: ${what}`);
  }

  /**
   * Non-negative INTEGER → big-endian magnitude (X.690 §8.3: minimal two's complement).
   * @throws WireError `INVALID_ENCODING` for empty, negative or non-minimal integers
   */
  integer(what: string): Uint8Array {
    const c = this.read(DER_TAG.INTEGER, what);
    if (c.length === 0) throw new WireError("INVALID_ENCODING", `${this.context}: empty INTEGER ${what}`);
    if (c[0]! & 0x80) throw new WireError("INVALID_ENCODING", `${this.context}: negative INTEGER ${what}`);
    if (c.length > 1 && c[0] === 0 && (c[1]! & 0x80) === 0) {
      throw new WireError("INVALID_ENCODING", `${this.context}: non-minimal INTEGER ${what}`);
    }
    return c[0] === 0 ? c.slice(1) : c;
  }

  /** Small non-negative INTEGER (versions). */
  smallInteger(what: string): number {
    const m = this.integer(what);
    if (m.length > 4) throw new WireError("INVALID_VALUE", `${this.context}: ${what} too large`);
    let n = 0;
    for (const b of m) n = n * 256 + b;
    return n;
  }

  /** OCTET STRING contents. */
  octetString(what: string): Uint8Array {
    return this.read(DER_TAG.OCTET_STRING, what);
  }

  /** BIT STRING with no unused bits → its bytes. */
  bitString(what: string): Uint8Array {
    const c = this.read(DER_TAG.BIT_STRING, what);
    if (c.length === 0 || c[0] !== 0)
      throw new WireError("INVALID_ENCODING", `${this.context}: ${what} has unused bits`);
    return c.slice(1);
  }

  /** NULL. */
  null(what: string): void {
    if (this.read(DER_TAG.NULL, what).length !== 0)
      throw new WireError("INVALID_ENCODING", `${this.context}: non-empty NULL`);
  }

  /** OBJECT IDENTIFIER → dotted string (X.690 §8.19). */
  oid(what: string): string {
    const c = this.read(DER_TAG.OID, what);
    if (c.length === 0 || (c[c.length - 1]! & 0x80) !== 0)
      throw new WireError("INVALID_ENCODING", `${this.context}: bad OID ${what}`);
    const arcs: number[] = [];
    let v = 0;
    for (let i = 0; i < c.length; i++) {
      const b = c[i]!;
      if (v === 0 && b === 0x80)
        throw new WireError("INVALID_ENCODING", `${this.context}: non-minimal OID arc in ${what}`);
      v = v * 128 + (b & 0x7f);
      if (v > Number.MAX_SAFE_INTEGER / 256)
        throw new WireError("INVALID_ENCODING", `${this.context}: OID arc too large in ${what}`);
      if ((b & 0x80) === 0) {
        if (arcs.length === 0) {
          const first = v < 80 ? Math.floor(v / 40) : 2;
          arcs.push(first, v - first * 40);
        } else {
          arcs.push(v);
        }
        v = 0;
      }
    }
    return arcs.join(".");
  }

  /** Optional context-specific constructed element `[n]` → reader over its contents. */
  optionalExplicit(n: number, what: string): DerReader | undefined {
    if (this.peekTag() !== (0xa0 | n)) return undefined;
    return new DerReader(this.read(0xa0 | n, what), `${this.context}: ${what}`);
  }

  /** Optional context-specific implicit primitive `[n]` → contents. */
  optionalImplicit(n: number, what: string): Uint8Array | undefined {
    if (this.peekTag() !== (0x80 | n)) return undefined;
    return this.read(0x80 | n, what);
  }

  /**
   * Asserts the whole buffer was read.
   * @throws WireError `TRAILING_DATA`
   */
  expectEnd(): void {
    if (!this.atEnd) throw new WireError("TRAILING_DATA", `${this.context}: unexpected trailing bytes`);
  }
}

function encodeLength(len: number): Uint8Array {
  if (len < 0x80) return Uint8Array.of(len);
  const bytes: number[] = [];
  for (let v = len; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Uint8Array.of(0x80 | bytes.length, ...bytes);
}

/** DER TLV with raw contents. */
export function derTlv(tag: number, contents: Uint8Array): Uint8Array {
  return concatBytes(Uint8Array.of(tag), encodeLength(contents.length), contents);
}

/** SEQUENCE of already-encoded elements. */
export function derSequence(...elements: Uint8Array[]): Uint8Array {
  return derTlv(DER_TAG.SEQUENCE, concatBytes(...elements));
}

/** Non-negative INTEGER from a big-endian magnitude (minimal, X.690 §8.3). */
export function derInteger(magnitude: Uint8Array): Uint8Array {
  let start = 0;
  while (start < magnitude.length - 1 && magnitude[start] === 0) start++;
  let body = magnitude.length === 0 ? Uint8Array.of(0) : magnitude.subarray(start);
  if (body[0]! & 0x80) body = concatBytes(Uint8Array.of(0), body);
  return derTlv(DER_TAG.INTEGER, body);
}

/** Small non-negative INTEGER. */
export function derSmallInteger(n: number): Uint8Array {
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return derInteger(Uint8Array.from(bytes));
}

/** OCTET STRING. */
export function derOctetString(bytes: Uint8Array): Uint8Array {
  return derTlv(DER_TAG.OCTET_STRING, bytes);
}

/** BIT STRING with no unused bits. */
export function derBitString(bytes: Uint8Array): Uint8Array {
  return derTlv(DER_TAG.BIT_STRING, concatBytes(Uint8Array.of(0), bytes));
}

/** NULL. */
export function derNull(): Uint8Array {
  return Uint8Array.of(DER_TAG.NULL, 0);
}

/** OBJECT IDENTIFIER from a dotted string (X.690 §8.19). */
export function derOid(dotted: string): Uint8Array {
  const arcs = dotted.split(".").map((s) => Number.parseInt(s, 10));
  const values = [arcs[0]! * 40 + arcs[1]!, ...arcs.slice(2)];
  const out: number[] = [];
  for (const v of values) {
    const chunk: number[] = [v & 0x7f];
    for (let x = Math.floor(v / 128); x > 0; x = Math.floor(x / 128)) chunk.unshift(0x80 | (x & 0x7f));
    out.push(...chunk);
  }
  return derTlv(DER_TAG.OID, Uint8Array.from(out));
}

/** Context-specific constructed `[n]` wrapping already-encoded elements. */
export function derExplicit(n: number, ...elements: Uint8Array[]): Uint8Array {
  return derTlv(0xa0 | n, concatBytes(...elements));
}
