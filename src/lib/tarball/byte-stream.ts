/**
 * Streaming plumbing for the tarball extractor: gunzip through the platform's
 * `DecompressionStream`, driven by demand, and read exact byte counts from the result.
 *
 * Why not `input.pipeThrough(new DecompressionStream("gzip"))`: neither workerd nor Node
 * applies backpressure from the decompressor's readable side to its writable side, so a
 * pipe inflates the whole input as fast as it can, whether or not anyone reads. For a
 * 10 MiB gzip bomb that is gigabytes in a 128 MB isolate. Here input is written one small
 * slice at a time and only while a read is waiting for output, so inflation stops when
 * the extractor stops reading.
 */
import { joinBytes } from "../bytes";

/** gzip member magic (RFC 1952 §2.3.1). */
const GZIP_MAGIC_1 = 0x1f;
const GZIP_MAGIC_2 = 0x8b;

/**
 * Bounds on the pieces fed to the decompressor. Deflate inflates at most about 1032:1; the
 * slice size adapts to the ratio seen so far so that one write produces about
 * TARGET_OUTPUT_PER_WRITE, which bounds how far inflation can run ahead of the reader
 * while keeping ordinary (5–10:1) archives to few writes.
 */
const MIN_SLICE = 1024;
const FIRST_SLICE = 4 * 1024;
const MAX_SLICE = 64 * 1024;
const TARGET_OUTPUT_PER_WRITE = 1024 * 1024;

/** Raised when the decompressor rejects the data; its message is for the user. */
export class GzipDataError extends Error {
  override name = "GzipDataError";
}

function gzipError(cause: unknown): GzipDataError {
  return new GzipDataError(`corrupt gzip data (${cause instanceof Error ? cause.message : String(cause)})`);
}

/** A source of byte chunks that can be stopped. */
export interface ChunkSource {
  /** Next chunk, or `null` at the end. */
  next(): Promise<Uint8Array | null>;
  /** Stops the source and releases what it holds. Never throws. */
  cancel(): Promise<void>;
}

/** Input that hands out pieces of a requested size. */
interface SlicedInput {
  /** Up to `size` bytes, or `null` at the end. */
  next(size: number): Promise<Uint8Array | null>;
  cancel(): Promise<void>;
}

/** Slices in-memory bytes or a stream's chunks into pieces of the requested size. */
function slicedInput(first: Uint8Array, rest: ReadableStreamDefaultReader<Uint8Array> | null): SlicedInput {
  let current = first;
  let offset = 0;
  return {
    async next(size) {
      while (offset >= current.length) {
        if (rest === null) return null;
        const { done, value } = await rest.read();
        if (done) return null;
        current = value;
        offset = 0;
      }
      const end = Math.min(offset + size, current.length);
      const slice = current.subarray(offset, end);
      offset = end;
      return slice;
    },
    async cancel() {
      await rest?.cancel().catch(() => {});
    },
  };
}

/**
 * Waits until output that the decompressor has already produced can reach a pending read.
 * Microtasks suffice when it is queued; workerd delivers a write's output on a later turn
 * of its event loop, hence the macrotask (setImmediate where it exists: Node clamps
 * `setTimeout(0)` to 1 ms).
 */
async function letOutputArrive(isSettled: () => boolean): Promise<void> {
  for (let i = 0; i < 3 && !isSettled(); i++) await Promise.resolve();
  if (isSettled()) return;
  const g = globalThis as { setImmediate?: (fn: () => void) => unknown };
  await new Promise<void>((resolve) => (g.setImmediate ? g.setImmediate(resolve) : setTimeout(resolve, 0)));
}

/** Demand-driven gunzip: see the file comment. */
class DemandGunzip implements ChunkSource {
  readonly #input: SlicedInput;
  readonly #writer: WritableStreamDefaultWriter<BufferSource>;
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  #inputDone = false;
  #inflight: Promise<unknown> = Promise.resolve();
  /** The first failed write or close: the decompressor rejected the data. */
  #writeError: unknown = undefined;
  #bytesIn = 0;
  #bytesOut = 0;

  constructor(input: SlicedInput) {
    this.#input = input;
    const ds = new DecompressionStream("gzip");
    this.#writer = ds.writable.getWriter();
    this.#reader = ds.readable.getReader() as ReadableStreamDefaultReader<Uint8Array>;
  }

  /** Next slice size: about TARGET_OUTPUT_PER_WRITE at the ratio seen so far. */
  #sliceSize(): number {
    if (this.#bytesIn === 0) return FIRST_SLICE;
    const ratio = Math.max(1, this.#bytesOut / this.#bytesIn);
    return Math.min(MAX_SLICE, Math.max(MIN_SLICE, Math.floor(TARGET_OUTPUT_PER_WRITE / ratio)));
  }

  async next(): Promise<Uint8Array | null> {
    const pending = this.#reader.read();
    let settled = false;
    const settle = pending.then(
      () => {
        settled = true;
      },
      () => {
        settled = true;
      },
    );
    const isSettled = () => settled;
    // Output already produced by an earlier slice arrives without feeding more.
    await letOutputArrive(isSettled);
    const failed = (cause: unknown) => {
      this.#writeError ??= cause ?? new Error("write failed");
    };
    while (!settled && !this.#inputDone && this.#writeError === undefined) {
      // One write in flight at a time. A runtime whose write waits on the reader is
      // released by the pending read, hence the race.
      await Promise.race([this.#inflight, settle]);
      if (settled) break;
      const slice = await this.#input.next(this.#sliceSize());
      if (slice === null) {
        this.#inputDone = true;
        // A truncated stream makes the decompressor error, which rejects `pending`.
        this.#inflight = this.#writer.close().catch(failed);
        break;
      }
      this.#bytesIn += slice.length;
      this.#inflight = this.#writer.write(slice as Uint8Array<ArrayBuffer>).catch(failed);
      await Promise.race([this.#inflight, settle]);
      await letOutputArrive(isSettled);
    }
    // Normally an error reaches `pending` too; should a runtime only fail the write side,
    // report it instead of waiting forever for output that cannot come.
    if (!settled) await Promise.race([settle, this.#inflight]);
    if (!settled && this.#writeError !== undefined) throw gzipError(this.#writeError);
    let result: ReadableStreamReadResult<Uint8Array>;
    try {
      result = await pending;
    } catch (cause) {
      throw gzipError(cause);
    }
    if (result.done) return null;
    this.#bytesOut += result.value.length;
    return result.value;
  }

  async cancel(): Promise<void> {
    this.#inputDone = true;
    await Promise.all([
      this.#reader.cancel().catch(() => {}),
      this.#writer.abort().catch(() => {}),
      this.#input.cancel(),
    ]);
  }
}

/** Result of {@link openGunzip}. */
export type GunzipStart = { ok: true; source: ChunkSource } | { ok: false; error: string };

function isGzipMagic(head: Uint8Array): boolean {
  return head.length >= 2 && head[0] === GZIP_MAGIC_1 && head[1] === GZIP_MAGIC_2;
}

/**
 * Checks the gzip magic, then returns a source of decompressed chunks that inflates only
 * on demand. Cancelling it cancels the input stream too.
 */
export async function openGunzip(input: Uint8Array | ReadableStream<Uint8Array>): Promise<GunzipStart> {
  if (input instanceof Uint8Array) {
    if (!isGzipMagic(input)) return { ok: false, error: "not a gzip archive" };
    return { ok: true, source: new DemandGunzip(slicedInput(input, null)) };
  }
  // Read until two bytes are known; chunks may be tiny.
  const reader = input.getReader();
  const parts: Uint8Array[] = [];
  let length = 0;
  while (length < 2) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    length += value.length;
  }
  const first = joinBytes(parts);
  if (!isGzipMagic(first)) {
    await reader.cancel().catch(() => {});
    return { ok: false, error: "not a gzip archive" };
  }
  return { ok: true, source: new DemandGunzip(slicedInput(first, reader)) };
}

/**
 * Reads exact byte counts from a chunk source, buffering only what a caller asked for.
 * `skip` discards without accumulating, so skipping a large entry costs no memory.
 */
export class ByteStreamReader {
  readonly #source: ChunkSource;
  #chunk: Uint8Array = new Uint8Array(0);
  #offset = 0;
  #done = false;

  constructor(source: ChunkSource) {
    this.#source = source;
  }

  /** Ensures the current chunk has unread bytes; false at end of stream. */
  async #refill(): Promise<boolean> {
    while (this.#offset >= this.#chunk.length) {
      if (this.#done) return false;
      const chunk = await this.#source.next();
      if (chunk === null) {
        this.#done = true;
        return false;
      }
      this.#chunk = chunk;
      this.#offset = 0;
    }
    return true;
  }

  /** Reads up to `length` bytes; fewer only at end of stream. */
  async read(length: number): Promise<Uint8Array> {
    const out = new Uint8Array(length);
    let filled = 0;
    while (filled < length && (await this.#refill())) {
      const n = Math.min(length - filled, this.#chunk.length - this.#offset);
      out.set(this.#chunk.subarray(this.#offset, this.#offset + n), filled);
      this.#offset += n;
      filled += n;
    }
    return filled === length ? out : out.subarray(0, filled);
  }

  /** Discards up to `length` bytes; returns how many were discarded. */
  async skip(length: number): Promise<number> {
    let skipped = 0;
    while (skipped < length && (await this.#refill())) {
      const n = Math.min(length - skipped, this.#chunk.length - this.#offset);
      this.#offset += n;
      skipped += n;
    }
    return skipped;
  }

  /** Stops the source (decompressor and input). Never throws. */
  async cancel(): Promise<void> {
    this.#done = true;
    await this.#source.cancel();
  }
}
