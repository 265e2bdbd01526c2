/**
 * OpenSSH Key Revocation Lists (PROTOCOL.krl, format version 1): a pure, strict encoder.
 *
 * What it writes, in this order (the order `ssh-keygen -k` writes, so that byte-for-byte
 * comparisons with OpenSSH are possible wherever both choose the same serial encoding):
 *
 *     header                                       (PROTOCOL.krl §1)
 *     one KRL_SECTION_CERTIFICATES per CA key      (§2), in the order given:
 *         serial list / serial range subsections   (§2.1, §2.2), by ascending serial
 *         one key id subsection                    (§2.4), key ids in byte order
 *     one KRL_SECTION_EXPLICIT_KEY                 (§3), blobs in byte order
 *     one KRL_SECTION_FINGERPRINT_SHA256           (§4), hashes in numeric order
 *
 * Deliberately never written: the empty-CA wildcard section (§2: it would revoke
 * certificates of every CA a host trusts, other mounts' included), bitmaps (§2.3; Keyway's
 * serials are random 64-bit values, where lists and ranges are as small), SHA1 fingerprints
 * (§4), extensions (§2.5, §5) and signature sections (§6: OpenSSH 9.4+ refuses to load a KRL
 * that has one).
 *
 * Strict: serial 0 (OpenSSH refuses it, and a KRL it cannot load makes sshd refuse every
 * public-key login), key ids with NUL (read back as C strings) or empty, duplicate CA keys,
 * certificates where a plain key blob is required, and hashes that are not 32 bytes are
 * refused with {@link WireError} `INVALID_VALUE`.
 */

import { utf8 } from "../bytes";
import { compareBytes } from "./certificate";
import { WireError } from "./errors";
import { isCertificateTypeName } from "./key-types";
import { SshReader } from "./reader";
import { SshWriter } from "./writer";

/** PROTOCOL.krl §1: KRL_MAGIC, the eight bytes "SSHKRL\n\0". */
export const KRL_MAGIC = Uint8Array.of(0x53, 0x53, 0x48, 0x4b, 0x52, 0x4c, 0x0a, 0x00);
/** PROTOCOL.krl §1: KRL_FORMAT_VERSION. */
export const KRL_FORMAT_VERSION = 1;

/** PROTOCOL.krl §1 section types. */
export const KRL_SECTION_CERTIFICATES = 1;
export const KRL_SECTION_EXPLICIT_KEY = 2;
export const KRL_SECTION_FINGERPRINT_SHA256 = 5;
/** PROTOCOL.krl §2 certificate subsection types. */
export const KRL_SECTION_CERT_SERIAL_LIST = 0x20;
export const KRL_SECTION_CERT_SERIAL_RANGE = 0x21;
export const KRL_SECTION_CERT_KEY_ID = 0x23;

const UINT64_MAX = (1n << 64n) - 1n;

/**
 * A run of contiguous serials shorter than this goes into a serial list (§2.1); a longer
 * one into its own range section (§2.2). A range costs 5 (subsection header) + 16 bytes;
 * a list entry 8, so from three serials on a range is never larger.
 */
const MIN_RANGE_RUN = 3n;

/** An inclusive range of revoked serials, `lo <= serial <= hi` (a single serial: lo = hi). */
export interface KrlSerialRange {
  readonly lo: bigint;
  readonly hi: bigint;
}

/** PROTOCOL.krl §2: the certificates of one CA key revoked by serial or key id. */
export interface KrlCertificateSection {
  /** The CA's public key blob (the standard SSH wire serialisation); never empty. */
  readonly caKey: Uint8Array;
  /** Revoked serials; may overlap and be in any order (they are merged). */
  readonly serials?: readonly KrlSerialRange[];
  /** Revoked key ids (UTF-8 text or raw bytes); duplicates are merged. */
  readonly keyIds?: readonly (string | Uint8Array)[];
}

/** Everything a KRL says. */
export interface KrlContents {
  /** PROTOCOL.krl §1 krl_version: grows each time the KRL changes. */
  readonly krlVersion: bigint;
  /** PROTOCOL.krl §1 generated_date: seconds since the epoch. */
  readonly generatedDate: bigint;
  /** PROTOCOL.krl §1 comment (empty when absent). */
  readonly comment?: string;
  /** One certificate section per CA key, written in this order. */
  readonly certificates?: readonly KrlCertificateSection[];
  /** PROTOCOL.krl §3: plain public key blobs (not certificates) revoked outright. */
  readonly explicitKeys?: readonly Uint8Array[];
  /** PROTOCOL.krl §4: SHA256 hashes of plain public key blobs revoked. */
  readonly sha256Fingerprints?: readonly Uint8Array[];
}

function checkUint64(value: bigint, what: string): void {
  if (typeof value !== "bigint" || value < 0n || value > UINT64_MAX)
    throw new WireError("INVALID_VALUE", `${what} out of range: ${String(value)}`);
}

/** Sorted, merged (overlapping or adjacent) ranges. */
export function mergeSerialRanges(ranges: readonly KrlSerialRange[]): KrlSerialRange[] {
  for (const r of ranges) {
    checkUint64(r.lo, "serial");
    checkUint64(r.hi, "serial");
    if (r.lo === 0n)
      throw new WireError("INVALID_VALUE", "serial 0 cannot be revoked (OpenSSH refuses a KRL that names it)");
    if (r.hi < r.lo) throw new WireError("INVALID_VALUE", `serial range ${r.lo}-${r.hi} is empty`);
  }
  const sorted = [...ranges].sort((a, b) => (a.lo < b.lo ? -1 : a.lo > b.lo ? 1 : 0));
  const out: { lo: bigint; hi: bigint }[] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last && r.lo <= last.hi + 1n) {
      if (r.hi > last.hi) last.hi = r.hi;
    } else {
      out.push({ lo: r.lo, hi: r.hi });
    }
  }
  return out;
}

/** Distinct byte strings in OpenSSH's order. */
function sortedDistinct(items: readonly Uint8Array[]): Uint8Array[] {
  const sorted = [...items].sort(compareBytes);
  return sorted.filter((item, i) => i === 0 || compareBytes(sorted[i - 1]!, item) !== 0);
}

function keyIdBytes(keyId: string | Uint8Array): Uint8Array {
  const bytes = typeof keyId === "string" ? utf8(keyId) : keyId;
  if (bytes.length === 0) throw new WireError("INVALID_VALUE", "empty key id");
  if (bytes.includes(0))
    throw new WireError("INVALID_VALUE", "key id contains NUL (PROTOCOL.krl §2.4 key ids are read as C strings)");
  return bytes;
}

/** The key type name at the start of a public key blob; refuses certificates. */
function checkPlainKeyBlob(blob: Uint8Array, what: string): void {
  let name: string;
  try {
    name = new SshReader(blob).readText();
  } catch {
    throw new WireError("INVALID_VALUE", `${what} is not an SSH public key blob`);
  }
  if (name.length === 0) throw new WireError("INVALID_VALUE", `${what} has no key type`);
  if (isCertificateTypeName(name))
    throw new WireError("INVALID_VALUE", `${what} is a certificate; a plain key is required`);
}

/** PROTOCOL.krl §2: the section_data of one KRL_SECTION_CERTIFICATES. */
function certificateSectionData(section: KrlCertificateSection): Uint8Array {
  const w = new SshWriter();
  // §2: string ca_key, string reserved.
  w.writeString(section.caKey);
  w.writeString(new Uint8Array(0));

  // §2.1 and §2.2: consecutive short runs share one serial list; each long run is a range.
  let list: SshWriter | null = null;
  const flushList = () => {
    if (list) {
      w.writeByte(KRL_SECTION_CERT_SERIAL_LIST);
      w.writeString(list.finish());
      list = null;
    }
  };
  for (const run of mergeSerialRanges(section.serials ?? [])) {
    if (run.hi - run.lo + 1n >= MIN_RANGE_RUN) {
      flushList();
      // §2.2: uint64 serial_min, uint64 serial_max.
      const range = new SshWriter().writeUint64(run.lo).writeUint64(run.hi);
      w.writeByte(KRL_SECTION_CERT_SERIAL_RANGE);
      w.writeString(range.finish());
    } else {
      list ??= new SshWriter();
      // §2.1: uint64 revoked_cert_serial, repeated.
      for (let s = run.lo; s <= run.hi; s++) list.writeUint64(s);
    }
  }
  flushList();

  // §2.4: string key_id[0] ... (at least one, so the subsection is left out when none).
  const keyIds = sortedDistinct((section.keyIds ?? []).map(keyIdBytes));
  if (keyIds.length > 0) {
    const ids = new SshWriter();
    for (const id of keyIds) ids.writeString(id);
    w.writeByte(KRL_SECTION_CERT_KEY_ID);
    w.writeString(ids.finish());
  }
  return w.finish();
}

/**
 * Encode a KRL (PROTOCOL.krl format version 1).
 * @throws WireError `INVALID_VALUE` for anything OpenSSH would refuse or misread
 */
export function encodeKrl(krl: KrlContents): Uint8Array {
  checkUint64(krl.krlVersion, "krl_version");
  checkUint64(krl.generatedDate, "generated_date");
  const w = new SshWriter();
  // §1 header: uint64 KRL_MAGIC, uint32 KRL_FORMAT_VERSION, uint64 krl_version,
  // uint64 generated_date, uint64 flags (none defined), string reserved, string comment.
  w.writeRaw(KRL_MAGIC);
  w.writeUint32(KRL_FORMAT_VERSION);
  w.writeUint64(krl.krlVersion);
  w.writeUint64(krl.generatedDate);
  w.writeUint64(0n);
  w.writeString(new Uint8Array(0));
  const comment = utf8(krl.comment ?? "");
  if (comment.includes(0)) throw new WireError("INVALID_VALUE", "KRL comment contains NUL");
  w.writeString(comment);

  // §2: byte KRL_SECTION_CERTIFICATES, string section_data; one per CA key.
  const seenCas: Uint8Array[] = [];
  for (const section of krl.certificates ?? []) {
    if (section.caKey.length === 0)
      throw new WireError("INVALID_VALUE", "empty CA key: the wildcard section is never written");
    checkPlainKeyBlob(section.caKey, "CA key");
    if (seenCas.some((ca) => compareBytes(ca, section.caKey) === 0))
      throw new WireError("INVALID_VALUE", "the same CA key in two sections");
    seenCas.push(section.caKey);
    w.writeByte(KRL_SECTION_CERTIFICATES);
    w.writeString(certificateSectionData(section));
  }

  // §3: string public_key_blob[0] ... (at least one).
  const keys = sortedDistinct(krl.explicitKeys ?? []);
  if (keys.length > 0) {
    const section = new SshWriter();
    for (const key of keys) {
      checkPlainKeyBlob(key, "revoked key");
      section.writeString(key);
    }
    w.writeByte(KRL_SECTION_EXPLICIT_KEY);
    w.writeString(section.finish());
  }

  // §4: string public_key_hash[0] ... in numeric (big-endian) order, at least one.
  const hashes = sortedDistinct(krl.sha256Fingerprints ?? []);
  if (hashes.length > 0) {
    const section = new SshWriter();
    for (const hash of hashes) {
      if (hash.length !== 32)
        throw new WireError("INVALID_VALUE", `a SHA256 fingerprint is 32 bytes, not ${hash.length}`);
      section.writeString(hash);
    }
    w.writeByte(KRL_SECTION_FINGERPRINT_SHA256);
    w.writeString(section.finish());
  }
  return w.finish();
}

/** PROTOCOL.krl §1: the krl_version of an encoded KRL (after checking magic and format version). */
export function krlVersionOf(krl: Uint8Array): bigint {
  const r = new SshReader(krl);
  const magic = r.readRaw(KRL_MAGIC.length);
  if (compareBytes(magic, KRL_MAGIC) !== 0) throw new WireError("INVALID_VALUE", "not a KRL (bad magic)");
  if (r.readUint32() !== KRL_FORMAT_VERSION) throw new WireError("INVALID_VALUE", "unsupported KRL format version");
  return r.readUint64();
}
