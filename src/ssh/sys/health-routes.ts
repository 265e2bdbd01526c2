/**
 * Health and discovery for /v1 (decisions B12, S16a): `sys/health` (GET and HEAD),
 * `sys/seal-status` and `sys/leader`, unauthenticated, in Vault's shapes, so `vault status`
 * and load balancers can probe Keyway. Keyway has no seal and no HA cluster: it is always
 * initialized, unsealed and active, and its only dependency that can be down is D1, which
 * every answer probes (200 when it answers, 503 `storage unavailable` when it does not).
 */
import type { Db } from "../../db/client";
import { probeTokenStore } from "../access/token-repo";
import { badRequest, storageUnavailable } from "../errors";
import { bool, int, object, rawJson, str } from "../openapi/schemas";
import { jsonResponse } from "../respond";
import { krlHealth } from "../revocation/krl";
import { configuredMounts, type VaultRequest, type VaultRoute } from "../router";
import { KEYWAY_VERSION } from "../version";

/** Vault's `cluster_name`: one Worker is one cluster. */
export const CLUSTER_NAME = "keyway";

/** Whether D1 answers with Keyway's schema (see probeTokenStore). */
async function storageAnswers(db: Db): Promise<boolean> {
  try {
    await probeTokenStore(db);
    return true;
  } catch {
    return false;
  }
}

async function requireStorage(req: VaultRequest): Promise<void> {
  if (!(await storageAnswers(req.db))) throw storageUnavailable();
}

/** Vault's status-code parameters of `sys/health` (vault/http/sys_health.go). */
const HEALTH_CODE_PARAMS = [
  "uninitcode",
  "sealedcode",
  "standbycode",
  "activecode",
  "drsecondarycode",
  "performancestandbycode",
] as const;

/** Vault's boolean parameters of `sys/health` (Go's strconv.ParseBool spellings). */
const HEALTH_BOOL_PARAMS = ["standbyok", "perfstandbyok"] as const;
const GO_BOOLEAN = /^(1|t|T|TRUE|true|True|0|f|F|FALSE|false|False)$/;

/** Statuses whose answer has no body (Fetch's null body statuses). */
const NULL_BODY_STATUSES: readonly number[] = [204, 205, 304];

/**
 * The status `sys/health` answers (B19). Every code Vault reads is checked, a value that
 * is not an integer from 200 to 599 being a 400 naming the parameter; Keyway is always
 * initialized, unsealed and active, so `activecode` (default 200) is the one that decides.
 */
function healthStatus(query: URLSearchParams): number {
  const codes = new Map<string, number>();
  for (const param of HEALTH_CODE_PARAMS) {
    const raw = query.get(param);
    if (raw === null) continue;
    // Go's strconv.Atoi, as Vault parses them: optional `+`, decimal digits.
    const code = /^\+?\d{1,16}$/.test(raw) ? Number(raw) : Number.NaN;
    if (!(code >= 200 && code <= 599)) throw badRequest(`${param} must be a status code between 200 and 599`);
    codes.set(param, code);
  }
  for (const param of HEALTH_BOOL_PARAMS) {
    const raw = query.get(param);
    if (raw !== null && !GO_BOOLEAN.test(raw)) throw badRequest(`${param} must be true or false`);
  }
  return codes.get("activecode") ?? 200;
}

/** A JSON answer, or an empty one for 204, 205 and 304 (a body there is a TypeError). */
function healthResponse(body: unknown, status: number): Response {
  return NULL_BODY_STATUSES.includes(status) ? new Response(null, { status }) : jsonResponse(body, status);
}

/**
 * B17: Keyway's own fields. `krl_stale` lists the mounts whose KRL rebuilds fail (the last
 * good KRL is served, so the service stays healthy); `krl_orphaned_revocations` counts, per
 * mount, the revocations whose issuer was deleted before they recorded its CA key.
 */
async function krlFields(req: VaultRequest) {
  const health = await krlHealth(req.db, configuredMounts(req.env.SSH_MOUNTS));
  return { krl_stale: health.stale, krl_orphaned_revocations: health.orphanedRevocations };
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
  krl_stale: { type: "array", items: str(), description: "mounts serving their last good KRL (B17)" },
  krl_orphaned_revocations: {
    type: "object",
    additionalProperties: int(),
    description: "per mount, revocations whose issuer was gone before B17 (B17)",
  },
});

export const healthRoutes: VaultRoute[] = [
  {
    pattern: "sys/health",
    operations: {
      read: async (req) => {
        const status = healthStatus(req.query);
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
          ...(await krlFields(req)),
        };
        return healthResponse(body, status);
      },
    },
    unauthenticated: ["read"],
    head: true,
    docs: {
      operations: {
        read: {
          summary: "Health of the service (also HEAD)",
          query: Object.fromEntries([
            ...HEALTH_CODE_PARAMS.map((p) => [
              p,
              {
                description:
                  p === "activecode"
                    ? "the status to answer when healthy (default 200; 204, 205 and 304 have no body)"
                    : "accepted and checked as Vault does; Keyway is never in that state",
                schema: { type: "integer", minimum: 200, maximum: 599 },
              },
            ]),
            ...HEALTH_BOOL_PARAMS.map((p) => [
              p,
              { description: "accepted; Keyway is never a standby", schema: { type: "boolean" } },
            ]),
          ]),
          responses: {
            ...rawJson("healthy", healthSchema),
            ...Object.fromEntries(
              NULL_BODY_STATUSES.map((status) => [String(status), { description: "healthy with this `activecode`" }]),
            ),
            ...rawJson(
              "healthy with `activecode` (no body for 204, 205, 304), 400 for a bad parameter, or 503 `storage unavailable`",
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
