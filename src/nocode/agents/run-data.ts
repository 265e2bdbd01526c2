/**
 * Run data at rest (decision N20 "At rest"): states, plan files, lock files, JSON plans and
 * log chunks live in R2 (binding RUN_DATA), each encrypted under its own random data key in
 * 64 KiB AES-256-GCM segments (src/lib/crypto/segments.ts), streamed both ways. The data key
 * is stored in D1 (`run_data_objects.data_key_encrypted`) wrapped under KEYWAY_KEK with the
 * context `data-key:<object id>`, a column of B11's rewrap list (src/db/secrets-at-rest.ts),
 * so a rewrap touches D1 only, never R2.
 */
import type { Db } from "../../db/client";
import { runDataObjects } from "../../db/schema/nocode";
import { fromBase64, toBase64 } from "../../lib/bytes";
import { decryptSecret, encryptSecret } from "../../lib/crypto/kek";
import {
  decryptingStream,
  encryptedLength,
  encryptingStream,
  importDataKey,
  newDataKey,
} from "../../lib/crypto/segments";
import { EngineDocumentError } from "../../lib/terraform/json-plan";
import { newId } from "../ids";

export type RunDataRow = typeof runDataObjects.$inferSelect;
export type RunDataKind = RunDataRow["kind"];

/** The AES-GCM context a data key is wrapped with (B2: bound to its row). */
export const dataKeyContext = (objectId: string) => `data-key:${objectId}`;

type RunDataEnv = Pick<Env, "RUN_DATA" | "KEYWAY_KEK">;

/**
 * Encrypt `body` (exactly `length` bytes) into a new R2 object. Returns its row, not yet
 * stored: the caller writes it in the D1 batch that records what the object is for. A body
 * shorter or longer than `length` fails the write (FixedLengthStream), and nothing is kept.
 */
export async function storeRunData(
  env: RunDataEnv,
  kind: RunDataKind,
  body: ReadableStream<Uint8Array>,
  length: number,
  now = Date.now(),
): Promise<RunDataRow> {
  const id = newId("rdo");
  const raw = newDataKey();
  const key = await importDataKey(raw);
  const r2Key = `run-data/${kind}/${id}`;
  const sized = new FixedLengthStream(encryptedLength(length));
  const piped = body.pipeThrough(encryptingStream(key)).pipeTo(sized.writable);
  try {
    await Promise.all([env.RUN_DATA.put(r2Key, sized.readable), piped]);
  } catch (err) {
    await env.RUN_DATA.delete(r2Key).catch(() => {});
    throw err;
  }
  return {
    id,
    kind,
    r2Key,
    dataKeyEncrypted: await encryptSecret(env.KEYWAY_KEK, dataKeyContext(id), toBase64(raw)),
    size: length,
    createdAt: now,
  };
}

/**
 * R2 multipart part size: R2 wants every part but the last of one size, at least 5 MiB
 * (https://developers.cloudflare.com/r2/objects/multipart-objects/). It is also what an
 * unsized write holds in memory at most.
 */
const PART_SIZE = 8 * 1024 * 1024;

/**
 * Encrypt `body`, whose length is not known beforehand (a state decoded from a request's
 * base64 as it arrives), into a new R2 object, holding at most one 8 MiB part in memory:
 * an object that fits one part is written at once, a larger one as an R2 multipart upload.
 * An error of `body` fails the write and nothing is kept. The row is returned as by
 * {@link storeRunData}.
 */
export async function storeRunDataUnsized(
  env: RunDataEnv,
  kind: RunDataKind,
  body: ReadableStream<Uint8Array>,
  now = Date.now(),
): Promise<RunDataRow> {
  const id = newId("rdo");
  const raw = newDataKey();
  const key = await importDataKey(raw);
  const r2Key = `run-data/${kind}/${id}`;
  let length = 0;
  const counted = body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        length += chunk.length;
        controller.enqueue(chunk);
      },
    }),
  );
  const reader = counted.pipeThrough(encryptingStream(key)).getReader();
  let upload: R2MultipartUpload | null = null;
  const parts: R2UploadedPart[] = [];
  const part = new Uint8Array(PART_SIZE);
  let filled = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      for (let offset = 0; offset < value.length; ) {
        const n = Math.min(PART_SIZE - filled, value.length - offset);
        part.set(value.subarray(offset, offset + n), filled);
        filled += n;
        offset += n;
        if (filled === PART_SIZE) {
          upload ??= await env.RUN_DATA.createMultipartUpload(r2Key);
          parts.push(await upload.uploadPart(parts.length + 1, part));
          // The part was sent: its buffer is reused (one 8 MiB buffer for the whole object).
          filled = 0;
        }
      }
    }
    if (!upload) await env.RUN_DATA.put(r2Key, part.subarray(0, filled));
    else {
      if (filled > 0) parts.push(await upload.uploadPart(parts.length + 1, part.subarray(0, filled)));
      await upload.complete(parts);
    }
  } catch (err) {
    await reader.cancel(err).catch(() => {});
    if (upload) await upload.abort().catch(() => {});
    throw err;
  }
  return {
    id,
    kind,
    r2Key,
    dataKeyEncrypted: await encryptSecret(env.KEYWAY_KEK, dataKeyContext(id), toBase64(raw)),
    size: length,
    createdAt: now,
  };
}

/** Why an upload taken as a stream was refused: larger than its limit, or not what it should be. */
export class ScannedUploadError extends Error {
  constructor(
    readonly kind: "too_large" | "invalid",
    message: string,
  ) {
    super(message);
  }
}

/** What {@link storeScannedStream} stored: the object, the MD5 (hex) of its bytes, and what the scanner made of them. */
export interface ScannedUpload<T> {
  object: RunDataRow;
  md5: string;
  summary: T;
}

/** A reader of a JSON document in pieces (src/lib/terraform/json-plan.ts) that throws EngineDocumentError. */
interface DocumentScanner<T> {
  write(text: string): void;
  end(): T;
}

/**
 * Store an upload of unknown length as its bytes arrive (N20: states and JSON plans of up
 * to 64 MiB, in bounded memory): each piece goes at once to its size check, its MD5
 * (crypto.DigestStream), `scanner` (as UTF-8 text) and the encrypted R2 object
 * ({@link storeRunDataUnsized}, at most one 8 MiB part held). Throws
 * {@link ScannedUploadError} when the bytes pass `limit` or the scanner refuses them
 * (nothing kept), or the error of `body` itself.
 */
export async function storeScannedStream<T>(
  env: RunDataEnv,
  kind: RunDataKind,
  body: ReadableStream<Uint8Array>,
  bounds: { limit: number; limitText: string; what: string },
  scanner: DocumentScanner<T>,
): Promise<ScannedUpload<T>> {
  const md5 = new crypto.DigestStream("MD5");
  const md5Writer = md5.getWriter();
  const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  let size = 0;
  let refusal: ScannedUploadError | null = null;
  const refuse = (why: ScannedUploadError["kind"], message: string) => {
    refusal ??= new ScannedUploadError(why, message);
    return refusal;
  };
  const scan = (read: () => void) => {
    try {
      read();
    } catch (err) {
      if (err instanceof EngineDocumentError)
        throw refuse("invalid", `the ${bounds.what} is not valid: ${err.message}`);
      if (err instanceof TypeError) throw refuse("invalid", `the ${bounds.what} is not UTF-8`);
      throw err;
    }
  };
  const intake = new TransformStream<Uint8Array, Uint8Array>({
    async transform(chunk, controller) {
      size += chunk.length;
      if (size > bounds.limit)
        throw refuse("too_large", `the ${bounds.what} is larger than the limit of ${bounds.limitText}`);
      await md5Writer.write(chunk);
      scan(() => scanner.write(text.decode(chunk, { stream: true })));
      controller.enqueue(chunk);
    },
    flush() {
      scan(() => scanner.write(text.decode()));
    },
  });
  let object: RunDataRow;
  try {
    object = await storeRunDataUnsized(env, kind, body.pipeThrough(intake));
  } catch (err) {
    throw refusal ?? err;
  }
  try {
    await md5Writer.close();
    let summary: T | undefined;
    scan(() => {
      summary = scanner.end();
    });
    const digest = new Uint8Array(await md5.digest);
    return { object, md5: [...digest].map((b) => b.toString(16).padStart(2, "0")).join(""), summary: summary as T };
  } catch (err) {
    await env.RUN_DATA.delete(object.r2Key);
    throw err;
  }
}

/** {@link storeRunData} of bytes held in memory. */
export function storeRunDataBytes(env: RunDataEnv, kind: RunDataKind, bytes: Uint8Array, now = Date.now()) {
  return storeRunData(env, kind, new Blob([bytes as Uint8Array<ArrayBuffer>]).stream(), bytes.length, now);
}

/** The plaintext of a stored object as a stream, or null when its R2 object is gone. */
export async function openRunData(env: RunDataEnv, row: RunDataRow): Promise<ReadableStream<Uint8Array> | null> {
  const raw = fromBase64(await decryptSecret(env.KEYWAY_KEK, dataKeyContext(row.id), row.dataKeyEncrypted));
  const object = await env.RUN_DATA.get(row.r2Key);
  if (!object) return null;
  return object.body.pipeThrough(decryptingStream(await importDataKey(raw)));
}

/** The plaintext of a stored object in memory (small objects: log chunks, lock files, states to compare). */
export async function readRunData(env: RunDataEnv, row: RunDataRow): Promise<Uint8Array | null> {
  const stream = await openRunData(env, row);
  return stream ? new Uint8Array(await new Response(stream).arrayBuffer()) : null;
}

/** Insert statement of a stored object's row (to batch). */
export function insertRunDataQuery(db: Db, row: RunDataRow) {
  return db.insert(runDataObjects).values(row);
}
