/**
 * Unpacks a module version's `.tar.gz` for ingestion (decisions B5 and N4), keeping only the
 * Terraform files. Everything is streamed: the archive is inflated just as far as the
 * checks need, and reading stops at the first rule that fails.
 */

import { fromUtf8 } from "../bytes";
import { ByteStreamReader, GzipDataError, openGunzip } from "./byte-stream";
import { BLOCK_SIZE, isZeroBlock, paddedSize, parseHeader, parsePaxRecords, TarFormatError } from "./tar-header";

const MiB = 1024 * 1024;

/** Limits of decision B5 for ingestion. */
export interface TarballLimits {
  /** Sum of the sizes of all entries' data, metadata entries' header blocks and data included. */
  maxUnpackedBytes: number;
  /** Entries of any type, directories included (pax/GNU metadata entries excluded). */
  maxEntries: number;
  /** Size of one `.tf` file. */
  maxTfFileBytes: number;
}

/** Decision B5: 50 MiB unpacked, 1,000 entries, 1 MiB per `.tf` file. */
export const MODULE_TARBALL_LIMITS: Readonly<TarballLimits> = Object.freeze({
  maxUnpackedBytes: 50 * MiB,
  maxEntries: 1000,
  maxTfFileBytes: 1 * MiB,
});

/** Extended-header payloads (pax, GNU long names) above this are refused: real ones are tiny. */
const MAX_METADATA_BYTES = 64 * 1024;

/**
 * Decision B9: metadata entries (pax `x`/`g`, GNU `L`/`K`) are not entries, but each costs a
 * header block and a parse; at most this many per archive, and their header blocks and data
 * count towards `maxUnpackedBytes`. Without the bound, 10 MiB of gzip holds millions of them.
 */
export const MAX_METADATA_HEADERS = 1000;

/** A `.tf` file of a subdirectory that is not valid UTF-8, found when it is first read. */
export class TfEncodingError extends Error {
  override name = "TfEncodingError";
  constructor(readonly path: string) {
    super(`${path} is not valid UTF-8`);
  }
}

const strictUtf8 = (bytes: Uint8Array, path: string): string => {
  try {
    return fromUtf8(bytes);
  } catch {
    throw new TfEncodingError(path);
  }
};

/**
 * The archive's `.tf` files, by normalised path. Root files are decoded while the archive
 * is read (every module needs them); files in subdirectories are kept as bytes and decoded
 * on first read, so only the directories that local module calls reach are ever decoded
 * (B9: nothing is kept decoded "just in case"). `get` of an undecodable subdirectory file
 * throws {@link TfEncodingError}.
 */
export class TerraformFiles implements ReadonlyMap<string, string> {
  private readonly decoded = new Map<string, string>();
  private readonly encoded = new Map<string, Uint8Array>();
  private readonly paths = new Set<string>();

  /** Record a file (a later entry of the same path replaces an earlier one, as tar does). */
  add(path: string, text: string | Uint8Array): void {
    this.paths.add(path);
    this.decoded.delete(path);
    this.encoded.delete(path);
    if (typeof text === "string") this.decoded.set(path, text);
    else this.encoded.set(path, text);
  }

  get(path: string): string | undefined {
    const text = this.decoded.get(path);
    if (text !== undefined) return text;
    const bytes = this.encoded.get(path);
    if (bytes === undefined) return undefined;
    const decodedText = strictUtf8(bytes, path);
    this.encoded.delete(path);
    this.decoded.set(path, decodedText);
    return decodedText;
  }

  has(path: string): boolean {
    return this.paths.has(path);
  }

  get size(): number {
    return this.paths.size;
  }

  keys(): MapIterator<string> {
    return this.paths.values();
  }

  *values(): MapIterator<string> {
    for (const path of this.paths) yield this.get(path)!;
  }

  *entries(): MapIterator<[string, string]> {
    for (const path of this.paths) yield [path, this.get(path)!];
  }

  [Symbol.iterator](): MapIterator<[string, string]> {
    return this.entries();
  }

  forEach(callback: (value: string, key: string, map: ReadonlyMap<string, string>) => void, thisArg?: unknown): void {
    for (const [path, text] of this.entries()) callback.call(thisArg, text, path, this);
  }
}

/** What an accepted archive yields. */
export interface ExtractedModule {
  ok: true;
  /**
   * Every `*.tf` file in the archive, at any depth, keyed by its normalised path (no
   * leading `./`, `/`-separated, e.g. `main.tf`, `modules/vpc/main.tf`), as UTF-8 text;
   * files outside the root are decoded only when read (see {@link TerraformFiles}).
   */
  files: TerraformFiles;
  /**
   * Paths of `*.tf.json` files. They are not read (the reader understands native syntax
   * only); callers may mention them.
   */
  tfJsonFiles: string[];
  /** Entries counted against `maxEntries`. */
  entries: number;
  /** Bytes counted against `maxUnpackedBytes`. */
  unpackedBytes: number;
}

/** A refused archive; `error` names the rule or limit. */
export interface RejectedModule {
  ok: false;
  error: string;
}

/** Result of {@link extractModuleTarball}. */
export type ExtractResult = ExtractedModule | RejectedModule;

/** A rule violation found while reading; carries the user-facing message. */
class ArchiveRejected extends Error {
  override name = "ArchiveRejected";
}

/** `1 MiB`, `50 MiB`: limits are whole MiB in practice, bytes otherwise. */
function formatBytes(n: number): string {
  return n % MiB === 0 ? `${n / MiB} MiB` : `${n} bytes`;
}

/**
 * Normalises an entry name, or says why it is refused. `./a//b/` → `a/b`; `./` → `` (the
 * archive root). Backslashes count as separators only for the `..` check, because a
 * Windows-made archive could use them to climb out on extraction.
 */
export function normaliseEntryPath(raw: string): { ok: true; path: string } | { ok: false; error: string } {
  if (raw.startsWith("/") || raw.startsWith("\\") || /^[A-Za-z]:[\\/]/.test(raw)) {
    return { ok: false, error: `archive entry "${raw}" has an absolute path` };
  }
  if (raw.split(/[\\/]/).includes("..")) {
    return { ok: false, error: `archive entry "${raw}" escapes the module directory` };
  }
  const parts = raw.split("/").filter((p) => p !== "" && p !== ".");
  return { ok: true, path: parts.join("/") };
}

/** Per-entry overrides collected from pax (`x`) and GNU (`L`/`K`) metadata entries. */
interface PendingOverrides {
  path?: string;
  linkPath?: string;
  size?: number;
}

/**
 * Unpacks a gzip-compressed tar of a Terraform module and enforces decision B5's limits
 * and N4's entry rules:
 * - input is gzip (`not a gzip archive`), then a ustar/pax/GNU tar;
 * - at most 1,000 entries (directories count), at most 50 MiB of entry data, at most
 *   1 MiB per `.tf` file: checked from the headers, so an oversized entry is refused
 *   before its data is inflated;
 * - at most 1,000 metadata headers (pax, GNU long names; B9), whose header blocks and
 *   data count towards the 50 MiB;
 * - no absolute paths, no `..` components, no symbolic or hard links, no device or FIFO
 *   entries, no other special types;
 * - at least one `*.tf` directly at the archive root (a leading `./` is accepted).
 *
 * Never throws: every problem is returned as `{ ok: false, error }`.
 *
 * @param gzipBytes the `.tar.gz` as bytes or as a stream (e.g. an R2 object body); a
 *   stream is cancelled as soon as the outcome is known.
 * @param limits overrides of {@link MODULE_TARBALL_LIMITS}, for tests.
 * @example
 * const result = await extractModuleTarball(await object.arrayBuffer().then((b) => new Uint8Array(b)));
 * if (!result.ok) return fail(result.error); // e.g. `archive has more than 1000 entries`
 */
export async function extractModuleTarball(
  gzipBytes: Uint8Array | ReadableStream<Uint8Array>,
  limits: Partial<TarballLimits> = {},
): Promise<ExtractResult> {
  const lim: TarballLimits = { ...MODULE_TARBALL_LIMITS, ...limits };
  let start: Awaited<ReturnType<typeof openGunzip>>;
  try {
    start = await openGunzip(gzipBytes);
  } catch (cause) {
    return { ok: false, error: `could not read the archive (${describe(cause)})` };
  }
  if (!start.ok) return start;
  const reader = new ByteStreamReader(start.source);
  try {
    return await readTar(reader, lim);
  } catch (cause) {
    if (cause instanceof ArchiveRejected || cause instanceof TarFormatError || cause instanceof GzipDataError) {
      return { ok: false, error: cause.message };
    }
    return { ok: false, error: `could not read the archive (${describe(cause)})` };
  } finally {
    // Stops inflating whatever is left (trailing data, or the rest after a refusal).
    await reader.cancel();
  }
}

function describe(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}

async function readTar(reader: ByteStreamReader, lim: TarballLimits): Promise<ExtractedModule> {
  const files = new TerraformFiles();
  const tfJsonFiles: string[] = [];
  let entries = 0;
  let metadataHeaders = 0;
  let unpacked = 0;
  let pending: PendingOverrides = {};
  let sawHeader = false;

  const countData = (size: number) => {
    unpacked += size;
    if (unpacked > lim.maxUnpackedBytes) {
      throw new ArchiveRejected(`archive unpacks to more than ${formatBytes(lim.maxUnpackedBytes)}`);
    }
  };
  const readData = async (size: number): Promise<Uint8Array> => {
    const data = await reader.read(size);
    if (data.length < size) throw new ArchiveRejected("archive is truncated");
    const padding = paddedSize(size) - size;
    // The last entry's padding may be missing in archives written without end blocks.
    await reader.skip(padding);
    return data;
  };
  const skipData = async (size: number): Promise<void> => {
    if ((await reader.skip(size)) < size) throw new ArchiveRejected("archive is truncated");
    await reader.skip(paddedSize(size) - size);
  };

  for (;;) {
    const block = await reader.read(BLOCK_SIZE);
    if (block.length === 0) break; // end of stream without end-of-archive blocks: accepted
    if (block.length < BLOCK_SIZE) {
      throw new ArchiveRejected(sawHeader ? "archive is truncated" : "not a tar archive (too short)");
    }
    // One zero block ends the archive; POSIX writes two, but nothing valid can follow one.
    if (isZeroBlock(block)) break;
    let header: ReturnType<typeof parseHeader>;
    try {
      header = parseHeader(block);
    } catch (cause) {
      // The first header failing means the gzip payload is not a tar at all.
      if (!sawHeader && cause instanceof TarFormatError) throw new ArchiveRejected("gzip data is not a tar archive");
      throw cause;
    }
    sawHeader = true;
    const size = pending.size ?? header.size;

    // Metadata entries describe the next entry; they are not entries themselves, but
    // their bytes count towards the unpacked size.
    if (
      header.type === "pax-header" ||
      header.type === "pax-global-header" ||
      header.type === "gnu-long-name" ||
      header.type === "gnu-long-link"
    ) {
      if (header.size > MAX_METADATA_BYTES) {
        throw new ArchiveRejected(`archive has an extended header larger than ${MAX_METADATA_BYTES} bytes`);
      }
      metadataHeaders++;
      if (metadataHeaders > MAX_METADATA_HEADERS) {
        throw new ArchiveRejected(
          `archive has more than ${MAX_METADATA_HEADERS} metadata headers (pax or GNU long-name entries)`,
        );
      }
      countData(BLOCK_SIZE + header.size);
      const data = await readData(header.size);
      if (header.type === "pax-header") {
        const records = parsePaxRecords(data);
        const path = records.get("path");
        const linkPath = records.get("linkpath");
        const paxSize = records.get("size");
        if (path !== undefined) pending.path = path;
        if (linkPath !== undefined) pending.linkPath = linkPath;
        if (paxSize !== undefined) {
          if (!/^\d+$/.test(paxSize) || !Number.isSafeInteger(Number(paxSize))) {
            throw new ArchiveRejected("archive has a malformed pax header");
          }
          pending.size = Number(paxSize);
        }
      } else if (header.type === "gnu-long-name") {
        pending.path = cString(data);
      } else if (header.type === "gnu-long-link") {
        pending.linkPath = cString(data);
      }
      // Global pax headers (`g`) only carry defaults such as mtime or charset: ignored.
      continue;
    }

    const rawName = pending.path ?? header.name;
    pending = {};
    entries++;
    if (entries > lim.maxEntries) throw new ArchiveRejected(`archive has more than ${lim.maxEntries} entries`);

    const normalised = normaliseEntryPath(rawName);
    if (!normalised.ok) throw new ArchiveRejected(normalised.error);
    const path = normalised.path;
    const shown = path === "" ? rawName : path;

    switch (header.type) {
      case "symlink":
        throw new ArchiveRejected(`archive entry "${shown}" is a symbolic link`);
      case "hardlink":
        throw new ArchiveRejected(`archive entry "${shown}" is a hard link`);
      case "char-device":
      case "block-device":
        throw new ArchiveRejected(`archive entry "${shown}" is a device`);
      case "fifo":
        throw new ArchiveRejected(`archive entry "${shown}" is a FIFO`);
      case "unsupported":
        throw new ArchiveRejected(
          `archive entry "${shown}" has an unsupported type ${JSON.stringify(header.typeflag)}`,
        );
      case "directory":
        // Directories carry no data, but a hostile header could claim some.
        countData(size);
        await skipData(size);
        continue;
      case "file":
        break;
    }

    // The per-file limit is the more specific message, so it is checked first.
    const isTf = path.endsWith(".tf");
    if (isTf && size > lim.maxTfFileBytes) {
      throw new ArchiveRejected(`${path} is larger than ${formatBytes(lim.maxTfFileBytes)}`);
    }
    countData(size);
    if (isTf) {
      const data = await readData(size);
      if (path.includes("/")) {
        files.add(path, data); // decoded only if a module call reaches its directory
      } else {
        let text: string;
        try {
          text = fromUtf8(data);
        } catch {
          throw new ArchiveRejected(`${path} is not valid UTF-8`);
        }
        files.add(path, text);
      }
    } else {
      if (path.endsWith(".tf.json")) tfJsonFiles.push(path);
      await skipData(size);
    }
  }

  if (![...files.keys()].some((p) => !p.includes("/"))) throw new ArchiveRejected("no .tf file at the archive root");
  return { ok: true, files, tfJsonFiles, entries, unpackedBytes: unpacked };
}

const lossyUtf8 = new TextDecoder();

/** GNU long names are NUL-terminated inside their data (decoded lossily, as in tar-header.ts). */
function cString(data: Uint8Array): string {
  const nul = data.indexOf(0);
  return lossyUtf8.decode(nul < 0 ? data : data.subarray(0, nul));
}
