/**
 * The one error model of the no-code API (/api/v2), rendered as JSON:API error objects
 * (decisions N1, N2; HCP Terraform's JSON:API errors): `status` is a string, titles are lower-case reason
 * phrases, field errors carry `source.pointer`.
 */
import type { Context } from "hono";
import type { AppEnv } from "../app-env";
import { BodyError } from "../lib/http/body";
import { logError } from "../lib/log";

export const JSONAPI_MEDIA_TYPE = "application/vnd.api+json";

export type NocodeErrorCode =
  | "bad_request"
  | "unauthorized"
  | "not_found"
  | "method_not_allowed"
  | "conflict"
  | "payload_too_large"
  | "invalid_attribute"
  | "unprocessable"
  | "internal";

export interface ErrorObject {
  status: string;
  title: string;
  detail?: string;
  /** A body error names the member (`pointer`, RFC 6901); a query error names the parameter. */
  source?: { pointer: string } | { parameter: string };
}

/** HTTP status and title of each code; exhaustive. */
export function nocodeStatus(code: NocodeErrorCode): {
  status: 400 | 401 | 404 | 405 | 409 | 413 | 422 | 500;
  title: string;
} {
  switch (code) {
    case "bad_request":
      return { status: 400, title: "bad request" };
    case "unauthorized":
      return { status: 401, title: "unauthorized" };
    case "not_found":
      return { status: 404, title: "not found" };
    case "method_not_allowed":
      return { status: 405, title: "method not allowed" };
    case "conflict":
      return { status: 409, title: "conflict" };
    case "payload_too_large":
      return { status: 413, title: "payload too large" };
    case "invalid_attribute":
      return { status: 422, title: "invalid attribute" };
    case "unprocessable":
      return { status: 422, title: "unprocessable entity" };
    case "internal":
      return { status: 500, title: "internal server error" };
  }
}

/** Thrown by no-code services and handlers; rendered by renderNocodeError. */
export class NocodeError extends Error {
  constructor(
    readonly code: NocodeErrorCode,
    readonly detail?: string,
    readonly pointer?: string,
    /** Further field errors reported together (Rails reports every failed validation). */
    readonly more: NocodeError[] = [],
    /** The query parameter at fault (JSON:API `source.parameter`), for errors of the query string. */
    readonly parameter?: string,
  ) {
    super(detail ?? code);
  }

  toObjects(): ErrorObject[] {
    const { status, title } = nocodeStatus(this.code);
    const own: ErrorObject = { status: String(status), title };
    if (this.detail !== undefined) own.detail = this.detail;
    if (this.pointer !== undefined) own.source = { pointer: this.pointer };
    else if (this.parameter !== undefined) own.source = { parameter: this.parameter };
    return [own, ...this.more.flatMap((e) => e.toObjects())];
  }
}

/** 401 `unauthorized`: missing or invalid token (N2, N2a). */
export const unauthorized = () => new NocodeError("unauthorized");
/** 404 `not found`: absent or not permitted (N2, N10). */
export const notFound = () => new NocodeError("not_found");
/** 422 `invalid attribute` on one attribute. */
export const invalidAttribute = (attribute: string, detail: string) =>
  new NocodeError("invalid_attribute", detail, `/data/attributes/${attribute}`);
/** 422 `unprocessable entity`: a rule violation (N3, N5, N12). */
export const unprocessable = (detail: string) => new NocodeError("unprocessable", detail);
/** 400 `bad request`. */
export const badRequest = (detail: string, pointer?: string) => new NocodeError("bad_request", detail, pointer);
/** 409 `conflict`. */
export const conflict = (detail: string) => new NocodeError("conflict", detail);

/** Render an error response in the JSON:API error format. */
export function nocodeErrorResponse(error: NocodeError): Response {
  const { status } = nocodeStatus(error.code);
  return new Response(JSON.stringify({ errors: error.toObjects() }), {
    status,
    headers: { "Content-Type": JSONAPI_MEDIA_TYPE },
  });
}

/** B10: the answer to every /api request while the deployment is misconfigured (503, JSON:API). */
export function nocodeMisconfigured(detail: string): Response {
  return new Response(JSON.stringify({ errors: [{ status: "503", title: "service unavailable", detail }] }), {
    status: 503,
    headers: { "Content-Type": JSONAPI_MEDIA_TYPE },
  });
}

/** Render any thrown value; internal faults get a generic body and a log line (B3). */
export function renderNocodeError<E extends AppEnv>(err: unknown, c: Context<E>): Response {
  if (err instanceof NocodeError) return nocodeErrorResponse(err);
  if (err instanceof BodyError) {
    const p = err.problem;
    if (p.kind === "too_large") {
      return nocodeErrorResponse(
        new NocodeError("payload_too_large", `request body is larger than the limit of ${p.limit} bytes`),
      );
    }
    return nocodeErrorResponse(
      badRequest(
        p.kind === "malformed"
          ? `malformed JSON body: ${p.detail}`
          : "the request body must be a JSON:API document (a JSON object)",
      ),
    );
  }
  logError(String(c.var.requestId ?? ""), "internal error on /api/v2", err);
  return nocodeErrorResponse(new NocodeError("internal"));
}
