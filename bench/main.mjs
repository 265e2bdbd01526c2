#!/usr/bin/env node
// `npm run bench` (docs/performance.md): a repeatable performance picture of every hot path.
//
// Builds the production bundle (`wrangler deploy --dry-run`), runs it in workerd through
// Miniflare's API on 127.0.0.1 with real local D1 (migrated through its binding), the
// SQLite-backed OtpStore Durable Object, both queues and R2, drives each endpoint with
// autocannon from this process, and measures the raw in-isolate certificate signing rate
// per CA type with a bench-only Worker (bench/workers/sign-rate-worker.ts) in the same workerd.
// Every figure is reported as a ratio to the floor (GET /api/v2/ping with the admin token, in slices
// alternating with each benchmark) or, for signing endpoints, to the raw signing rate of
// that CA type, all from the same run. Prints a table, writes bench-results/latest.json and
// the generated block of docs/performance.md (which explains the method), and ends with one
// `target …` line per target. Not part of CI.
//
// Options: --duration=S (timed seconds per benchmark, default 8), --slices=N (default 4),
// --warmup=S (default 2), --connections=N (default 10), --only=name,name (run a subset; the
// floor always runs),
// --no-doc (leave docs/performance.md alone), --disk (local storage on disk instead of
// tmpfs: adds this disk's fsync latency to every D1 call and Durable Object write),
// --profile=<benchmark>[,…] (CPU-profile the Keyway isolate during those benchmarks' timed
// runs and print where the time goes; profiles are saved in bench-results/),
// --runs=N (N whole runs one after another; prints the medians and the target lines from
// them, bench/runs.mjs), --result=<file> (also write the run's JSON there),
// --agent-idle=S (seconds the agent-dispatch check leaves its agents idle, default 300).
import { mkdir } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { agentChecks } from "./agents.mjs";
import { combineRuns, runLoad } from "./load.mjs";
import { attachProfiler, summariseProfile } from "./profile.mjs";
import { fmt, machineInfo, targetLine, textTable, writeJson, writePerformanceDoc } from "./report.mjs";
import { rolloutScale } from "./rollout.mjs";
import { repeatRuns } from "./runs.mjs";
import {
  applyMigrations,
  askBenchWorker,
  benchSecrets,
  buildBenchWorker,
  buildWorker,
  projectRoot,
  scratchDir,
  startRuntime,
  workerdCpuSeconds,
} from "./runtime.mjs";
import {
  apiClient,
  BIG_ORG_WORKSPACES,
  KEYS,
  LOOKUP_BIG_ROLES,
  SMALL_ORG_WORKSPACES,
  SSH_MOUNTS,
  SUBJECT_PUBLIC_KEY,
  scenarios,
  Unavailable,
} from "./scenarios.mjs";

process.env.WRANGLER_SEND_METRICS = "false";

const options = {
  duration: 8,
  warmup: 2,
  connections: 10,
  slices: 4,
  only: null,
  doc: true,
  disk: false,
  profile: null,
  runs: 1,
  result: null,
  agentIdle: 300,
};
for (const arg of process.argv.slice(2)) {
  const [key, value] = arg.replace(/^--/, "").split("=");
  if (key === "duration" || key === "warmup" || key === "connections" || key === "slices" || key === "runs")
    options[key] = Number(value);
  else if (key === "result") options.result = value;
  else if (key === "agent-idle") options.agentIdle = Number(value);
  else if (key === "only") options.only = new Set(value.split(","));
  else if (key === "no-doc") options.doc = false;
  else if (key === "disk") options.disk = true;
  else if (key === "profile") options.profile = new Set(value.split(","));
  else {
    console.error(`unknown option ${arg}`);
    process.exit(2);
  }
}

/** Raw signing loop per CA type (ms of signing per key type). */
const RAW_SIGN_MS = 3000;
/** Raw rates measured at the start and end: signing per CA type, and RSA-2048 key generation (docs/performance.md). */
const RAW_TYPES = [
  { key: "ed25519", label: "Ed25519 signing" },
  { key: "rsa4096", label: "RSA-4096 (rsa-sha2-256) signing" },
  { key: "ecdsa256", label: "ECDSA P-256 signing" },
  { key: "rsa2048-keygen", label: "RSA-2048 key generation", keygenBits: 2048 },
];

/** One timed loop of a raw rate in the sign-rate Worker: signatures, or keys for a keygen type. */
function askRawRate(mf, key, durationMs, warmup) {
  const type = RAW_TYPES.find((t) => t.key === key);
  if (type?.keygenBits)
    return askBenchWorker(
      mf,
      "sign-rate",
      { bits: type.keygenBits, durationMs, warmup: warmup >= 20 ? 1 : 0 },
      "/keygen",
    );
  return askBenchWorker(mf, "sign-rate", {
    privateKey: KEYS[key].privateKey,
    subjectPublicKey: SUBJECT_PUBLIC_KEY,
    durationMs,
    warmup,
  });
}

// Only the final target lines may contain the word "missed" (docs/performance.md), so any other text
// (a response body, a workerd log line) has it defused.
/**
 * Wait until workerd is idle again: requests still queued in it when autocannon stops (slow
 * paths such as RSA key generation) would otherwise run during the next benchmark. Idle =
 * three sequential pings in a row each faster than max(5 ms, 3 × the floor's p50), waiting
 * at most 3 s (the run must stay within its time budget on a busy machine).
 */
async function settle(origin, adminToken, floorP50) {
  const limit = Math.max(5, 3 * (floorP50 ?? 1));
  const t0 = performance.now();
  let fast = 0;
  while (fast < 3 && performance.now() - t0 < 3000) {
    const t = performance.now();
    try {
      const res = await fetch(`${origin}/api/v2/ping`, { headers: { Authorization: `Bearer ${adminToken}` } });
      await res.arrayBuffer();
      fast = performance.now() - t < limit ? fast + 1 : 0;
    } catch {
      fast = 0;
    }
    if (fast < 3) await new Promise((r) => setTimeout(r, 50));
  }
  return (performance.now() - t0) / 1000;
}

/** runLoad plus the CPU seconds workerd spent meanwhile (`cpuS`, null when /proc is not there). */
async function runLoadWithCpu(args) {
  const before = workerdCpuSeconds();
  const run = await runLoad(args);
  const after = workerdCpuSeconds();
  return { ...run, cpuS: before !== null && after !== null ? after - before : null };
}

/** workerd CPU µs per 2xx answer over several runs (null when unknown). */
function cpuPerRequestUs(runs) {
  if (runs.length === 0 || runs.some((r) => r.cpuS === null || r.cpuS === undefined)) return null;
  const requests = runs.reduce((a, r) => a + r.requests, 0);
  return requests > 0 ? (runs.reduce((a, r) => a + r.cpuS, 0) * 1e6) / requests : null;
}

const log = (line) =>
  console.log(line.startsWith("target ") ? line : line.replace(/missed/gi, (w) => `${w[0]}-${w.slice(1)}`));
const elapsed = (t) => `${((performance.now() - t) / 1000).toFixed(1)} s`;

async function main() {
  if (options.runs > 1) return repeatRuns(options, process.argv.slice(2), log);
  const { started, startedAt, machine, loadBefore } = logStart();

  const scratch = await scratchDir({ onDisk: options.disk });
  log(`storage: ${scratch.storage}`);
  const secrets = benchSecrets();
  let runtime = null;
  const bulk = [];
  /** Every autocannon run's bad answers, for the no-non-2xx target. */
  const answers = { total: 0, bad: 0, where: [] };
  const count = (name, run) => {
    if (!run) return;
    const bad = run.non2xx + run.errors + run.timeouts;
    answers.total += run.requests + bad;
    answers.bad += bad;
    if (bad > 0) {
      const kinds = Object.entries(run.errorKinds ?? {})
        .map(([k, n]) => `${k} ×${n}`)
        .join(", ");
      answers.where.push(
        `${name}: ${run.non2xx} non-2xx (first ${run.firstBad ?? "–"}), ${run.errors} errors${kinds ? ` (${kinds})` : ""}, ${run.timeouts} timeouts`,
      );
    }
  };
  const results = [];
  const raw = {};
  let probes = [];
  let rollout = null;
  let agents = null;
  let migrations = null;
  let bundleBytes = 0;
  try {
    let t = performance.now();
    const build = await buildWorker(scratch.dir);
    const signRateScript = await buildBenchWorker("sign-rate-worker");
    const probeScript = await buildBenchWorker("probe-worker");
    bundleBytes = build.bytes;
    log(`built the production bundle (${Math.round(build.bytes / 1024)} KiB) and the bench workers in ${elapsed(t)}`);

    t = performance.now();
    runtime = await startRuntime({
      build,
      signRateScript,
      probeScript,
      vars: { SSH_MOUNTS: SSH_MOUNTS.join(","), ...secrets },
      persistDir: scratch.stateDir,
      inspector: options.profile !== null,
    });
    migrations = await applyMigrations(runtime.mf);
    log(
      `workerd up on ${runtime.origin}; ${migrations.files.length} migrations (${migrations.statements} statements) applied in ${elapsed(t)}`,
    );

    await measureRaw(runtime, raw, "start");
    probes = await measureSubSteps(runtime);

    const api = apiClient(runtime.origin, secrets);
    const state = benchState({ runtime, secrets, results, bulk, count });
    /** Setups by benchmark name (the paired floor and lookup pairs reuse them). */
    const setups = {};
    const floorP50 = () => results.find((r) => r.name === "floor")?.p50;
    await runScenarios({ runtime, secrets, build, results, count, setups, floorP50 }, { api, state, raw });
    ({ rollout, agents } = await optionalChecks(runtime, api));
  } finally {
    if (runtime) {
      const lines = runtime.runtimeLineCount();
      if (lines > 0) {
        log(`workerd wrote ${lines} log line(s); the first:`);
        for (const line of runtime.runtimeLog.slice(0, 5)) log(`  ${line.slice(0, 300)}`);
      }
      await runtime.mf.dispose();
    }
    await scratch.remove();
  }

  const { floors, floor, drift } = applyFloorRatios(results, raw);
  const targets = targetLines(results, answers, agents);
  const tables = reportTables({ results, bulk, raw, probes, floor, floors, drift });
  const loadAfter = printSummary(tables, answers, started);
  await writeReport(
    {
      startedAt,
      started,
      machine,
      loadBefore,
      loadAfter,
      storage: scratch.storage,
      bundleBytes,
      migrations,
      floor,
      drift,
      raw,
      probes,
      results,
      rollout,
      agents,
      bulk,
      answers,
    },
    tables,
    targets,
  );
}

/** Log the machine, its load and the load settings; returns when the run started, the machine and its load. */
function logStart() {
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const machine = machineInfo();
  log(`keyway bench — ${startedAt}`);
  log(
    `machine: ${machine.nproc} CPU(s), ${machine.cpuModel}, ${machine.memoryGiB} GiB; ${machine.os}; ` +
      `node ${machine.node}, workerd ${machine.workerd}, wrangler ${machine.wrangler}, miniflare ${machine.miniflare}, autocannon ${machine.autocannon}`,
  );
  const loadBefore = os.loadavg();
  log(`load average before: ${loadBefore.map((l) => l.toFixed(2)).join(" ")}`);
  if (loadBefore[0] > machine.nproc * 0.5) {
    log(
      `warning: the machine is busy (1-min load ${loadBefore[0].toFixed(2)} on ${machine.nproc} CPUs); figures will be noisy`,
    );
  }
  log(
    `load: ${options.connections} connections, ${options.warmup} s warm-up + ${options.duration} s timed per benchmark ` +
      `in ${options.slices} slices, each paired with a slice of the floor in ABBA order; generator in this process`,
  );
  return { started, startedAt, machine, loadBefore };
}

/**
 * Raw in-isolate signing rate per CA type, measured before the HTTP benchmarks and again
 * after them; the rate used for ratios is the mean of the two (like the floor).
 */
async function measureRaw(runtime, raw, when) {
  for (const { key, label } of RAW_TYPES) {
    raw[key] ??= { label, runs: [] };
    try {
      const run = await askRawRate(runtime.mf, key, RAW_SIGN_MS, 20);
      raw[key].runs.push({ when, ...run });
      raw[key].perSecond = mean(raw[key].runs.map((r) => r.perSecond));
      log(`· raw ${label} (${when}): ${fmt(run.perSecond)}/s (${run.signatures} in ${run.elapsedMs} ms)`);
    } catch (e) {
      raw[key].error = String(e.message ?? e);
      log(`· raw ${label} (${when}): not available (${raw[key].error.slice(0, 200)})`);
    }
  }
}

/** Sub-step costs inside the isolate, for "what dominates each path" (empty when not available). */
async function measureSubSteps(runtime) {
  const probes = [];
  try {
    probes.push(
      ...(await askBenchWorker(runtime.mf, "probe", { iterations: 5000, budgetMs: 600, warmup: 5 }, "/sub-steps")),
    );
    for (const p of probes) log(`· sub-step ${p.name}: ${fmt(p.usPerCall)} µs (${p.calls} calls)`);
  } catch (e) {
    log(`· sub-step probes: not available (${String(e.message ?? e).slice(0, 200)})`);
  }
  return probes;
}

/** What the scenarios' setups use: the probe Worker, idling, and untimed bulk setup load. */
function benchState({ runtime, secrets, results, bulk, count }) {
  return {
    /** New roles written through the probe Worker (buildRole, putRole's row shapes, no HTTP). */
    mintOtps: async (request) =>
      (await askBenchWorker(runtime.mf, "probe", { ...request, concurrency: 32 }, "/mint-otps")).otps,
    putRoles: (mount, roles) => askBenchWorker(runtime.mf, "probe", { mount, roles, perBatch: 100 }, "/put-roles"),
    /** Copies of an E4-made workspace, written by the probe Worker without runs (docs/performance.md). */
    seedWorkspaces: ({ templateId, prefix, count }) =>
      askBenchWorker(
        runtime.mf,
        "probe",
        { templateWorkspaceId: templateId, namePrefix: prefix, count, perBatch: 50, history: false },
        "/clone-workspaces",
      ),
    /** Wait `seconds`, then until workerd answers pings quickly again (background work done). */
    idle: async (seconds) => {
      await new Promise((r) => setTimeout(r, seconds * 1000));
      await settle(runtime.origin, secrets.ADMIN_TOKEN, results.find((r) => r.name === "floor")?.p50);
    },
    /** Seconds of setup load (role creation, OTP minting) each bulk step may take. */
    bulkBudgetS: 30,
    /**
     * Untimed setup load: `amount` requests in chunks (each chunk ends cleanly, so nothing
     * is cut off mid-request) until done or `budgetS` is spent. The first chunk is small;
     * later ones are sized from the rate seen so far to end near the budget.
     */
    async bulkLoad(name, { amount, budgetS, connections, requests }) {
      const t0 = performance.now();
      const total = {
        requests: 0,
        seconds: 0,
        non2xx: 0,
        errors: 0,
        timeouts: 0,
        firstBad: null,
        errorKinds: {},
        latencies: [],
      };
      for (;;) {
        const sent = total.requests + total.non2xx + total.errors;
        const left = budgetS - (performance.now() - t0) / 1000;
        if (sent >= amount || left <= 0.5) break;
        const rate = total.seconds > 0 ? sent / total.seconds : 0;
        const chunk = rate > 0 ? Math.max(connections, Math.floor(rate * Math.min(left, 10))) : 4 * connections;
        const n = Math.min(chunk, amount - sent);
        const run = await runLoad({ origin: runtime.origin, requests, connections, amount: n });
        count(name, run);
        total.requests += run.requests;
        total.seconds += run.seconds;
        total.non2xx += run.non2xx;
        total.errors += run.errors;
        total.timeouts += run.timeouts;
        total.firstBad ??= run.firstBad;
        if (run.p50 !== null) total.latencies.push(run.p50);
        if (run.requests === 0) break;
      }
      const rps = total.seconds > 0 ? total.requests / total.seconds : 0;
      bulk.push({
        name,
        requests: total.requests,
        seconds: total.seconds,
        rps,
        p50: total.latencies.length ? mean(total.latencies) : null,
        non2xx: total.non2xx,
        connections,
      });
      log(
        `  ${name} (setup): ${total.requests} requests in ${total.seconds.toFixed(1)} s = ${fmt(rps)}/s (${elapsed(t0)})`,
      );
      await settle(runtime.origin, secrets.ADMIN_TOKEN, null);
      return total;
    },
  };
}

/** A floor benchmark: warm-up, then one continuous timed run. */
async function continuousRun(ctx, scenario, setup, connections) {
  const { runtime, secrets, floorP50, count } = ctx;
  const warmup = await runLoad({
    origin: runtime.origin,
    requests: setup.requests,
    connections,
    durationS: options.warmup,
  });
  const timed = await runLoadWithCpu({
    origin: runtime.origin,
    requests: setup.requests,
    connections,
    durationS: options.duration,
  });
  const settleS = await settle(runtime.origin, secrets.ADMIN_TOKEN, floorP50());
  count(`${scenario.name} (warm-up)`, warmup);
  count(scenario.name, timed);
  const { latencies: _l, ...rest } = timed;
  return {
    ...rest,
    cpuUs: cpuPerRequestUs([timed]),
    settleS,
    non2xx: timed.non2xx + warmup.non2xx,
    errors: timed.errors + timed.timeouts + warmup.errors + warmup.timeouts,
  };
}

/**
 * Any other benchmark: warm-up, then the timed seconds cut into slices, each right after
 * a slice of the floor (and of the paired raw signing rate or paired benchmark, if any),
 * so each ratio compares figures taken seconds apart — this machine's load changes by
 * tens of percent within a minute. With --profile, one continuous profiled run instead.
 */
async function pairedRun(ctx, scenario, setup, connections, entry) {
  const { runtime, secrets, floorP50, count, setups, build } = ctx;
  if (!setups.floor)
    throw new Unavailable("the floor (GET /api/v2/ping) is not available, so nothing can be paired with it");
  // Pre-minted OTPs: each request consumes its own; never send more than there are.
  let left = setup.pool ? setup.pool.length : null;
  const benchRun = async (durationS) => {
    if (left !== null && left <= 0) return null;
    const r = await runLoadWithCpu({
      origin: runtime.origin,
      requests: setup.requests,
      connections,
      durationS,
      amount: left ?? undefined,
    });
    if (left !== null) left -= r.requests + r.non2xx + r.errors;
    return r;
  };
  const warmupAmount =
    left === null ? undefined : Math.floor((left * options.warmup) / (options.warmup + options.duration));
  const warmup = await runLoad({
    origin: runtime.origin,
    requests: setup.requests,
    connections,
    durationS: options.warmup,
    amount: warmupAmount,
  });
  if (left !== null) left -= warmup.requests + warmup.non2xx + warmup.errors;
  count(`${scenario.name} (warm-up)`, warmup);
  let settleS = await settle(runtime.origin, secrets.ADMIN_TOKEN, floorP50());

  if (options.profile?.has(scenario.name)) {
    const profiler = await attachProfiler(runtime.inspectorUrl, "core:user:keyway");
    await profiler.start();
    const timed = await benchRun(options.duration);
    const out = path.join(projectRoot, "bench-results", `${scenario.name}.cpuprofile`);
    await mkdir(path.dirname(out), { recursive: true });
    entry.profile = await summariseProfile(await profiler.stop(), build.entryPath, out);
    entry.note = `${entry.note ? `${entry.note}; ` : ""}CPU profiler attached (slower), not paired`;
    log(`  profile of ${scenario.name}: ${fmt(entry.profile.totalMs)} ms of samples, saved to ${out}`);
    log(
      textTable(
        ["module (self time)", "ms", "share"],
        entry.profile.modules.map((m) => [m.name, fmt(m.ms), `${fmt(m.share * 100, 2)}%`]),
      ),
    );
    log(
      textTable(
        ["function (self time)", "ms", "share"],
        entry.profile.functions.map((m) => [m.name, fmt(m.ms), `${fmt(m.share * 100, 2)}%`]),
      ),
    );
    count(scenario.name, timed);
    const { latencies: _l, ...rest } = timed;
    return {
      ...rest,
      settleS,
      non2xx: timed.non2xx + warmup.non2xx,
      errors: timed.errors + timed.timeouts + warmup.errors + warmup.timeouts,
    };
  }

  const sliceS = options.duration / options.slices;
  const floorRuns = [];
  const benchRuns = [];
  const pairRuns = [];
  const rawRuns = [];
  // The slices of one round run in ABBA order: the floor (and raw or paired slices)
  // first in even rounds, last in odd ones. A drift of the machine's speed during the
  // run then weighs on both sides alike instead of always favouring the later one.
  const floorSlice = async () => {
    const f = await runLoadWithCpu({
      origin: runtime.origin,
      requests: setups.floor.requests,
      connections: options.connections,
      durationS: sliceS,
    });
    count("floor (paired)", f);
    floorRuns.push(f);
  };
  const rawSlice = async () => {
    rawRuns.push(await rawSignSlice(runtime, scenario.pairRaw, sliceS));
  };
  const pairSlice = async () => {
    const p = await runLoad({
      origin: runtime.origin,
      requests: setups[scenario.pairWith].requests,
      connections,
      durationS: sliceS,
    });
    count(`${scenario.pairWith} (paired)`, p);
    pairRuns.push(p);
  };
  const benchSlice = async () => {
    // Untimed work a benchmark needs around each slice (issue-rsa2048: let the key pool
    // refill before the next floor or raw slice, then take its keys before the slice).
    if (setup.beforeSlice) await setup.beforeSlice();
    const b = await benchRun(sliceS);
    if (b) {
      count(scenario.name, b);
      benchRuns.push(b);
    }
    if (setup.afterSlice) await setup.afterSlice();
  };
  const round = [floorSlice];
  if (scenario.pairRaw) round.push(rawSlice);
  if (scenario.pairWith && setups[scenario.pairWith]) round.push(pairSlice);
  round.push(benchSlice);
  for (let i = 0; i < options.slices; i++) {
    for (const slice of i % 2 === 0 ? round : [...round].reverse()) {
      await slice();
      settleS += await settle(runtime.origin, secrets.ADMIN_TOKEN, floorP50());
    }
  }
  const bench = combineRuns(benchRuns);
  const fl = combineRuns(floorRuns);
  /** @type {Record<string, any>} */
  const out = {
    ...bench,
    settleS,
    non2xx: bench.non2xx + warmup.non2xx,
    errors: bench.errors + bench.timeouts + warmup.errors + warmup.timeouts,
    pairedFloorRps: fl.rps,
    pairedFloorP50: fl.p50,
    xFloor: fl.rps > 0 ? bench.rps / fl.rps : null,
    p50xFloor: fl.p50 ? bench.p50 / fl.p50 : null,
    xFloorSlices: bench.sliceRps.map((r, i) => (floorRuns[i]?.rps ? r / floorRuns[i].rps : null)),
    // workerd CPU per answer: the floor's over the benchmark's is the ratio a saturated
    // single thread gives, and the machine's other load moves it far less than a rate.
    cpuUs: cpuPerRequestUs(benchRuns),
    pairedFloorCpuUs: cpuPerRequestUs(floorRuns),
  };
  out.cpuXFloor = out.cpuUs && out.pairedFloorCpuUs ? out.pairedFloorCpuUs / out.cpuUs : null;
  if (rawRuns.length > 0) {
    const signatures = rawRuns.reduce((a, r) => a + r.signatures, 0);
    const ms = rawRuns.reduce((a, r) => a + r.elapsedMs, 0);
    out.pairedRawRps = ms > 0 ? (signatures * 1000) / ms : null;
    out.xRaw = out.pairedRawRps ? bench.rps / out.pairedRawRps : null;
  }
  if (pairRuns.length > 0) {
    const pair = combineRuns(pairRuns);
    out.pairP50 = pair.p50;
    out.pairRps = pair.rps;
  }
  if (setup.pool) {
    out.otpPool = setup.pool.length;
    if (bench.seconds < options.duration * 0.9) {
      entry.note = `${entry.note ? `${entry.note}; ` : ""}ran ${bench.seconds.toFixed(1)} s: the pre-minted OTPs ran out`;
    }
  }
  return out;
}

/** A slice of one raw rate (signing of one CA type, or key generation; see measureRaw). */
async function rawSignSlice(runtime, key, seconds) {
  return askRawRate(runtime.mf, key, Math.round(seconds * 1000), 2);
}

/**
 * Every scenario in run order (the floor always; others as --only says): set up, measure,
 * and one result entry each in `ctx.results`.
 */
async function runScenarios(ctx, { api, state, raw }) {
  const { runtime, results, setups } = ctx;
  for (const scenario of scenarios({ api, state })) {
    if (options.only && scenario.role !== "floor" && !options.only.has(scenario.name)) continue;
    // Longer scale checks run only when named (the default run stays within 8 minutes).
    if (scenario.onlyWhenAsked && !options.only?.has(scenario.name)) continue;
    const t0 = performance.now();
    const entry = {
      name: scenario.name,
      title: scenario.title,
      raw: scenario.raw ?? null,
      role: scenario.role ?? null,
      pairWith: scenario.pairWith ?? null,
      compareP50With: scenario.compareP50With ?? null,
    };
    try {
      const floorRps = results.find((r) => r.name === "floor")?.rps ?? 2000;
      // verify: enough distinct OTPs for warm-up and timed run at up to the floor's rate.
      const needed = Math.ceil(floorRps * (options.warmup + options.duration) * 1.05);
      const setup = await scenario.setup({ needed });
      const connections = Math.min(options.connections, scenario.maxConnections ?? Number.POSITIVE_INFINITY);
      entry.connections = connections;
      if (setup.note) entry.note = setup.note;
      setups[scenario.name] = setup;
      const run =
        scenario.role === "floor"
          ? await continuousRun(ctx, scenario, setup, connections)
          : await pairedRun(ctx, scenario, setup, connections, entry);
      Object.assign(entry, { available: true, ...run });
      log(
        `· ${scenario.name}: ${fmt(entry.rps)} req/s, p50 ${fmt(entry.p50)} ms, p99 ${fmt(entry.p99)} ms` +
          (entry.xFloor !== undefined
            ? `, ${fmt(entry.xFloor)} × paired floor (${fmt(entry.pairedFloorRps)} req/s)`
            : "") +
          (entry.pairedRawRps !== undefined
            ? `, ${fmt(entry.xRaw)} × paired raw rate (${fmt(entry.pairedRawRps)}/s)`
            : "") +
          (entry.cpuXFloor ? `, workerd CPU ${fmt(entry.cpuUs)} µs/req = ${fmt(entry.cpuXFloor)} × floor's` : "") +
          (entry.pairP50 !== undefined ? `, paired ${scenario.pairWith} p50 ${fmt(entry.pairP50)} ms` : "") +
          `${entry.non2xx + entry.errors > 0 ? `, ${entry.non2xx} non-2xx / ${entry.errors} errors` : ""} (${elapsed(t0)}` +
          `${entry.settleS > 2 ? `; workerd busy ${entry.settleS.toFixed(1)} s in all after slices` : ""})`,
      );
    } catch (e) {
      if (!(e instanceof Unavailable)) throw e;
      Object.assign(entry, { available: false, missing: e.missing, reason: e.message });
      log(`· ${scenario.name}: ${e.missing ? "not available yet" : "setup failed"} — ${e.message}`);
    }
    results.push(entry);
    // Raw signing again once every benchmark but E4 has run (E4's queued runs keep workerd
    // busy after it).
    if (scenario.name === "floor-end") await measureRaw(runtime, raw, "end");
  }
}

/** The checks that run only when named in --only: rollout scale (N15) and agent dispatch (N18). */
async function optionalChecks(runtime, api) {
  let rollout = null;
  /** @type {{ dispatch?: { p50: number, p99: number }, idle?: { perAgentMinute: number }, error?: string } | null} */
  let agents = null;
  // Decision N15's rollout scale check (bench/rollout.mjs): only with --only=rollout.
  if (options.only?.has("rollout")) {
    rollout = await rolloutScale({
      origin: runtime.origin,
      api,
      probe: (p, body) => askBenchWorker(runtime.mf, "probe", body, p),
      log,
    }).catch((e) => {
      log(`· rollout: failed — ${e.message}`);
      return { error: String(e.message) };
    });
  }
  // N18's execution-plane checks (bench/agents.mjs): only with --only=agent-dispatch.
  if (options.only?.has("agent-dispatch")) {
    agents = await agentChecks({
      origin: runtime.origin,
      api,
      probe: (p, body) => askBenchWorker(runtime.mf, "probe", body, p),
      log,
      idleSeconds: options.agentIdle,
    }).catch((e) => {
      log(`· agent-dispatch: failed — ${e.message}`);
      return { error: String(e.message) };
    });
  }
  return { rollout, agents };
}

/**
 * Ratios: the floor is the mean of the two ping runs (start and end) of this run. Fills in the
 * ratios of results that have no paired ones.
 */
function applyFloorRatios(results, raw) {
  const floors = results.filter((r) => r.role === "floor" && r.available);
  const floor = floors.length > 0 ? { rps: mean(floors.map((f) => f.rps)), p50: mean(floors.map((f) => f.p50)) } : null;
  const drift = floors.length === 2 ? floors[1].rps / floors[0].rps - 1 : null;
  for (const r of results) {
    if (!r.available) continue;
    // Floor runs (and profiled runs) have no paired floor: compare them with the mean floor.
    r.xFloor ??= floor ? r.rps / floor.rps : null;
    r.p50xFloor ??= floor ? r.p50 / floor.p50 : null;
    const floorCpu = floors.every((f) => f.cpuUs) ? mean(floors.map((f) => f.cpuUs)) : null;
    r.cpuXFloor ??= floorCpu && r.cpuUs ? floorCpu / r.cpuUs : null;
    const rate = r.raw ? raw[r.raw]?.perSecond : undefined;
    r.xRaw ??= rate ? r.rps / rate : null;
  }
  return { floors, floor, drift };
}

/** The target lines: every target's ratio from this run's results (docs/performance.md). */
function targetLines(results, answers, agents) {
  const byName = Object.fromEntries(results.map((r) => [r.name, r]));
  const pick = (name, field) => (byName[name]?.available ? (byName[name][field] ?? null) : null);

  /** A benchmark's figure over the same figure of its pairWith benchmark, from alternating slices. */
  const overPair = (name, field, pairField) =>
    pick(name, field) !== null && pick(name, pairField) ? pick(name, field) / pick(name, pairField) : null;
  return [
    {
      name: "sign-ed25519-root",
      kind: "min",
      floor: 0.5,
      ratio: pick("sign-ed25519-root", "xFloor"),
      means: "sign with the root token req/s ÷ paired floor req/s",
    },
    {
      name: "sign-ed25519",
      kind: "min",
      floor: 0.5,
      ratio: pick("sign-ed25519", "xFloor"),
      means: "sign with a policy token req/s ÷ paired floor req/s",
    },
    {
      name: "sign-policy-vs-root",
      kind: "min",
      floor: 0.9,
      ratio: overPair("sign-ed25519", "rps", "pairRps"),
      means:
        "sign with a policy token req/s ÷ sign with the root token req/s, in alternating slices (docs/performance.md)",
    },
    {
      name: "sign-named-issuer",
      kind: "min",
      floor: 0.9,
      ratio: overPair("sign-ed25519-named-issuer", "rps", "pairRps"),
      means:
        "sign through a role bound to a named non-default issuer req/s ÷ sign-ed25519 (default issuer) req/s, in alternating slices",
    },
    {
      name: "sign-rsa4096",
      kind: "min",
      floor: 0.8,
      ratio: pick("sign-rsa4096", "xRaw"),
      means: "sign-rsa4096 req/s ÷ paired raw RSA-4096 certificates/s",
    },
    {
      name: "sign-ed25519-stored",
      kind: "min",
      floor: 0.35,
      ratio: overPair("sign-ed25519-stored", "rps", "pairRps"),
      means: "sign with store_certificates req/s ÷ sign without it req/s, in alternating slices (S22)",
    },
    {
      name: "krl-read",
      kind: "min",
      floor: 0.8,
      ratio: pick("krl-read", "xFloor"),
      means: "GET krl req/s ÷ paired floor req/s (S23)",
    },
    {
      name: "issue-rsa2048",
      kind: "min",
      floor: 0.8,
      ratio: pick("issue-rsa2048", "xRaw"),
      means: "issue rsa 2048 req/s ÷ raw in-isolate RSA-2048 keys/s, in alternating slices (docs/performance.md)",
    },
    {
      name: "login-jwt-static",
      kind: "min",
      floor: 0.3,
      ratio: pick("login-jwt-static", "xFloor"),
      means: "JWT login with a static key req/s ÷ paired floor req/s (S25)",
    },
    {
      name: "login-jwt-jwks",
      kind: "min",
      floor: 0.3,
      ratio: pick("login-jwt-jwks", "xFloor"),
      means: "JWT login with a cached JWKS req/s ÷ paired floor req/s (S25)",
    },
    {
      name: "creds",
      kind: "min",
      floor: 0.4,
      ratio: pick("creds", "xFloor"),
      means: "creds with a policy token req/s ÷ paired floor req/s",
    },
    {
      name: "verify",
      kind: "min",
      floor: 0.5,
      ratio: pick("verify", "xFloor"),
      means: "verify req/s ÷ paired floor req/s",
    },
    {
      name: "lookup",
      kind: "min",
      floor: 0.35,
      ratio: pick("lookup-10", "xFloor"),
      means: "lookup (10 roles) with a policy token req/s ÷ paired floor req/s",
    },
    {
      name: "lookup-10k",
      kind: "max",
      floor: 1.5,
      ratio: overPair("lookup-10k", "p50", "pairP50"),
      means: `lookup p50 with ${LOOKUP_BIG_ROLES} roles ÷ lookup p50 with 10 roles, in alternating slices (bound: at most 1.5)`,
    },
    {
      name: "e3-read",
      kind: "min",
      floor: 0.7,
      ratio: pick("e3-read", "xFloor"),
      means: "E3 with a team token req/s ÷ paired floor req/s",
    },
    {
      name: "e3-read-10k-ws",
      kind: "max",
      floor: 1.5,
      ratio: overPair("e3-read-10k-ws", "p50", "pairP50"),
      means: `E3 p50 in an organization of ${BIG_ORG_WORKSPACES} workspaces ÷ E3 p50 with ${SMALL_ORG_WORKSPACES}, in alternating slices (bound: at most 1.5)`,
    },
    {
      name: "e4-create",
      kind: "min",
      floor: 0.1,
      ratio: pick("e4-create", "xFloor"),
      means: "E4 with a team token req/s ÷ paired floor req/s",
    },
    {
      name: "e4-create-10k-ws",
      kind: "max",
      floor: 1.5,
      ratio: overPair("e4-create-10k-ws", "p50", "pairP50"),
      means: `E4 p50 in an organization of ${BIG_ORG_WORKSPACES} workspaces ÷ E4 p50 in one that started with ${SMALL_ORG_WORKSPACES}, in alternating slices (bound: at most 1.5)`,
    },
    {
      name: "no-non-2xx",
      kind: "max",
      floor: 0,
      ratio: answers.total > 0 ? answers.bad / answers.total : null,
      ratioText: answers.total > 0 ? (answers.bad === 0 ? "0" : fmt(answers.bad / answers.total, 2)) : undefined,
      missedByIfZero: answers.total > 0 ? (answers.bad / answers.total) * 100 : 100,
      means:
        "share of all load-generator requests (warm-ups and setup loads included) answered non-2xx or failed (bound: 0)",
    },
    // N18, only when --only=agent-dispatch ran them (protocol-level pollers, bench/agents.mjs).
    ...(agents
      ? [
          {
            name: "agent-dispatch-p50",
            kind: "max",
            floor: 250,
            ratio: agents.dispatch?.p50 ?? null,
            means: "ms from the commit that queued a job to its receipt by one of 10 idle long-polling agents, p50",
          },
          {
            name: "agent-dispatch-p99",
            kind: "max",
            floor: 1000,
            ratio: agents.dispatch?.p99 ?? null,
            means: "the same, p99",
          },
          {
            name: "agent-idle-d1",
            kind: "max",
            floor: 2,
            ratio: agents.idle?.perAgentMinute ?? null,
            means: "D1 round trips of the pool's Durable Object per idle agent-minute (10 agents pinging and polling)",
          },
        ]
      : []),
  ].map(targetLine);
}

/** The benchmark table, the raw-rate and sub-step tables, and the floor line. */
function reportTables({ results, bulk, raw, probes, floor, floors, drift }) {
  const byName = Object.fromEntries(results.map((r) => [r.name, r]));
  const header = [
    "benchmark",
    "req/s",
    "× floor",
    "slices",
    "× raw",
    "p50 ms",
    "p99 ms",
    "p50 × floor",
    "cpu µs/req",
    "cpu × floor",
    "non-2xx",
    "note",
  ];
  const range = (xs) => {
    const v = (xs ?? []).filter((x) => x !== null);
    return v.length > 1 ? `${fmt(Math.min(...v), 2)}–${fmt(Math.max(...v), 2)}` : "";
  };
  const rows = results.map((r) => {
    if (!r.available) {
      return [
        r.name,
        "–",
        "–",
        "",
        "",
        "–",
        "–",
        "–",
        "–",
        "–",
        "–",
        `${r.missing ? "not available yet" : "setup failed"}: ${r.reason}`.slice(0, 140),
      ];
    }
    const notes = [
      r.connections !== options.connections ? `${r.connections} connections` : "",
      r.pairedRawRps !== undefined ? `paired raw ${fmt(r.pairedRawRps)}/s` : "",
      r.pairP50 !== undefined ? `paired ${r.pairWith} ${fmt(r.pairRps)} req/s, p50 ${fmt(r.pairP50)} ms` : "",
      r.compareP50With && byName[r.compareP50With]?.p50
        ? `p50 ${fmt(r.p50 / byName[r.compareP50With].p50)} × ${r.compareP50With}'s`
        : "",
      r.note ?? "",
    ];
    return [
      r.name,
      fmt(r.rps),
      fmt(r.xFloor),
      range(r.xFloorSlices),
      r.xRaw === null ? "" : fmt(r.xRaw),
      fmt(r.p50),
      fmt(r.p99),
      fmt(r.p50xFloor),
      fmt(r.cpuUs ?? null),
      fmt(r.cpuXFloor ?? null),
      r.non2xx + r.errors,
      notes.filter(Boolean).join("; "),
    ];
  });
  for (const b of bulk) {
    rows.push([
      `${b.name} (setup)`,
      fmt(b.rps),
      fmt(floor ? b.rps / floor.rps : null),
      "",
      "",
      fmt(b.p50),
      "",
      "",
      "",
      "",
      b.non2xx,
      `${b.requests} requests, ${b.connections} connections`,
    ]);
  }
  const table = textTable(header, rows);
  const rawRows = RAW_TYPES.map(({ key, label }) => {
    const r = raw[key];
    if (!r?.perSecond) return [label, "not available", "", "", ""];
    const at = (when) => fmt(r.runs.find((x) => x.when === when)?.perSecond);
    return [label, fmt(r.perSecond), at("start"), at("end"), fmt(floor ? r.perSecond / floor.rps : null)];
  });
  const rawTable = textTable(["raw in-isolate rate", "per second (mean)", "start", "end", "× floor"], rawRows);
  const probeTable =
    probes.length > 0
      ? textTable(
          ["sub-step (sequential, in-isolate)", "µs per call"],
          probes.map((p) => [p.name, fmt(p.usPerCall)]),
        )
      : "";
  const floorLine = floor
    ? `floor: ${fmt(floor.rps)} req/s, p50 ${fmt(floor.p50)} ms (mean of ${floors.length} ping run(s)${drift === null ? "" : `; end vs start ${drift >= 0 ? "+" : ""}${fmt(drift * 100, 2)}%`})`
    : "floor: not available";

  return { table, rawTable, probeTable, floorLine };
}

/** Print the tables and what went wrong; returns the load average after the run. */
function printSummary({ table, rawTable, probeTable, floorLine }, answers, started) {
  log("");
  log(table);
  log("");
  log(rawTable);
  log("");
  if (probeTable) {
    log(probeTable);
    log("");
  }
  log(floorLine);
  for (const w of answers.where) log(`bad answers — ${w}`);
  const loadAfter = os.loadavg();
  log(`load average after: ${loadAfter.map((l) => l.toFixed(2)).join(" ")}; total ${elapsed(started)}`);
  log("");

  return loadAfter;
}

/** Write the run's JSON (and, for a full run, docs/performance.md's block), then the target lines. */
async function writeReport(run, { table, rawTable, probeTable, floorLine }, targets) {
  const { startedAt, started, machine, loadBefore, loadAfter, storage, bundleBytes, migrations } = run;
  const { floor, drift, raw, probes, results, rollout, agents, bulk, answers } = run;
  const report = {
    startedAt,
    totalSeconds: (performance.now() - started) / 1000,
    machine,
    loadAverage: { before: loadBefore, after: loadAfter },
    options: {
      ...options,
      only: options.only ? [...options.only] : null,
      profile: options.profile ? [...options.profile] : null,
      rawSignMs: RAW_SIGN_MS,
    },
    storage: storage.startsWith("tmpfs") ? "tmpfs" : "disk",
    bundleBytes,
    mounts: SSH_MOUNTS,
    migrations,
    floor: floor ? { ...floor, drift } : null,
    rawSign: raw,
    subSteps: probes,
    results,
    rollout,
    agents,
    setupLoads: bulk,
    answers,
    targets: targets.map(({ name, kind, floor: bound, ratio: value, means, met, missedBy, line }) => ({
      name,
      kind,
      bound,
      ratio: value,
      means,
      met,
      missedBy,
      line,
    })),
  };
  const jsonPath = await writeJson(report, options.result);
  if (options.doc && !options.only && !options.profile) {
    const md = [
      `Last run: ${startedAt} (${fmt(report.totalSeconds)} s in all). Machine: ${machine.nproc} CPU(s), ${machine.cpuModel}, ` +
        `${machine.memoryGiB} GiB, ${machine.os}; Node ${machine.node}, workerd ${machine.workerd}, wrangler ${machine.wrangler}, ` +
        `miniflare ${machine.miniflare}, autocannon ${machine.autocannon}. Load: ${options.connections} connections, ` +
        `${options.warmup} s warm-up + ${options.duration} s timed per benchmark in ${options.slices} slices, each paired ` +
        `with a slice of the floor in ABBA order. Local storage on ${report.storage}. ` +
        `Load average before/after: ${loadBefore.map((l) => l.toFixed(1)).join(" ")} / ${loadAfter.map((l) => l.toFixed(1)).join(" ")}.`,
      "",
      table,
      "",
      rawTable,
      "",
      ...(probeTable ? [probeTable, ""] : []),
      floorLine,
      "",
      "```",
      ...targets.map((t) => t.line),
      "```",
    ].join("\n");
    await writePerformanceDoc(md);
  }
  log(`wrote ${jsonPath}${options.doc && !options.only && !options.profile ? " and docs/performance.md" : ""}`);
  for (const t of targets) console.log(t.line);
}

function mean(values) {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

main().catch((e) => {
  console.error(e?.stack ?? e);
  process.exit(1);
});
