/**
 * Reading a recovery upload (decision N20: `POST /workspaces/:id/state-versions`, HCP
 * Terraform's shape, a state of up to 64 MiB) in bounded memory. The request document is
 * scanned as it arrives (src/lib/json/stream-scan.ts); the base64 of `data.attributes.state`
 * is decoded piece by piece and each decoded piece goes at once to the state's MD5, to the
 * state's summary (src/lib/terraform/json-plan.ts StateSummaryScanner) and to the segment
 * encryptor writing R2 (../agents/run-data.ts storeRunDataUnsized). Neither the document,
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
import { EngineDocumentError, type StateSummary, StateSummaryScanner } from "../../lib/terraform/json-plan";
import { type RunDataRow, storeRunDataUnsized } from "../agents/run-data";
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
export interface RecoveryUpload {
  /** The document; `data.attributes.state` is a placeholder (the state itself is in `object`). */
  document: unknown;
  object: RunDataRow;
  /** MD5 (hex) of the state's bytes. */
  md5: string;
  /** The state's summary, or why it is not a state (its document is judged first). */
  summary: StateSummary | { invalid: string };
}

const hex = (bytes: ArrayBuffer) => [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");

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
  const stateText = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  const summary = new StateSummaryScanner();
  const md5 = new crypto.DigestStream("MD5");
  const md5Writer = md5.getWriter();
  let bodyChars = 0;
  let bodyBytes = 0;
  let stateBytes = 0;
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
  const feedState = async (bytes: Uint8Array, final: boolean) => {
    stateBytes += bytes.length;
    if (stateBytes > RECOVERY_STATE_MAX)
      throw new NocodeError(
        "payload_too_large",
        `the state is larger than the limit of 64 MiB (${RECOVERY_STATE_MAX} bytes)`,
      );
    await md5Writer.write(bytes);
    try {
      summary.write(stateText.decode(bytes, { stream: !final }));
    } catch (err) {
      if (err instanceof EngineDocumentError) throw invalidAttribute("state", err.message);
      if (err instanceof TypeError) throw invalidAttribute("state", "the state is not UTF-8");
      throw err;
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
            await feedState(last, true);
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
          await feedState(bytes, false);
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

  let object: RunDataRow;
  try {
    object = await storeRunDataUnsized(env, "state", plain);
  } catch (err) {
    throw refusal ?? err;
  }
  try {
    await md5Writer.close();
    let state: StateSummary | { invalid: string };
    try {
      state = summary.end();
    } catch (err) {
      if (!(err instanceof EngineDocumentError)) throw err;
      state = { invalid: err.message };
    }
    return { document: tree.root, object, md5: hex(await md5.digest), summary: state };
  } catch (err) {
    await env.RUN_DATA.delete(object.r2Key);
    throw err;
  }
}
