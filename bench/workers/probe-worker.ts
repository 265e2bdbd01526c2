/**
 * Bench-only Worker (docs/performance.md): the cost of the sub-steps the hot paths are made of, each
 * timed in a sequential loop inside the isolate, so `npm run bench` can say what dominates
 * each path. It shares Keyway's D1 database and OtpStore Durable Object namespace (same
 * storage, same workerd process) and imports the same modules the endpoints use.
 *
 * - `POST /sub-steps` {@link ProbeRequest} → a list of {@link ProbeResult};
 * - `POST /put-roles` {@link PutRolesRequest} → `{ written }`: seeds the 10,000-role lookup
 *   mount quickly. Each role is built by the write handler's own `buildRole` and stored in
 *   the row shapes `putRole` (src/ssh/roles/repo.ts) writes — an `ssh_roles` row with the
 *   role as JSON config and one `ssh_role_cidrs` row per CIDR block from `parseCidr` — but
 *   many roles per D1 batch instead of one batch per role;
 * - `POST /mint-otps` {@link MintOtpsRequest} → `{ otps }`: OTPs stored exactly as `creds`
 *   stores them (src/ssh/otp/shard.ts: keyed hash, shard, lease key, OtpStore `put`), minus
 *   HTTP and the role checks, so `verify` can be driven with distinct OTPs;
 * - `POST /agent-pool-d1` `{ poolId }` → `{ calls, liveSessions }`: the D1 round trips the
 *   pool's Durable Object made since it started (N18's budget per idle agent-minute);
 * - `POST /clone-workspaces` (bench/workers/workspace-seed.ts) → `{ workspaceIds }`: copies of one
 *   no-code workspace made by E4, with its applied run history for the rollout scale check
 *   (decision N15) or as bare workspaces for the E3/E4 scale rows (docs/performance.md).
 */
import { createDb } from "../../src/db/client";
import { sshRoleCidrs, sshRoles } from "../../src/db/schema/ssh";
import { keyedHash, secretsEqual } from "../../src/lib/crypto/hmac";
import { parseCidr } from "../../src/lib/net/ip";
import type { AgentPool } from "../../src/nocode/agents/pool-object";
import { issuersOfMountQuery } from "../../src/ssh/issuers/repo";
import type { OtpStore } from "../../src/ssh/otp/otp-store";
import { newLeaseKey, newOtp, otpHash, otpStore, shardOf } from "../../src/ssh/otp/shard";
import { roleQuery } from "../../src/ssh/roles/repo";
import { buildRole } from "../../src/ssh/roles/validate";
import { type CloneWorkspacesRequest, cloneWorkspaces } from "./workspace-seed";

interface ProbeEnv {
  DB: D1Database;
  OTP_STORE: DurableObjectNamespace<OtpStore>;
  /** Keyway's agent pools (N18): the bench reads a pool's D1 round trips through it. */
  AGENT_POOLS: DurableObjectNamespace<AgentPool>;
  KEYWAY_HASH_KEY: string;
}

/** What to run. */
export interface ProbeRequest {
  /** Stop a probe after this many calls… */
  iterations: number;
  /** …or after this many ms, whichever comes first. */
  budgetMs: number;
  /** Untimed calls first. */
  warmup: number;
}

/** One sub-step's cost. */
export interface ProbeResult {
  name: string;
  calls: number;
  usPerCall: number;
}

/** New roles (absent from the mount) to write on one mount, as role write bodies. */
export interface PutRolesRequest {
  mount: string;
  roles: { name: string; body: Record<string, unknown> }[];
  /** Roles per D1 batch. */
  perBatch: number;
}

async function putRoles(env: ProbeEnv, input: PutRolesRequest): Promise<Response> {
  const db = createDb(env.DB);
  const now = Date.now();
  for (let i = 0; i < input.roles.length; i += input.perBatch) {
    const statements = input.roles.slice(i, i + input.perBatch).flatMap(({ name, body }) => {
      const { role } = buildRole(name, body);
      // putRole's rows; its delete of old index rows is left out: these roles are new.
      const cidrs = [
        ...role.cidrList.map((block) => ({ block, included: true })),
        ...role.excludeCidrList.map((block) => ({ block, included: false })),
      ].flatMap(({ block, included }) => {
        const range = parseCidr(block);
        return range
          ? [{ mount: input.mount, role: role.name, included, rangeStart: range.start, rangeEnd: range.end }]
          : [];
      });
      return [
        db.insert(sshRoles).values({
          mount: input.mount,
          name: role.name,
          keyType: role.keyType,
          config: JSON.stringify(role),
          updatedAt: now,
        }),
        ...(cidrs.length > 0 ? [db.insert(sshRoleCidrs).values(cidrs)] : []),
      ];
    });
    if (statements.length > 0) await db.batch(statements as unknown as Parameters<typeof db.batch>[0]);
  }
  return Response.json({ written: input.roles.length });
}

/** OTPs to mint for a role of a mount. */
export interface MintOtpsRequest {
  mount: string;
  roleName: string;
  username: string;
  ip: string;
  count: number;
  /** Puts in flight at once. */
  concurrency: number;
}

async function mintOtps(env: ProbeEnv, input: MintOtpsRequest): Promise<Response> {
  const keywayEnv = env as unknown as Env;
  const expiresAt = Date.now() + 3600_000;
  const otps: string[] = [];
  const worker = async () => {
    while (otps.length < input.count) {
      const otp = newOtp();
      const hash = await otpHash(keywayEnv, input.mount, otp);
      const shard = shardOf(hash);
      const stored = await otpStore(keywayEnv, input.mount, shard).put({
        hash,
        leaseKey: newLeaseKey(shard),
        roleName: input.roleName,
        username: input.username,
        ip: input.ip,
        expiresAt,
      });
      if (stored.ok && otps.length < input.count) otps.push(otp);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, input.concurrency) }, worker));
  return Response.json({ otps });
}

const MISSING_HASH = "0".repeat(64);

/** The sub-steps, named as the report prints them. */
const PROBES: [string, (env: ProbeEnv) => unknown][] = [
  [
    "crypto: secretsEqual (token check of root/admin)",
    () => secretsEqual("bench-presented-token", "bench-configured-token"),
  ],
  ["crypto: keyedHash (HMAC-SHA-256 of an OTP/token)", (env) => keyedHash(env.KEYWAY_HASH_KEY, "bench", "value")],
  ["drizzle: createDb() call (one per request)", (env) => createDb(env.DB)],
  ["d1: SELECT 1 through the binding", (env) => env.DB.prepare("SELECT 1").first()],
  ["d1: one drizzle select (a role read)", (env) => roleQuery(createDb(env.DB), "bench-ed", "signer")],
  [
    "d1: batch of 3 drizzle selects (sign's context)",
    (env) => {
      const db = createDb(env.DB);
      return db.batch([
        roleQuery(db, "bench-ed", "signer"),
        issuersOfMountQuery(db, "bench-ed"),
        issuersOfMountQuery(db, "bench-rsa"),
      ]);
    },
  ],
  [
    "d1: 3 sequential drizzle selects",
    async (env) => {
      const db = createDb(env.DB);
      await roleQuery(db, "bench-ed", "signer");
      await issuersOfMountQuery(db, "bench-ed");
      await issuersOfMountQuery(db, "bench-rsa");
    },
  ],
  [
    "do: OtpStore RPC, consume of an absent hash",
    (env) => env.OTP_STORE.get(env.OTP_STORE.idFromName("otp:bench-probe:00")).consume(MISSING_HASH),
  ],
  [
    "do: OtpStore put then consume (two writes)",
    async (env) => {
      const stub = env.OTP_STORE.get(env.OTP_STORE.idFromName("otp:bench-probe:01"));
      const hash = crypto.randomUUID();
      await stub.put({
        hash,
        leaseKey: hash,
        roleName: "r",
        username: "u",
        ip: "10.0.0.1",
        expiresAt: Date.now() + 3600_000,
      });
      await stub.consume(hash);
    },
  ],
  [
    "d1: one write (upsert of a role row)",
    (env) =>
      createDb(env.DB)
        .insert(sshRoles)
        .values({ mount: "bench-probe", name: "probe", keyType: "otp", config: "{}", updatedAt: Date.now() })
        .onConflictDoUpdate({ target: [sshRoles.mount, sshRoles.name], set: { updatedAt: Date.now() } }),
  ],
];

export default {
  async fetch(request: Request, env: ProbeEnv): Promise<Response> {
    if (request.method !== "POST") return new Response("POST /sub-steps or /put-roles\n", { status: 405 });
    const path = new URL(request.url).pathname;
    if (path === "/put-roles") return putRoles(env, (await request.json()) as PutRolesRequest);
    if (path === "/mint-otps") return mintOtps(env, (await request.json()) as MintOtpsRequest);
    if (path === "/agent-pool-d1") {
      const { poolId } = (await request.json()) as { poolId: string };
      return Response.json(await env.AGENT_POOLS.get(env.AGENT_POOLS.idFromName(poolId)).d1Usage());
    }
    if (path === "/clone-workspaces")
      return Response.json(await cloneWorkspaces(env.DB, (await request.json()) as CloneWorkspacesRequest));
    if (path !== "/sub-steps") return new Response("unknown path\n", { status: 404 });
    const input = (await request.json()) as ProbeRequest;
    const results: ProbeResult[] = [];
    for (const [name, step] of PROBES) {
      for (let i = 0; i < input.warmup; i++) await step(env);
      // Date.now() advances during execution under local workerd (see sign-rate-worker.ts).
      const start = Date.now();
      let calls = 0;
      let now = start;
      while (calls < input.iterations && now - start < input.budgetMs) {
        await step(env);
        calls++;
        now = Date.now();
      }
      results.push({ name, calls, usPerCall: calls > 0 ? ((now - start) * 1000) / calls : 0 });
    }
    return Response.json(results);
  },
} satisfies ExportedHandler<ProbeEnv>;
