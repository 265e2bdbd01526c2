/**
 * JSON:API success documents (decision N1): media type application/vnd.api+json,
 * timestamps ISO 8601 ending in Z.
 */
import type { Page } from "../db/page";
import { JSONAPI_MEDIA_TYPE } from "./errors";
import { type PageRequest, pageDocument } from "./request/query";

/** A JSON:API document response. */
export function jsonApi(document: unknown, status: 200 | 201 | 202 = 200): Response {
  return new Response(JSON.stringify(document), { status, headers: { "Content-Type": JSONAPI_MEDIA_TYPE } });
}

/**
 * One page of a list (HCP Terraform's pagination): `data` is each row serialized, then
 * `meta.pagination` and the `links` for `url` (the request's, so its other parameters stay);
 * `extra` adds members such as `included`.
 */
export function jsonApiPage<Row>(
  url: string,
  page: PageRequest,
  listed: Page<Row>,
  serialize: (row: Row) => unknown,
  extra: Record<string, unknown> = {},
): Response {
  return jsonApi({ data: listed.rows.map(serialize), ...extra, ...pageDocument(new URL(url), page, listed.total) });
}

/** 204 with no body (DELETE, relationship changes: N2). */
export function noContent(): Response {
  return new Response(null, { status: 204 });
}

/** ISO 8601 UTC with milliseconds and a literal Z (HCP Terraform's JSON:API conventions). */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}
