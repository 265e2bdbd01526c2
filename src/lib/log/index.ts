/**
 * Structured logging. Callers pass only non-secret fields (decision B2: no token, OTP,
 * key or sensitive value is ever logged).
 */
export function logError(requestId: string, message: string, err?: unknown): void {
  const detail =
    err instanceof Error ? `${err.name}: ${err.message}\n${err.stack ?? ""}` : err === undefined ? "" : String(err);
  console.error(JSON.stringify({ level: "error", request_id: requestId, message, detail }));
}

export function logInfo(message: string, fields: Record<string, unknown> = {}): void {
  console.log(JSON.stringify({ level: "info", message, ...fields }));
}

/** Something a caller should know about that did not fail the request (e.g. a provider's userinfo refused). */
export function logWarn(requestId: string, message: string, fields: Record<string, unknown> = {}): void {
  console.warn(JSON.stringify({ level: "warn", request_id: requestId, message, ...fields }));
}
