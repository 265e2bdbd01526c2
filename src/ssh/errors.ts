/**
 * The one error model of the secrets API (/v1), rendered in Vault's format:
 * `{"errors":["<message>"]}` (decisions S2a–S4). A 404 for something absent has an empty
 * list, as Vault answers (`{"errors":[]}`).
 */
import { BodyError } from "../lib/http/body";
import { logError } from "../lib/log";
import { jsonResponse } from "./respond";

export type VaultErrorCode =
  | "bad_request"
  | "permission_denied"
  | "not_found"
  | "unsupported_path"
  | "unsupported_operation"
  | "payload_too_large"
  | "too_many_requests"
  | "conflict"
  | "internal"
  | "unavailable";

/** HTTP status of each code; exhaustive so a new code cannot be forgotten. */
export function vaultStatus(code: VaultErrorCode): 400 | 403 | 404 | 405 | 409 | 413 | 429 | 500 | 503 {
  switch (code) {
    case "bad_request":
      return 400;
    case "permission_denied":
      return 403;
    case "not_found":
    case "unsupported_path":
      return 404;
    case "unsupported_operation":
      return 405;
    case "conflict":
      return 409;
    case "payload_too_large":
      return 413;
    case "too_many_requests":
      return 429;
    case "internal":
      return 500;
    case "unavailable":
      return 503;
  }
}

/** Thrown by services and handlers; rendered by renderVaultError. */
export class VaultError extends Error {
  constructor(
    readonly code: VaultErrorCode,
    /** Messages for the `errors` array; empty for a bare 404. */
    readonly messages: string[],
    /** Headers the answer carries besides Content-Type (e.g. `Retry-After` on a 429). */
    readonly headers: Record<string, string> = {},
  ) {
    super(messages[0] ?? code);
  }
}

/** 400 with Vault's message text. */
export const badRequest = (message: string) => new VaultError("bad_request", [message]);
/** 403 `permission denied` (S2a). */
export const permissionDenied = () => new VaultError("permission_denied", ["permission denied"]);
/** 404 `{"errors":[]}`: a read of something absent (S3). */
export const notFound = () => new VaultError("not_found", []);
/** 404 `unsupported path` (S2a). */
export const unsupportedPath = () => new VaultError("unsupported_path", ["unsupported path"]);
/** 405 `unsupported operation` (S2a). */
export const unsupportedOperation = () => new VaultError("unsupported_operation", ["unsupported operation"]);

/**
 * 429 (S28): Vault's rate-limit quota text (https://developer.hashicorp.com/vault/docs/concepts/resource-quotas),
 * with `Retry-After` in seconds.
 */
export const tooManyRequests = (path: string, retryAfterSeconds: number) =>
  new VaultError("too_many_requests", [`request path ${JSON.stringify(path)}: rate limit quota exceeded`], {
    "Retry-After": String(retryAfterSeconds),
  });

/** 503 `storage unavailable`: D1 did not answer the health probe (B12). */
export const storageUnavailable = () => new VaultError("unavailable", ["storage unavailable"]);

/** Render any thrown value in Vault's format. Internal faults get a generic body (B3). */
export function renderVaultError(err: unknown, requestId: string): Response {
  let error: VaultError;
  if (err instanceof VaultError) error = err;
  else if (err instanceof BodyError) {
    const p = err.problem;
    error =
      p.kind === "too_large"
        ? new VaultError("payload_too_large", [`request body is larger than the limit of ${p.limit} bytes`])
        : p.kind === "malformed"
          ? badRequest(`failed to parse JSON input: ${p.detail}`)
          : badRequest("failed to parse JSON input: the request body must be a JSON object");
  } else {
    logError(requestId, "internal error on /v1", err);
    error = new VaultError("internal", ["internal error"]);
  }
  const response = jsonResponse({ errors: error.messages }, vaultStatus(error.code));
  for (const [name, value] of Object.entries(error.headers)) response.headers.set(name, value);
  return response;
}

/**
 * B10: the answer to every /v1 request while the deployment is misconfigured — 503 in
 * Vault's format (Vault answers 503 while sealed or uninitialised, too).
 */
export function vaultMisconfigured(message: string): Response {
  return jsonResponse({ errors: [message] }, 503);
}
