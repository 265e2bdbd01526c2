/**
 * Vault's success envelope (decision S3): every JSON success answer goes through here.
 */

/** What the envelope needs of a request: its id (Vault's `request_id`). */
export interface RequestIdentity {
  requestId: string;
}

export interface VaultEnvelopeOptions {
  data?: unknown;
  warnings?: string[];
  leaseId?: string;
  leaseDuration?: number;
  renewable?: boolean;
  auth?: unknown;
  status?: 200;
}

/** Vault's envelope object; `warnings` is null when there are none. */
export function vaultEnvelope(req: RequestIdentity, options: VaultEnvelopeOptions) {
  const warnings = options.warnings && options.warnings.length > 0 ? options.warnings : null;
  return {
    request_id: req.requestId,
    lease_id: options.leaseId ?? "",
    renewable: options.renewable ?? false,
    lease_duration: options.leaseDuration ?? 0,
    data: options.data ?? null,
    wrap_info: null,
    warnings,
    auth: options.auth ?? null,
  };
}

/**
 * The `data` of a Vault list with `key_info` (`GET …?list=true`): `keys` in the rows' order
 * and one `key_info` entry per key. An empty list is the caller's 404 (`notFound()`), as Vault
 * answers one.
 */
export function keyedList<Row>(rows: readonly Row[], keyOf: (row: Row) => string, infoOf: (row: Row) => unknown) {
  const keyInfo: Record<string, unknown> = {};
  for (const row of rows) keyInfo[keyOf(row)] = infoOf(row);
  return { keys: rows.map(keyOf), key_info: keyInfo };
}

/** A JSON answer with `status`; the one place /v1 serialises JSON. */
export function jsonResponse(body: unknown, status: number): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
}

/** A 200 answer in Vault's envelope. */
export function vaultJson(req: RequestIdentity, options: VaultEnvelopeOptions): Response {
  return jsonResponse(vaultEnvelope(req, options), 200);
}

/**
 * A write with nothing to return is 204 (S3) — unless there are warnings, which Vault
 * then returns in a 200 envelope with null data.
 */
export function vaultNoContent(req: RequestIdentity, warnings: string[] = []): Response {
  if (warnings.length > 0) return vaultJson(req, { warnings });
  return new Response(null, { status: 204 });
}
