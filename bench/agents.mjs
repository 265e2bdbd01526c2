// The execution plane's checks (decision N18): `npm run bench -- --only=agent-dispatch`.
// Never part of the default run nor of CI (the idle part takes minutes).
//
// The agents are protocol-level pollers written here (not the agent program): each
// registers with an agent token, pings every 10 s and keeps one long poll
// (`GET /api/agent/v1/jobs/next?wait=30`) open, as keyway-agent does.
//
// 1. agent-dispatch: an organization, a module, an agent pool with AGENTS idle pollers; then
//    DISPATCHES agent workspaces, one at a time, each by E4 (whose commit queues the run's
//    plan job). The figure of each is the time from the job's `queued-at` (the commit that
//    queued it, stamped by the Worker) to the moment an agent received it (same machine
//    clock). The receiving agent starts the job and finishes it as errored, then polls again.
//    Targets (N18): p50 ≤ 250 ms, p99 ≤ 1 s.
// 2. agent-idle-d1: the same AGENTS agents left idle for `--agent-idle=S` seconds (default
//    300); the D1 round trips of the pool's Durable Object over that time, read through the
//    probe Worker before and after (the agent protocol's session calls touch D1 only in that
//    object), per agent-minute. Target (N18): ≤ 2.
import { performance } from "node:perf_hooks";
import { moduleTarball, nullResourceModuleMainTf } from "./tarball.mjs";

const AGENTS = 10;
const DISPATCHES = 40;
const JSONAPI = "application/vnd.api+json";
const ENGINE = "1.11.4";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A protocol-level agent: register, ping every 10 s, long-poll; `onJob` handles each job. */
function pollingAgent(origin, poolToken, name, onJob) {
  const state = { stopped: false, session: null, polls: 0 };
  /**
   * @param {string} method
   * @param {string} path
   * @param {{ body?: unknown, session?: boolean, token?: string }} [options]
   */
  const call = async (method, path, { body, session = true, token } = {}) => {
    const headers = { Authorization: `Bearer ${token ?? poolToken}` };
    if (session && state.session) {
      headers["Keyway-Agent-Id"] = state.session.agentId;
      headers["Keyway-Agent-Session"] = state.session.secret;
    }
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const res = await fetch(new URL(`/api/agent/v1/${path}`, origin), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : null };
  };
  const start = async () => {
    const reg = await call("POST", "register", {
      session: false,
      body: { name, version: "0.1.0", engine: { name: "terraform", version: ENGINE } },
    });
    if (reg.status !== 201) throw new Error(`register: ${reg.status} ${JSON.stringify(reg.json)}`);
    state.session = { agentId: reg.json["agent-id"], secret: reg.json["session-secret"] };
    const pinger = (async () => {
      while (!state.stopped) {
        await sleep(10_000);
        if (!state.stopped) await call("POST", "ping", { body: { status: "idle" } }).catch(() => {});
      }
    })();
    const poller = (async () => {
      while (!state.stopped) {
        const res = await call("GET", "jobs/next?wait=30").catch(() => ({ status: 0, json: null }));
        state.polls++;
        if (res.status === 200) await onJob(res.json.job, Date.now(), call);
        else if (res.status !== 204) await sleep(1000);
      }
    })();
    state.done = Promise.all([pinger, poller]);
  };
  return { state, start, call };
}

/** Percentile of sorted values. */
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

/**
 * Run both checks. `api` is scenarios.mjs's apiClient; `probe(path, body)` asks the probe
 * Worker. Returns `{ dispatch: {p50, p99, samples}, idle: {perAgentMinute, calls, seconds} }`.
 */
export async function agentChecks({ origin, api, probe, log, idleSeconds = 300 }) {
  const t0 = performance.now();
  const since = () => `${((performance.now() - t0) / 1000).toFixed(1)} s`;
  const org = "bench-agents";
  const orgRes = await api.expectOk("create the organization", "POST", "/api/v2/organizations", {
    bearer: api.admin,
    body: { data: { type: "organizations", attributes: { name: org, email: "agents@example.test" } } },
  });
  const ownersTeam = orgRes.json.data.relationships["owners-team"].data.id;
  const token = (await api.createUserToken("agents-owner")).json.data.attributes.token;
  await api.expectOk("add the user to owners", "POST", `/api/v2/teams/${ownersTeam}/relationships/users`, {
    bearer: api.admin,
    body: { data: [{ type: "users", id: "agents-owner" }] },
  });
  const mod = await api.createRegistryModule("create the registry module", org, token, "agents");
  const base = `/api/v2/organizations/${org}/registry-modules/private/${org}/agents/null`;
  const version = await api.expectOk("create version 1.0.0", "POST", `${base}/versions`, {
    bearer: token,
    body: { data: { type: "registry-module-versions", attributes: { version: "1.0.0" } } },
  });
  await api.expectOk("upload the tarball", "PUT", new URL(version.json.data.links.upload).pathname, {
    raw: moduleTarball({ "main.tf": nullResourceModuleMainTf("agents") }),
    contentType: "application/gzip",
  });
  for (let i = 0; ; i++) {
    const r = await api.expectOk("read the version", "GET", `${base}/version?module_version=1.0.0`, { bearer: token });
    if (r.json.data.attributes.status === "ok") break;
    if (i > 240) throw new Error(`module version is ${r.json.data.attributes.status}`);
    await sleep(250);
  }
  const e1 = await api.expectOk("E1", "POST", `/api/v2/organizations/${org}/no-code-modules`, {
    bearer: token,
    body: {
      data: {
        type: "no-code-modules",
        attributes: { "version-pin": "1.0.0", enabled: true },
        relationships: { "registry-module": { data: { id: mod.json.data.id, type: "registry-modules" } } },
      },
    },
  });
  const pool = await api.expectOk("create the pool", "POST", `/api/v2/organizations/${org}/agent-pools`, {
    bearer: token,
    body: { data: { type: "agent-pools", attributes: { name: "bench" } } },
  });
  const poolId = pool.json.data.id;
  const poolToken = (
    await api.expectOk("create an agent token", "POST", `/api/v2/agent-pools/${poolId}/authentication-tokens`, {
      bearer: token,
      body: { data: { type: "authentication-tokens", attributes: { description: "bench" } } },
    })
  ).json.data.attributes.token;

  // ---- 1. Dispatch latency.
  // A job may reach an agent before E4 has answered: receipts are kept by run id until read.
  const receipts = new Map();
  const waiting = new Map();
  const onJob = async (job, at, call) => {
    const latency = at - Date.parse(job["queued-at"]);
    if (waiting.has(job["run-id"])) waiting.get(job["run-id"])(latency);
    else receipts.set(job["run-id"], latency);
    const started = await call("POST", `jobs/${job.id}/start`);
    if (started.status === 200) {
      await call("POST", `jobs/${job.id}/finish`, {
        session: false,
        token: started.json["job-token"],
        body: { status: "errored", message: "bench" },
      });
    }
  };
  const agents = Array.from({ length: AGENTS }, (_, i) => pollingAgent(origin, poolToken, `bench-${i}`, onJob));
  for (const a of agents) await a.start();
  await sleep(1000);
  const samples = [];
  for (let i = 0; i < DISPATCHES; i++) {
    const e4 = await api.expectOk("E4", "POST", `/api/v2/no-code-modules/${e1.json.data.id}/workspaces`, {
      bearer: token,
      raw: JSON.stringify({
        data: {
          type: "workspaces",
          attributes: {
            name: `agents-${i}`,
            "execution-mode": "agent",
            "agent-pool-id": poolId,
            "engine-version": ENGINE,
          },
        },
      }),
      contentType: JSONAPI,
    });
    const runId = e4.json.data.relationships["latest-run"].data.id;
    const latency = receipts.has(runId)
      ? receipts.get(runId)
      : await new Promise((resolve, reject) => {
          const timer = setTimeout(
            () => reject(new Error(`run ${runId}: no agent received its job within 10 s`)),
            10_000,
          );
          waiting.set(runId, (ms) => {
            clearTimeout(timer);
            resolve(ms);
          });
        });
    samples.push(latency);
    await sleep(100);
  }
  const sorted = [...samples].sort((a, b) => a - b);
  const dispatch = { p50: percentile(sorted, 50), p99: percentile(sorted, 99), samples: samples.length };
  log(
    `  agent-dispatch: ${samples.length} jobs to ${AGENTS} idle pollers, p50 ${dispatch.p50} ms, p99 ${dispatch.p99} ms (${since()})`,
  );

  // ---- 2. D1 round trips of idle agents.
  const before = await probe("/agent-pool-d1", { poolId });
  const tIdle = performance.now();
  await sleep(idleSeconds * 1000);
  const after = await probe("/agent-pool-d1", { poolId });
  const seconds = (performance.now() - tIdle) / 1000;
  const calls = after.calls - before.calls;
  const perAgentMinute = calls / (AGENTS * (seconds / 60));
  log(
    `  agent-idle-d1: ${calls} D1 round trips of the pool in ${seconds.toFixed(0)} s with ${after.liveSessions} idle agents = ${perAgentMinute.toFixed(2)} per agent-minute (${since()})`,
  );
  for (const a of agents) a.state.stopped = true;
  return { dispatch, idle: { perAgentMinute, calls, seconds, agents: AGENTS } };
}
