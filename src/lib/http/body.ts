/**
 * Reading JSON request bodies within decision B5's limit (1 MiB), checked before parsing:
 * first the declared Content-Length, then the bytes actually streamed.
 */

import { fromUtf8, joinBytes } from "../bytes";

/** B5: JSON request bodies on both APIs. */
export const MAX_JSON_BODY_BYTES = 1024 * 1024;

/** B9: the deepest nesting of arrays and objects a JSON body may have, on both APIs. */
export const MAX_JSON_DEPTH = 64;

export type BodyProblem =
  | { kind: "too_large"; limit: number }
  | { kind: "malformed"; detail: string }
  | { kind: "not_object" };

/** Thrown by readJsonObject; each API renders it in its own error format. */
export class BodyError extends Error {
  constructor(readonly problem: BodyProblem) {
    super(problem.kind);
  }
}

/**
 * Read the raw body, refusing more than `limit` bytes without buffering the rest: first
 * the declared Content-Length, then the bytes actually streamed.
 */
export async function readLimitedBytes(request: Request, limit: number): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw new BodyError({ kind: "too_large", limit });
  // A declared length within the limit is enforced by the runtime (a body longer than its
  // Content-Length is cut off), so one read is safe and much cheaper than the chunk loop
  // (which also has to materialise `request.body` as a stream).
  if (declared !== null && /^\d+$/.test(declared)) {
    const bytes = new Uint8Array(await request.arrayBuffer());
    if (bytes.byteLength > limit) throw new BodyError({ kind: "too_large", limit });
    return bytes;
  }
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel();
      throw new BodyError({ kind: "too_large", limit });
    }
    chunks.push(value);
  }
  return joinBytes(chunks);
}

/** Read the raw body as UTF-8 text within `limit` bytes. */
export async function readLimitedText(request: Request, limit = MAX_JSON_BODY_BYTES): Promise<string> {
  const all = await readLimitedBytes(request, limit);
  try {
    // fromUtf8 keeps one decoder per isolate: building a TextDecoder per request cost
    // about a tenth of `verify`'s CPU, more than decoding its body.
    return fromUtf8(all);
  } catch {
    throw new BodyError({ kind: "malformed", detail: "body is not valid UTF-8" });
  }
}

/**
 * Parse a JSON object body. An empty body is `{}`; anything that is not a JSON object
 * is a BodyError.
 */
export async function readJsonObject(request: Request, limit = MAX_JSON_BODY_BYTES): Promise<Record<string, unknown>> {
  const text = await readLimitedText(request, limit);
  if (text.trim() === "") return {};
  // B9: refuse deep nesting before parsing, so no code that walks the value (validators,
  // error messages that print it) ever recurses further than MAX_JSON_DEPTH.
  if (jsonNestingExceeds(text, MAX_JSON_DEPTH)) {
    throw new BodyError({
      kind: "malformed",
      detail: `JSON nesting is deeper than the limit of ${MAX_JSON_DEPTH} levels`,
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new BodyError({ kind: "malformed", detail: err instanceof Error ? err.message : String(err) });
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new BodyError({ kind: "not_object" });
  return value as Record<string, unknown>;
}

/**
 * True when JSON text nests arrays and objects more than `limit` deep (a top-level object
 * is depth 1). One pass over the text, no recursion: brackets inside strings do not
 * count. Text that is not JSON may be misjudged, but JSON.parse refuses it anyway.
 */
export function jsonNestingExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* backslash: skip the escaped character */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > limit) return true;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
  }
  return false;
}

/**
 * Parse an `application/x-www-form-urlencoded` body (an OAuth 2.0 Form Post Response, S26)
 * into an object of strings; the first value of a repeated name wins.
 */
export async function readFormObject(request: Request, limit = MAX_JSON_BODY_BYTES): Promise<Record<string, unknown>> {
  const text = await readLimitedText(request, limit);
  const out: Record<string, unknown> = {};
  for (const [name, value] of new URLSearchParams(text)) if (!(name in out)) out[name] = value;
  return out;
}

/** True when a request's body is declared `application/x-www-form-urlencoded`. */
export function isFormBody(headers: Headers): boolean {
  const type = headers.get("content-type");
  return type !== null && type.split(";")[0]!.trim().toLowerCase() === "application/x-www-form-urlencoded";
}
