/**
 * Decoding of tar headers: POSIX ustar (with pax extended headers, POSIX.1-2001) and the
 * GNU extensions that GNU tar writes by default (`L`/`K` long names, base-256 sizes).
 * Pure: no stream handling here, see `extract-module-tarball.ts`.
 */

/** Size of every tar header and the unit of padding after entry data. */
export const BLOCK_SIZE = 512;

/** Entry kinds, from the header's typeflag byte (offset 156). */
export type TarEntryType =
  | "file"
  | "directory"
  | "symlink"
  | "hardlink"
  | "char-device"
  | "block-device"
  | "fifo"
  | "pax-header" // `x`: pax extended header for the next entry
  | "pax-global-header" // `g`: pax header for all following entries
  | "gnu-long-name" // `L`: the next entry's name
  | "gnu-long-link" // `K`: the next entry's link target
  | "unsupported";

/** One decoded 512-byte header, before pax/GNU overrides are applied. */
export interface TarHeader {
  /** Name as stored: `prefix/name` for ustar, else `name`. */
  name: string;
  type: TarEntryType;
  /** Typeflag character, kept for error messages about unsupported types. */
  typeflag: string;
  /** Size of the data that follows the header (before padding). */
  size: number;
  linkName: string;
}

/** Thrown for structurally broken archives; the extractor turns it into a message. */
export class TarFormatError extends Error {
  override name = "TarFormatError";
}

// Names are not guaranteed to be UTF-8; a lossy decode is fine because a name only needs to
// be compared and shown, and every name we keep must end in `.tf`.
const lossyUtf8 = new TextDecoder();

/** Byte-per-character decode for the ASCII fields (numbers, magic). */
function ascii(bytes: Uint8Array): string {
  return String.fromCharCode(...bytes);
}

/** Reads a NUL-terminated string field. */
function readString(block: Uint8Array, offset: number, length: number): string {
  let end = offset;
  const limit = offset + length;
  while (end < limit && block[end] !== 0) end++;
  return lossyUtf8.decode(block.subarray(offset, end));
}

/**
 * Reads a numeric field: octal ASCII padded with NUL/space, or GNU base-256 (high bit of the
 * first byte set) which GNU tar uses for sizes of 8 GiB and more.
 */
function readNumber(block: Uint8Array, offset: number, length: number, field: string): number {
  const first = block[offset]!;
  if (first & 0x80) {
    // 0xff would mean a negative number: never valid for a size.
    if (first === 0xff) throw new TarFormatError(`invalid tar header (negative ${field})`);
    let value = first & 0x7f;
    for (let i = 1; i < length; i++) {
      value = value * 256 + block[offset + i]!;
      if (value > Number.MAX_SAFE_INTEGER) throw new TarFormatError(`invalid tar header (${field} too large)`);
    }
    return value;
  }
  const raw = ascii(block.subarray(offset, offset + length));
  const nul = raw.indexOf("\0");
  const text = (nul < 0 ? raw : raw.slice(0, nul)).trim();
  if (text === "") return 0;
  if (!/^[0-7]+$/.test(text)) throw new TarFormatError(`invalid tar header (bad ${field} field)`);
  return Number.parseInt(text, 8);
}

/** True when a block is all zeros: the end-of-archive marker. */
export function isZeroBlock(block: Uint8Array): boolean {
  for (let i = 0; i < block.length; i++) if (block[i] !== 0) return false;
  return true;
}

/**
 * Checks the header checksum (offset 148, 8 bytes). The sum is over all 512 bytes with the
 * checksum field read as spaces; some historic tars summed signed bytes, so accept either.
 */
function checksumMatches(block: Uint8Array): boolean {
  const stored = readNumber(block, 148, 8, "checksum");
  let unsigned = 0;
  let signed = 0;
  for (let i = 0; i < BLOCK_SIZE; i++) {
    const b = i >= 148 && i < 156 ? 0x20 : block[i]!;
    unsigned += b;
    signed += b > 127 ? b - 256 : b;
  }
  return stored === unsigned || stored === signed;
}

function entryType(flag: string): TarEntryType {
  switch (flag) {
    case "0":
    case "\0":
    case "7": // contiguous file: a regular file everywhere but on old Masscomp systems
      return "file";
    case "1":
      return "hardlink";
    case "2":
      return "symlink";
    case "3":
      return "char-device";
    case "4":
      return "block-device";
    case "5":
      return "directory";
    case "6":
      return "fifo";
    case "x":
      return "pax-header";
    case "g":
      return "pax-global-header";
    case "L":
      return "gnu-long-name";
    case "K":
      return "gnu-long-link";
    default:
      return "unsupported";
  }
}

/**
 * Decodes one 512-byte header block.
 *
 * @throws TarFormatError when the block is not a tar header (bad checksum or numbers).
 */
export function parseHeader(block: Uint8Array): TarHeader {
  if (block.length !== BLOCK_SIZE) throw new TarFormatError("archive is truncated");
  if (!checksumMatches(block)) throw new TarFormatError("not a tar archive (bad header checksum)");
  const name = readString(block, 0, 100);
  const typeflag = String.fromCharCode(block[156]!);
  const size = readNumber(block, 124, 12, "size");
  const linkName = readString(block, 157, 100);
  // `ustar\0` + `00` is POSIX; GNU writes `ustar  \0` and uses the prefix area for other
  // things, so the 155-byte prefix is only a name prefix in the POSIX form.
  const magic = ascii(block.subarray(257, 263));
  const prefix = magic === "ustar\0" ? readString(block, 345, 155) : "";
  let type = entryType(typeflag);
  // Pre-POSIX tars mark directories only by a trailing slash on a regular-file entry.
  if (type === "file" && name.endsWith("/")) type = "directory";
  return { name: prefix ? `${prefix}/${name}` : name, type, typeflag, size, linkName };
}

/**
 * Parses the records of a pax extended header: `"<length> <key>=<value>\n"`, where length
 * counts the whole record in bytes. Only keys we act on matter to callers (`path`,
 * `linkpath`, `size`), but all are returned.
 *
 * @throws TarFormatError on a malformed record.
 */
export function parsePaxRecords(data: Uint8Array): Map<string, string> {
  const records = new Map<string, string>();
  let offset = 0;
  while (offset < data.length) {
    // Trailing NULs pad the last block of some writers' pax data.
    if (data[offset] === 0) break;
    let space = offset;
    while (space < data.length && data[space] !== 0x20) space++;
    const digits = ascii(data.subarray(offset, space));
    const length = /^\d+$/.test(digits) ? Number(digits) : Number.NaN;
    if (!Number.isSafeInteger(length) || length <= space - offset || offset + length > data.length) {
      throw new TarFormatError("archive has a malformed pax header");
    }
    const record = lossyUtf8.decode(data.subarray(space + 1, offset + length - 1));
    const eq = record.indexOf("=");
    if (eq <= 0 || data[offset + length - 1] !== 0x0a) throw new TarFormatError("archive has a malformed pax header");
    records.set(record.slice(0, eq), record.slice(eq + 1));
    offset += length;
  }
  return records;
}

/** Rounds a data size up to whole blocks: the bytes that follow a header. */
export function paddedSize(size: number): number {
  return Math.ceil(size / BLOCK_SIZE) * BLOCK_SIZE;
}
