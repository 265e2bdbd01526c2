/**
 * Certificate inventory, revocation and the KRL (decisions S22, S23): the routes added to
 * the /v1 table, and the scheduled tidy the Worker's cron trigger runs.
 */
import { createDb } from "../../db/client";
import { logError } from "../../lib/log";
import type { HeaderObject, ResponseObject } from "../../lib/openapi/types";
import { cacheableFile } from "../openapi/schemas";
import type { VaultRequest, VaultRoute } from "../router";
import { configuredMounts } from "../router";
import { inventoryRoutes, tidyCertificates } from "./inventory-routes";
import { KRL_STALE_HEADER, rebuildKrl, serveKrl, staleKrlMounts } from "./krl";
import { revocationRoutes, tidyRevocations } from "./revocation-routes";

/** S22: what the scheduled tidy keeps past expiry. */
const SCHEDULED_SAFETY_BUFFER_SECONDS = 72 * 3600;

/** B17: the KRL's answers may say that they are the last good KRL, not the current one. */
function withStaleHeader(responses: Record<string, ResponseObject>): Record<string, ResponseObject> {
  const header: Record<string, HeaderObject> = {
    [KRL_STALE_HEADER]: {
      description: "`true` when rebuilds of a newer version fail and this is the last good KRL (B17)",
      schema: { type: "string", enum: ["true"] },
    },
  };
  return Object.fromEntries(
    Object.entries(responses).map(([status, r]) => [status, { ...r, headers: { ...r.headers, ...header } }]),
  );
}

function krl(req: VaultRequest): Promise<Response> {
  return serveKrl(req.env, req.db, req.mount, req.headers);
}

export const revocationFeatureRoutes: VaultRoute[] = [
  ...inventoryRoutes,
  ...revocationRoutes,
  // S16a: the KRL is public, like the CA's public key (hosts fetch it without a token).
  {
    pattern: "krl",
    mounted: true,
    unauthenticated: ["read"],
    operations: { read: krl },
    docs: {
      operations: {
        read: {
          summary: "The mount's OpenSSH KRL (sshd's RevokedKeys), covering every issuer",
          responses: withStaleHeader(
            cacheableFile("an OpenSSH KRL (PROTOCOL.krl, format version 1, unsigned)", "application/octet-stream"),
          ),
        },
      },
    },
  },
];

/** The cron trigger (`triggers` in wrangler.jsonc): tidy every SSH mount. */
export async function scheduledTidy(env: Env, now = Date.now()): Promise<void> {
  const db = createDb(env.DB);
  for (const mount of configuredMounts(env.SSH_MOUNTS)) {
    try {
      await tidyCertificates(db, mount, SCHEDULED_SAFETY_BUFFER_SECONDS, now);
      await tidyRevocations(env, db, mount, now);
    } catch (e) {
      logError(`scheduled-tidy:${mount}`, "scheduled tidy of an SSH mount failed", e);
    }
  }
  // B17: a stale KRL whose Queue retry was lost is retried here at the latest.
  try {
    for (const mount of await staleKrlMounts(db, configuredMounts(env.SSH_MOUNTS)))
      await rebuildKrl(env, db, mount, { force: true });
  } catch (e) {
    logError("scheduled-tidy", "scheduled retry of stale SSH KRLs failed", e);
  }
}
