/**
 * Streaming encryption of run data at rest (decision N20 "At rest"): an object is encrypted
 * under its own random 256-bit data key in segments of 64 KiB of plaintext, each sealed with
 * AES-256-GCM, so it can be written and read as a stream without holding it whole.
 *
 * Format (every integer big-endian):
 *
 *     header   = "KWS1" (4 bytes) || nonce prefix (8 random bytes)
 *     segment  = AES-256-GCM(data key, iv = nonce prefix || u32 index,
 *                            aad = "keyway-segment-v1" || u32 index || u8 last,
 *                            plaintext of 65,536 bytes, or 0–65,536 for the last) → ct || 16-byte tag
 *     object   = header || segment 0 || segment 1 || … || last segment
 *
 * The index in the IV and the associated data refuses segments reordered or spliced from
 * another position; the last-segment flag refuses an object truncated at a segment
 * boundary (the segment that now ends the object was sealed as "not last"). An empty
 * plaintext is one empty last segment. This is the construction of Hoang, Reyhanitabar,
 * Rogaway and Vizár, "Online Authenticated-Encryption and its Nonce-Reuse
 * Misuse-Resistance" (CRYPTO 2015, the STREAM construction).
 */

/** Plaintext bytes per segment. */
export const SEGMENT_SIZE = 65_536;
const TAG_SIZE = 16;
const MAGIC = new Uint8Array([0x4b, 0x57, 0x53, 0x31]); // "KWS1"
const HEADER_SIZE = MAGIC.length + 8;
const AAD_LABEL = new TextEncoder().encode("keyway-segment-v1");

/** Why an encrypted object was refused (altered, reordered, truncated, or not one of ours). */
export class SegmentError extends Error {}

/** The encrypted size of a plaintext of `plainLength` bytes. */
export function encryptedLength(plainLength: number): number {
  const segments = Math.max(1, Math.ceil(plainLength / SEGMENT_SIZE));
  return HEADER_SIZE + plainLength + segments * TAG_SIZE;
}

/** A new random data key (32 raw bytes). */
export function newDataKey(): Uint8Array<ArrayBuffer> {
  return crypto.getRandomValues(new Uint8Array(32));
}

/** The AES-GCM key of raw data key bytes. */
export function importDataKey(raw: Uint8Array<ArrayBuffer>): Promise<CryptoKey> {
  if (raw.length !== 32) throw new SegmentError("a data key is 32 bytes");
  return crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
}

function ivOf(prefix: Uint8Array, index: number): Uint8Array<ArrayBuffer> {
  const iv = new Uint8Array(12);
  iv.set(prefix, 0);
  new DataView(iv.buffer).setUint32(8, index);
  return iv;
}

function aadOf(index: number, last: boolean): Uint8Array<ArrayBuffer> {
  const aad = new Uint8Array(AAD_LABEL.length + 5);
  aad.set(AAD_LABEL, 0);
  const view = new DataView(aad.buffer);
  view.setUint32(AAD_LABEL.length, index);
  view.setUint8(AAD_LABEL.length + 4, last ? 1 : 0);
  return aad;
}

/** Bytes gathered from a stream's chunks, taken from the front in exact sizes. */
class ByteQueue {
  private chunks: Uint8Array[] = [];
  length = 0;

  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.length += chunk.length;
  }

  /** The first `n` bytes (n ≤ length), removed. */
  take(n: number): Uint8Array<ArrayBuffer> {
    const out = new Uint8Array(n);
    let filled = 0;
    while (filled < n) {
      const head = this.chunks[0]!;
      const want = n - filled;
      if (head.length <= want) {
        out.set(head, filled);
        filled += head.length;
        this.chunks.shift();
      } else {
        out.set(head.subarray(0, want), filled);
        this.chunks[0] = head.subarray(want);
        filled += want;
      }
    }
    this.length -= n;
    return out;
  }
}

/**
 * A stream that encrypts what is written to it. A segment is sealed only once the next
 * byte has arrived (or the stream ended), so the last one is known to be last.
 */
export function encryptingStream(key: CryptoKey): TransformStream<Uint8Array, Uint8Array> {
  const prefix = crypto.getRandomValues(new Uint8Array(8));
  const pending = new ByteQueue();
  let index = 0;
  const seal = async (plain: Uint8Array<ArrayBuffer>, last: boolean) => {
    const sealed = await crypto.subtle.encrypt(
      { name: "AES-GCM", iv: ivOf(prefix, index), additionalData: aadOf(index, last) },
      key,
      plain,
    );
    index++;
    return new Uint8Array(sealed);
  };
  return new TransformStream({
    start(controller) {
      const header = new Uint8Array(HEADER_SIZE);
      header.set(MAGIC, 0);
      header.set(prefix, MAGIC.length);
      controller.enqueue(header);
    },
    async transform(chunk, controller) {
      pending.push(chunk);
      while (pending.length > SEGMENT_SIZE) controller.enqueue(await seal(pending.take(SEGMENT_SIZE), false));
    },
    async flush(controller) {
      controller.enqueue(await seal(pending.take(pending.length), true));
    },
  });
}

/**
 * A stream that decrypts what {@link encryptingStream} wrote; it errors with a
 * {@link SegmentError} on any alteration, reordering or truncation, before yielding the
 * segment concerned (a consumer may have received earlier, authentic segments).
 */
export function decryptingStream(key: CryptoKey): TransformStream<Uint8Array, Uint8Array> {
  const pending = new ByteQueue();
  let prefix: Uint8Array | null = null;
  let index = 0;
  const open = async (sealed: Uint8Array<ArrayBuffer>, last: boolean) => {
    if (!prefix) throw new SegmentError("encrypted object without a header");
    try {
      const plain = await crypto.subtle.decrypt(
        { name: "AES-GCM", iv: ivOf(prefix, index), additionalData: aadOf(index, last) },
        key,
        sealed,
      );
      index++;
      return new Uint8Array(plain);
    } catch {
      throw new SegmentError(`segment ${index} does not authenticate (altered, reordered or truncated)`);
    }
  };
  const readHeader = () => {
    if (prefix || pending.length < HEADER_SIZE) return;
    const header = pending.take(HEADER_SIZE);
    if (!MAGIC.every((b, i) => header[i] === b)) throw new SegmentError("not an encrypted object of this format");
    prefix = header.subarray(MAGIC.length);
  };
  return new TransformStream({
    async transform(chunk, controller) {
      pending.push(chunk);
      readHeader();
      if (!prefix) return;
      while (pending.length > SEGMENT_SIZE + TAG_SIZE) {
        controller.enqueue(await open(pending.take(SEGMENT_SIZE + TAG_SIZE), false));
      }
    },
    async flush(controller) {
      readHeader();
      if (!prefix || pending.length < TAG_SIZE) throw new SegmentError("encrypted object is truncated");
      controller.enqueue(await open(pending.take(pending.length), true));
    },
  });
}

/** Run `bytes` through a transform and gather the output. */
async function through(bytes: Uint8Array, transform: TransformStream<Uint8Array, Uint8Array>): Promise<Uint8Array> {
  const out = new Response(new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(transform));
  return new Uint8Array(await out.arrayBuffer());
}

/** Encrypt a whole plaintext held in memory (small objects, tests). */
export function encryptBytes(key: CryptoKey, plaintext: Uint8Array): Promise<Uint8Array> {
  return through(plaintext, encryptingStream(key));
}

/** Decrypt a whole object held in memory; throws SegmentError when it does not authenticate. */
export async function decryptBytes(key: CryptoKey, object: Uint8Array): Promise<Uint8Array> {
  try {
    return await through(object, decryptingStream(key));
  } catch (err) {
    if (err instanceof SegmentError) throw err;
    throw new SegmentError(err instanceof Error ? err.message : String(err));
  }
}
