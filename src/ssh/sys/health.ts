/**
 * Health and discovery for /v1 (decisions B12, S16a): `sys/health` (GET and HEAD),
 * `sys/seal-status` and `sys/leader`, unauthenticated, in Vault's shapes, so `vault status`
 * and load balancers can probe Keyway. Keyway has no seal and no HA cluster: it is always
 * initialized, unsealed and active, and its only dependency that can be down is D1, which
 * every answer probes (200 when it answers, 503 `storage unavailable` when it does not).
 */
import packageJson from "../../../package.json";
import { storageUnavailable } from "../errors";
import { bool, int, object, rawJson, str } from "../openapi-schemas";
import { jsonResponse } from "../respond";
import type { VaultRequest, VaultRoute } from "../router";

/** Keyway's version, as Vault's `version` field reports it. */
export const KEYWAY_VERSION: string = packageJson.version;

/** Vault's `cluster_name`: one Worker is one cluster. */
export const CLUSTER_NAME = "keyway";

/**
 * One statement on a table every request of the service needs: it fails when D1 is
 * unreachable and when the database lacks Keyway's schema (migrations not applied),
 * either of which leaves the service unable to answer.
 */
async function probeStorage(db: D1Database): Promise<boolean> {
  try {
    await db.prepare("SELECT 1 FROM vault_tokens LIMIT 1").first();
    return true;
  } catch {
    return false;
  }
}

async function requireStorage(req: VaultRequest): Promise<void> {
  if (!(await probeStorage(req.env.DB))) throw storageUnavailable();
}

/**
 * Vault's `activecode` query parameter: the status an active, unsealed node answers
 * (default 200; load balancers set it). Vault's other codes (`standbycode`, `sealedcode`…)
 * describe states Keyway is never in.
 */
function activeCode(query: URLSearchParams): number {
  const raw = query.get("activecode");
  if (raw === null || raw === "") return 200;
  const code = /^\d{3}$/.test(raw) ? Number(raw) : Number.NaN;
  return code >= 200 && code <= 599 ? code : 200;
}

/** B14: the answer of `sys/health`. */
const healthSchema = object({
  initialized: { const: true },
  sealed: { const: false },
  standby: { const: false },
  performance_standby: { const: false },
  replication_performance_mode: str(),
  replication_dr_mode: str(),
  server_time_utc: int(),
  version: str(),
  enterprise: { const: false },
  cluster_name: str(),
});

export const healthRoutes: VaultRoute[] = [
  {
    pattern: "sys/health",
    operations: {
      read: async (req) => {
        await requireStorage(req);
        const body = {
          initialized: true,
          sealed: false,
          standby: false,
          performance_standby: false,
          replication_performance_mode: "disabled",
          replication_dr_mode: "disabled",
          server_time_utc: Math.floor(Date.now() / 1000),
          version: KEYWAY_VERSION,
          enterprise: false,
          cluster_name: CLUSTER_NAME,
        };
        return jsonResponse(body, activeCode(req.query));
      },
    },
    unauthenticated: ["read"],
    head: true,
    docs: {
      operations: {
        read: {
          summary: "Health of the service (also HEAD)",
          query: {
            activecode: { description: "the status to answer when healthy (default 200)", schema: { type: "string" } },
          },
          responses: {
            ...rawJson("healthy", healthSchema),
            ...rawJson(
              "healthy with `activecode`, or 503 `storage unavailable`",
              {
                anyOf: [healthSchema, { $ref: "#/components/schemas/VaultErrors" }],
              },
              "default",
            ),
          },
        },
      },
    },
  },
  {
    pattern: "sys/seal-status",
    operations: {
      read: async (req) => {
        await requireStorage(req);
        return jsonResponse(
          {
            type: "shamir",
            initialized: true,
            sealed: false,
            t: 1,
            n: 1,
            progress: 0,
            nonce: "",
            version: KEYWAY_VERSION,
            build_date: "",
            migration: false,
            cluster_name: CLUSTER_NAME,
            recovery_seal: false,
            storage_type: "d1",
          },
          200,
        );
      },
    },
    unauthenticated: ["read"],
    docs: {
      operations: {
        read: {
          summary: "Seal status (always unsealed)",
          responses: rawJson(
            "seal status",
            object({
              type: str(),
              initialized: bool(),
              sealed: bool(),
              t: int(),
              n: int(),
              progress: int(),
              nonce: str(),
              version: str(),
              build_date: str(),
              migration: bool(),
              cluster_name: str(),
              recovery_seal: bool(),
              storage_type: str(),
            }),
          ),
        },
      },
    },
  },
  {
    pattern: "sys/leader",
    operations: {
      read: async (req) => {
        await requireStorage(req);
        return jsonResponse(
          {
            ha_enabled: false,
            is_self: false,
            active_time: "0001-01-01T00:00:00Z",
            leader_address: "",
            leader_cluster_address: "",
            performance_standby: false,
            performance_standby_last_remote_wal: 0,
          },
          200,
        );
      },
    },
    unauthenticated: ["read"],
    docs: {
      operations: {
        read: {
          summary: "HA leader (HA is not enabled)",
          responses: rawJson(
            "leader status",
            object({
              ha_enabled: bool(),
              is_self: bool(),
              active_time: str(),
              leader_address: str(),
              leader_cluster_address: str(),
              performance_standby: bool(),
              performance_standby_last_remote_wal: int(),
            }),
          ),
        },
      },
    },
  },
];
