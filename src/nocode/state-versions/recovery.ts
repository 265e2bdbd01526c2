/**
 * Reading a recovery upload (decision N20: `POST /workspaces/:id/state-versions`, HCP
 * Terraform's shape, a state of up to 64 MiB) in bounded memory. The request document is
 * scanned as it arrives (src/lib/json/stream-scan.ts); the base64 of `data.attributes.state`
 * is decoded piece by piece and each decoded piece goes at once to the state's MD5, its
 * summary and the segment encryptor writing R2 (../agents/state-upload.ts storeStateStream,
 * the agent's state upload's path too). Neither the document,
 * its base64 nor the state is ever held whole: what is held is one body chunk, one 8 MiB
 * R2 part, the document around the state (at most 64 KiB) and the state's summary.
 */
import { fromBase64 } from "../../lib/bytes";
import { BodyError, MAX_JSON_DEPTH } from "../../lib/http/body";
import {
  type JsonPath,
  type JsonScalar,
  JsonScanError,
  JsonScanner,
  JsonValueBuilder,
} from "../../lib/json/stream-scan";
import { ScannedUploadError } from "../agents/run-data";
import { type StoredState, storeStateStream } from "../agents/state-upload";
import { invalidAttribute, NocodeError } from "../errors";

/** N20: the largest state a recovery upload takes. */
export const RECOVERY_STATE_MAX = 64 * 1024 * 1024;
/** The document around the state's base64 (type, serial, md5, lineage …). */
const DOCUMENT_REST_MAX = 64 * 1024;
/** The largest request body: the state's base64 (4 characters per 3 bytes) and the document around it. */
export const RECOVERY_BODY_MAX = Math.ceil(RECOVERY_STATE_MAX / 3) * 4 + DOCUMENT_REST_MAX;

/** What the document's `state` reads as once streamed: non-empty when it was a non-empty string. */
const STREAMED_STATE = "(streamed)";

const isStatePath = (path: JsonPath) =>
  path.length === 3 && path[0] === "data" && path[1] === "attributes" && path[2] === "state";

/** What a recovery upload's body came to: its document, and its state stored in R2. */
export interface RecoveryUpload extends StoredState {
  /** The document; `data.attributes.state` is a placeholder (the state itself is in `object`). */
  document: unknown;
}

/**
 * Read a recovery upload's body, storing its state encrypted in R2 as it arrives. Throws
 * BodyError (400/413) for a body that is not a JSON document or too large, NocodeError 413
 * for a state over {@link RECOVERY_STATE_MAX}, and 422 for a `state` that is not base64 of
 * a state; nothing is kept then. The caller deletes `object` if it refuses the upload later.
 */
export async function readRecoveryUpload(
  env: Pick<Env, "RUN_DATA" | "KEYWAY_KEK">,
  request: Request,
): Promise<RecoveryUpload> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > RECOVERY_BODY_MAX)
    throw new BodyError({ kind: "too_large", limit: RECOVERY_BODY_MAX });

  // The request document, built as it is scanned, with the state's base64 left out.
  const tree = new JsonValueBuilder();
  let base64 = "";
  let base64Chars = 0;
  let padded = false;
  let stateSeen = false;
  const documentScanner = new JsonScanner(
    {
      stringAt: (path) => {
        if (!isStatePath(path)) return "whole";
        if (stateSeen) throw new JsonScanError("data.attributes.state is given twice");
        stateSeen = true;
        return "pieces";
      },
      piece: (text) => {
        base64 += text;
        base64Chars += text.length;
      },
      open: (path, kind) => tree.open(path, kind),
      close: () => tree.close(),
      scalar: (path: JsonPath, value: JsonScalar, skipped: boolean) =>
        tree.attach(path, skipped ? (base64Chars > 0 ? STREAMED_STATE : "") : value),
    },
    { maxString: DOCUMENT_REST_MAX, maxDepth: MAX_JSON_DEPTH },
  );

  const bodyText = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  let bodyChars = 0;
  let bodyBytes = 0;
  /** The first refusal, kept: the stream's error reaches the R2 writer, not necessarily as thrown. */
  let refusal: unknown = null;

  const scanDocument = (scan: () => void) => {
    try {
      scan();
    } catch (err) {
      if (err instanceof JsonScanError) throw new BodyError({ kind: "malformed", detail: err.message });
      if (err instanceof TypeError) throw new BodyError({ kind: "malformed", detail: "the body is not UTF-8" });
      throw err;
    }
    if (bodyChars - base64Chars > DOCUMENT_REST_MAX)
      throw new BodyError({ kind: "too_large", limit: RECOVERY_BODY_MAX });
  };
  /** Decode the base64 gathered so far (all of it when `final`), in whole groups of four. */
  const decode = (final: boolean): Uint8Array => {
    const usable = final ? base64.length : base64.length - (base64.length % 4);
    if (usable === 0) return new Uint8Array(0);
    if (padded) throw invalidAttribute("state", "State must be base64");
    const group = base64.slice(0, usable);
    base64 = base64.slice(usable);
    padded = group.endsWith("=");
    try {
      return fromBase64(group);
    } catch {
      throw invalidAttribute("state", "State must be base64");
    }
  };
  const body = request.body?.getReader();
  const plain = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        for (;;) {
          const read = body ? await body.read() : { done: true as const, value: undefined };
          if (read.done) {
            scanDocument(() => {
              const rest = bodyText.decode();
              bodyChars += rest.length;
              documentScanner.write(rest);
              documentScanner.end();
            });
            const last = decode(true);
            if (last.length > 0) controller.enqueue(last);
            controller.close();
            return;
          }
          bodyBytes += read.value.length;
          if (bodyBytes > RECOVERY_BODY_MAX) throw new BodyError({ kind: "too_large", limit: RECOVERY_BODY_MAX });
          scanDocument(() => {
            const text = bodyText.decode(read.value, { stream: true });
            bodyChars += text.length;
            documentScanner.write(text);
          });
          const bytes = decode(false);
          if (bytes.length === 0) continue;
          controller.enqueue(bytes);
          return;
        }
      } catch (err) {
        refusal ??= err;
        await body?.cancel().catch(() => {});
        throw err;
      }
    },
  });

  try {
    const stored = await storeStateStream(env, plain, RECOVERY_STATE_MAX, "64 MiB (67108864 bytes)");
    // The document is whole once its body has been read to the end, which storing the state did.
    return { document: tree.root, ...stored };
  } catch (err) {
    if (refusal) throw refusal;
    if (!(err instanceof ScannedUploadError)) throw err;
    if (err.kind === "too_large") throw new NocodeError("payload_too_large", err.message);
    throw invalidAttribute("state", err.message);
  }
}
