/**
 * Test helper: builds tar archives and gzip tarballs in memory, with only web APIs
 * (`TextEncoder`, `CompressionStream`), so the same code runs in Node and in workerd.
 * It can also build the hostile archives the extractor must refuse: `..` names, links,
 * devices, lying sizes, many entries.
 */
import { concatBytes } from "../../src/lib/bytes";

const encoder = new TextEncoder();

/** Entry types the builder can write. */
export type TarEntryKind = "file" | "directory" | "symlink" | "hardlink" | "char-device" | "block-device" | "fifo";

const TYPEFLAG: Record<TarEntryKind, string> = {
  file: "0",
  hardlink: "1",
  symlink: "2",
  "char-device": "3",
  "block-device": "4",
  directory: "5",
  fifo: "6",
};

/** One entry to write. */
export interface TarEntrySpec {
  /** Name exactly as stored (no normalisation): `./main.tf`, `../x.tf`, `/etc/x.tf`… */
  path: string;
  /** Defaults to `file`. */
  type?: TarEntryKind;
  /** File data. */
  content?: string | Uint8Array;
  /** Zero-filled data of this size instead of `content` (large entries). */
  zeros?: number;
  /** Link target for symlinks and hard links. */
  linkTarget?: string;
  /** How to store a name longer than 100 bytes: a pax `path` record (default) or GNU `L`. */
  longName?: "pax" | "gnu";
  /** Size written in the header when it should lie about the data that follows. */
  declaredSize?: number;
  /** Raw typeflag character, overriding `type` (e.g. `"S"` for an unsupported type). */
  typeflag?: string;
}

/** Archive-wide options. */
export interface TarOptions {
  /** Prepended to every entry name, e.g. `"./"` as `tar -C dir .` writes. */
  prefix?: string;
  /** Emit a directory entry for every parent directory before its first file. */
  directories?: boolean;
  /** Append this many empty files `filler/<n>.txt` (for entry-count limits). */
  fillerEntries?: number;
  /** Number of zero blocks at the end: 2 normally, 0 for an archive without them. */
  endBlocks?: number;
  /** Header magic: POSIX `ustar\0` + `00` (default) or GNU `ustar  \0`. */
  format?: "posix" | "gnu";
}

const BLOCK = 512;

function writeString(block: Uint8Array, offset: number, length: number, text: string): void {
  const bytes = encoder.encode(text);
  if (bytes.length > length) throw new Error(`tar field too long: ${text}`);
  block.set(bytes, offset);
}

/** Octal, zero-padded, NUL-terminated; base-256 when it does not fit (GNU). */
function writeNumber(block: Uint8Array, offset: number, length: number, value: number): void {
  const octal = value.toString(8);
  if (octal.length <= length - 1) {
    writeString(block, offset, length, `${octal.padStart(length - 1, "0")}\0`);
    return;
  }
  let v = value;
  for (let i = length - 1; i > 0; i--) {
    block[offset + i] = v % 256;
    v = Math.floor(v / 256);
  }
  block[offset] = 0x80;
}

function header(name: string, typeflag: string, size: number, linkName: string, format: "posix" | "gnu"): Uint8Array {
  const block = new Uint8Array(BLOCK);
  writeString(block, 0, 100, name);
  writeNumber(block, 100, 8, typeflag === "5" ? 0o755 : 0o644);
  writeNumber(block, 108, 8, 1000);
  writeNumber(block, 116, 8, 1000);
  writeNumber(block, 124, 12, size);
  writeNumber(block, 136, 12, 1_700_000_000);
  writeString(block, 156, 1, typeflag);
  writeString(block, 157, 100, linkName);
  if (format === "gnu") writeString(block, 257, 8, "ustar  \0");
  else writeString(block, 257, 8, "ustar\x0000");
  writeString(block, 265, 32, "keyway");
  writeString(block, 297, 32, "keyway");
  // Checksum: computed with the field as spaces, written as 6 octal digits, NUL, space.
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of block) sum += b;
  writeString(block, 148, 8, `${sum.toString(8).padStart(6, "0")}\0 `);
  return block;
}

function padded(data: Uint8Array): Uint8Array[] {
  const pad = (BLOCK - (data.length % BLOCK)) % BLOCK;
  return pad ? [data, new Uint8Array(pad)] : [data];
}

function paxRecord(key: string, value: string): string {
  // The length prefix counts itself, so iterate until it is stable.
  const body = ` ${key}=${value}\n`;
  let length = encoder.encode(body).length;
  while (String(length).length + encoder.encode(body).length !== length) {
    length = String(length).length + encoder.encode(body).length;
  }
  return `${length}${body}`;
}

function entryBlocks(spec: TarEntrySpec, format: "posix" | "gnu"): Uint8Array[] {
  const out: Uint8Array[] = [];
  const typeflag = spec.typeflag ?? TYPEFLAG[spec.type ?? "file"];
  const data =
    spec.zeros !== undefined
      ? new Uint8Array(spec.zeros)
      : typeof spec.content === "string"
        ? encoder.encode(spec.content)
        : (spec.content ?? new Uint8Array(0));
  let name = spec.path;
  let linkName = spec.linkTarget ?? "";
  if (encoder.encode(name).length > 100 || encoder.encode(linkName).length > 100) {
    if (spec.longName === "gnu") {
      if (encoder.encode(name).length > 100) {
        const long = encoder.encode(`${name}\0`);
        out.push(header("././@LongLink", "L", long.length, "", "gnu"), ...padded(long));
        name = name.slice(0, 99);
      }
      if (encoder.encode(linkName).length > 100) {
        const long = encoder.encode(`${linkName}\0`);
        out.push(header("././@LongLink", "K", long.length, "", "gnu"), ...padded(long));
        linkName = linkName.slice(0, 99);
      }
    } else {
      let records = "";
      if (encoder.encode(name).length > 100) records += paxRecord("path", name);
      if (encoder.encode(linkName).length > 100) records += paxRecord("linkpath", linkName);
      const pax = encoder.encode(records);
      out.push(header("PaxHeaders/long", "x", pax.length, "", format), ...padded(pax));
      name = name.slice(0, 99);
      linkName = linkName.slice(0, 99);
    }
  }
  out.push(header(name, typeflag, spec.declaredSize ?? data.length, linkName, format));
  if (data.length > 0) out.push(...padded(data));
  return out;
}

/** Normalises the two input shapes to a list of entries. */
function toSpecs(entries: Record<string, string | Uint8Array> | TarEntrySpec[]): TarEntrySpec[] {
  return Array.isArray(entries) ? entries : Object.entries(entries).map(([path, content]) => ({ path, content }));
}

/**
 * Builds an uncompressed tar.
 *
 * @example buildTar({ "main.tf": 'resource "null_resource" "x" {}' }, { prefix: "./" })
 */
export function buildTar(
  entries: Record<string, string | Uint8Array> | TarEntrySpec[],
  options: TarOptions = {},
): Uint8Array {
  const format = options.format ?? "posix";
  const prefix = options.prefix ?? "";
  const parts: Uint8Array[] = [];
  const seenDirs = new Set<string>();
  const specs = toSpecs(entries);
  for (let i = 0; i < (options.fillerEntries ?? 0); i++) specs.push({ path: `filler/${i}.txt`, content: "" });
  if (options.directories && prefix) parts.push(header(prefix, "5", 0, "", format));
  for (const spec of specs) {
    if (options.directories) {
      const segments = spec.path.split("/").slice(0, -1);
      for (let i = 1; i <= segments.length; i++) {
        const dir = `${segments.slice(0, i).join("/")}/`;
        if (!seenDirs.has(dir)) {
          seenDirs.add(dir);
          parts.push(header(prefix + dir, "5", 0, "", format));
        }
      }
    }
    parts.push(...entryBlocks({ ...spec, path: prefix + spec.path }, format));
  }
  for (let i = 0; i < (options.endBlocks ?? 2); i++) parts.push(new Uint8Array(BLOCK));
  return concatBytes(...parts);
}

/** gzip through the platform's CompressionStream. */
export async function gzip(data: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([data as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** {@link buildTar} then {@link gzip}. */
export async function buildTarball(
  entries: Record<string, string | Uint8Array> | TarEntrySpec[],
  options: TarOptions = {},
): Promise<Uint8Array> {
  return gzip(buildTar(entries, options));
}

/**
 * A stream that yields `bytes` in chunks and counts how many chunks were pulled, to show
 * that a consumer stopped reading early.
 */
export function countingStream(
  bytes: Uint8Array,
  chunkSize = 16 * 1024,
): { stream: ReadableStream<Uint8Array>; pulled: () => number } {
  let offset = 0;
  let pulls = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (offset >= bytes.length) {
          controller.close();
          return;
        }
        pulls++;
        controller.enqueue(bytes.slice(offset, offset + chunkSize));
        offset += chunkSize;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, pulled: () => pulls };
}

/** Incompressible bytes (xorshift32), so gzip output is as long as its input. */
export function noise(length: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = 2463534242;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}
