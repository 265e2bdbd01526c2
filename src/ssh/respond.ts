/**
 * Vault's success envelope (decision S3): every JSON success answer goes through here.
 */
import type { Context } from "hono";
import type { AppEnv } from "../app-env";

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
export function vaultEnvelope(c: Context<AppEnv>, options: VaultEnvelopeOptions) {
  const warnings = options.warnings && options.warnings.length > 0 ? options.warnings : null;
  return {
    request_id: c.get("requestId"),
    lease_id: options.leaseId ?? "",
    renewable: options.renewable ?? false,
    lease_duration: options.leaseDuration ?? 0,
    data: options.data ?? null,
    wrap_info: null,
    warnings,
    auth: options.auth ?? null,
  };
}

/** A 200 answer in Vault's envelope. */
export function vaultJson(c: Context<AppEnv>, options: VaultEnvelopeOptions): Response {
  return c.json(vaultEnvelope(c, options), 200);
}

/**
 * A write with nothing to return is 204 (S3) — unless there are warnings, which Vault
 * then returns in a 200 envelope with null data.
 */
export function vaultNoContent(c: Context<AppEnv>, warnings: string[] = []): Response {
  if (warnings.length > 0) return vaultJson(c, { warnings });
  return c.body(null, 204);
}
