/**
 * JSON:API success documents (decision N1): media type application/vnd.api+json,
 * timestamps ISO 8601 ending in Z.
 */
import { JSONAPI_MEDIA_TYPE } from "./errors";

/** A JSON:API document response. */
export function jsonApi(document: unknown, status: 200 | 201 | 202 = 200): Response {
  return new Response(JSON.stringify(document), { status, headers: { "Content-Type": JSONAPI_MEDIA_TYPE } });
}

/** 204 with no body (DELETE, relationship changes: N2). */
export function noContent(): Response {
  return new Response(null, { status: 204 });
}

/** ISO 8601 UTC with milliseconds and a literal Z (HCP Terraform's JSON:API conventions). */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}
