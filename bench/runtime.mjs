// Runtime of `npm run bench` (docs/performance.md): build the production bundle, start it in workerd
// through Miniflare's API on 127.0.0.1 (not `wrangler dev`, whose proxy caps throughput),
// with the bindings wrangler.jsonc declares (local D1, the SQLite-backed OtpStore Durable
// Object, both queues, R2), migrate D1 through its binding, and run the bench-only
// signing-rate Worker next to it.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { build as esbuild } from "esbuild";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { unstable_getMiniflareWorkerOptions, unstable_splitSqlQuery } from "wrangler";

export const projectRoot = path.resolve(import.meta.dirname, "..");
const wranglerBin = path.join(projectRoot, "node_modules", ".bin", "wrangler");

/** Fresh secrets in decision B6's formats. */
export function benchSecrets() {
  return {
    ROOT_TOKEN: `hvs.bench-root-${randomBytes(16).toString("hex")}`,
    ADMIN_TOKEN: `bench-admin.atlasv1.${randomBytes(24).toString("hex")}`,
    KEYWAY_HASH_KEY: randomBytes(32).toString("base64"),
    KEYWAY_KEK: `k1:${randomBytes(32).toString("base64")}`,
  };
}

/**
 * The production bundle: `wrangler deploy --dry-run --outdir <dir>`. Returns the directory
 * and the entry module's path. The worker tree may be mid-edit by other engineers, so a
 * failed build is retried once after a pause before giving up.
 */
export async function buildWorker(workDir) {
  const outdir = path.join(workDir, "worker");
  for (let attempt = 1; ; attempt++) {
    const result = spawnSync(wranglerBin, ["deploy", "--dry-run", "--outdir", outdir], {
      cwd: projectRoot,
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true", WRANGLER_LOG: "error" },
      encoding: "utf8",
    });
    if (result.status === 0) break;
    if (attempt >= 2) {
      throw new Error(`wrangler deploy --dry-run failed (exit ${result.status}):\n${result.stdout}\n${result.stderr}`);
    }
    console.error("build failed, retrying in 5 s (the tree may be mid-edit)…");
    await new Promise((r) => setTimeout(r, 5000));
  }
  const files = await readdir(outdir);
  const entry = files.includes("index.js") ? "index.js" : files.find((f) => /\.m?js$/.test(f));
  if (!entry) throw new Error(`no entry module in ${outdir}: ${files.join(", ")}`);
  const { size } = await stat(path.join(outdir, entry));
  return { outdir, entryPath: path.join(outdir, entry), bytes: size };
}

/** Bundle a bench-only Worker (bench/workers/<name>.ts, which imports src/ modules) for workerd. */
export async function buildBenchWorker(name) {
  const result = await esbuild({
    entryPoints: [path.join(projectRoot, "bench", "workers", `${name}.ts`)],
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["module", "main"],
    write: false,
    logLevel: "silent",
  });
  return result.outputFiles[0].text;
}

/**
 * Start Keyway's bundle (worker `keyway`, the one served on 127.0.0.1), the signing-rate
 * Worker (`sign-rate`) and the sub-step probe Worker (`probe`, sharing Keyway's D1 database
 * and OtpStore namespace) in one workerd process; the bench-only Workers are reached only
 * through Miniflare's dispatch.
 * Bindings come from wrangler.jsonc via wrangler's own config→Miniflare conversion (the one
 * the Workers Vitest integration uses), so the bench tracks the deployed configuration.
 */
export async function startRuntime({ build, signRateScript, probeScript, vars, persistDir, inspector = false }) {
  // Only errors from wrangler's config reader: its warnings (experimental `secrets`, secrets
  // not in .dev.vars) do not apply, the secrets are passed below.
  const logLevel = process.env.WRANGLER_LOG;
  process.env.WRANGLER_LOG = "error";
  /** @type {any} wrangler types this loosely; the checks below say what the bench relies on. */
  let workerOptions;
  try {
    ({ workerOptions } = unstable_getMiniflareWorkerOptions(path.join(projectRoot, "wrangler.jsonc")));
  } finally {
    if (logLevel === undefined) delete process.env.WRANGLER_LOG;
    else process.env.WRANGLER_LOG = logLevel;
  }
  for (const binding of ["DB", "OTP_STORE", "PROVISION_QUEUE", "MODULES"]) {
    const declared =
      binding in (workerOptions.d1Databases ?? {}) ||
      binding in (workerOptions.durableObjects ?? {}) ||
      binding in (workerOptions.queueProducers ?? {}) ||
      binding in (workerOptions.r2Buckets ?? {});
    if (!declared) throw new Error(`wrangler.jsonc no longer declares binding ${binding}; update bench/runtime.mjs`);
  }
  // The bundle's files as explicit modules (the script first): Miniflare 5's converter of
  // v4 options does not take module rules.
  const bundleDir = path.dirname(build.entryPath);
  const entryName = path.basename(build.entryPath);
  // wrangler.jsonc's Text rule (N21: the agent program) emits `<hash>-keyway-agent`.
  const isText = (f) => f.endsWith("-keyway-agent");
  const bundleModules = readdirSync(bundleDir)
    .filter((f) => f.endsWith(".js") || f.endsWith(".mjs") || f.endsWith(".wasm") || isText(f))
    .sort((a, b) => (a === entryName ? -1 : b === entryName ? 1 : a.localeCompare(b)))
    .map((f) => ({
      type: f.endsWith(".wasm") ? "CompiledWasm" : isText(f) ? "Text" : "ESModule",
      path: path.join(bundleDir, f),
    }));
  const { modulesRules: _rules, ...wranglerOptions } = workerOptions;
  const keyway = {
    ...wranglerOptions,
    name: "keyway",
    modules: bundleModules,
    modulesRoot: bundleDir,
    // Plain-text vars and secrets (B6); secrets override anything wrangler read from .dev.vars.
    bindings: { ...workerOptions.bindings, ...vars },
  };
  const signRate = {
    name: "sign-rate",
    modules: true,
    script: signRateScript,
    compatibilityDate: workerOptions.compatibilityDate,
    compatibilityFlags: workerOptions.compatibilityFlags,
  };
  // workerd's own output (Worker console.* and errors) is kept, not streamed, so a failing
  // path cannot flood the report; the summary prints the first lines.
  const runtimeLog = [];
  let runtimeLines = 0;
  const keepLine = (line) => {
    // Access lines (one per request) and the queue consumer's "handled" lines are expected,
    // not worth reporting.
    if (line.trim() === "" || line.includes('"message":"access"') || line.includes('"message":"queue message handled"'))
      return;
    runtimeLines++;
    if (runtimeLog.length < 200) runtimeLog.push(line);
  };
  const keep = (stream) => {
    stream.setEncoding("utf8");
    let rest = "";
    stream.on("data", (chunk) => {
      const lines = (rest + chunk).split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) keepLine(line);
    });
  };
  const probe = {
    name: "probe",
    modules: true,
    script: probeScript,
    compatibilityDate: workerOptions.compatibilityDate,
    compatibilityFlags: workerOptions.compatibilityFlags,
    d1Databases: { DB: workerOptions.d1Databases.DB },
    durableObjects: {
      OTP_STORE: { ...workerOptions.durableObjects.OTP_STORE, scriptName: "keyway" },
      AGENT_POOLS: { ...workerOptions.durableObjects.AGENT_POOLS, scriptName: "keyway" },
    },
    bindings: { KEYWAY_HASH_KEY: vars.KEYWAY_HASH_KEY },
  };
  // Miniflare 5 takes a new configuration shape; its converter keeps the v4 one readable.
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      handleRuntimeStdio: (stdout, stderr) => {
        keep(stdout);
        keep(stderr);
      },
      // Miniflare 5 hands workerd's output (console.* lines included) to this instead.
      handleStructuredLogs: (log) => keepLine(log.message),
      host: "127.0.0.1",
      port: 0,
      logRequests: false,
      // Only for --profile: V8's inspector on a loopback port.
      ...(inspector ? { inspectorPort: 0 } : {}),
      // Storage as `wrangler dev` keeps it (SQLite files), in the throwaway directory
      // `persistDir` (tmpfs unless --disk, see scratchDir): D1 in <persistDir>/d1, the
      // OtpStore's SQLite in <persistDir>/do, R2 in <persistDir>/r2. Miniflare 5 takes one
      // root for every resource, `resourcePersistencePath`; its converter drops Miniflare 4's
      // per-plugin options (`defaultPersistRoot`, `d1Persist`, `durableObjectsPersist`,
      // `r2Persist`) without a word, and without a root every resource goes to
      // /tmp/miniflare-<hash>, on this machine's disk, where each D1 query and each Durable
      // Object commit waits for an fsync (checked after start, see below).
      resourcePersistencePath: persistDir,
      workers: [keyway, signRate, probe],
    }),
  );
  const url = await mf.ready;
  await expectStorageIn(mf, persistDir);
  const inspectorUrl = inspector ? String(await mf.getInspectorURL()) : null;
  return { mf, origin: url.origin, inspectorUrl, runtimeLog, runtimeLineCount: () => runtimeLines };
}

/**
 * Fail loudly when local storage is not under `persistDir`: a Miniflare upgrade that renames
 * the persistence option again would otherwise move D1 and the Durable Objects to the disk
 * silently, and every storage-bound figure would measure fsync (as from the move to
 * Miniflare 5 until this check: a Durable Object put and consume 8–10 ms instead of 1–2).
 */
async function expectStorageIn(mf, persistDir) {
  const db = await mf.getD1Database("DB", "keyway");
  await db.prepare("SELECT 1").first();
  const d1Files = await readdir(path.join(persistDir, "d1"), { recursive: true }).catch(() => []);
  if (!d1Files.some((f) => f.endsWith(".sqlite"))) {
    await mf.dispose();
    throw new Error(
      `local D1 is not stored under ${persistDir}: Miniflare ignored resourcePersistencePath (bench/runtime.mjs)`,
    );
  }
}

/** Apply migrations/*.sql in order through the D1 binding, split as wrangler splits them. */
export async function applyMigrations(mf) {
  const db = await mf.getD1Database("DB", "keyway");
  const dir = path.join(projectRoot, "migrations");
  const files = (await readdir(dir)).filter((f) => f.endsWith(".sql")).sort();
  let statements = 0;
  for (const file of files) {
    const sql = await readFile(path.join(dir, file), "utf8");
    const parts = unstable_splitSqlQuery(sql).filter((s) => s.trim() !== "");
    if (parts.length > 0) await db.batch(parts.map((s) => db.prepare(s)));
    statements += parts.length;
  }
  return { files, statements };
}

/**
 * Scratch directories, removed by the returned function: `dir` for the bundle, `stateDir`
 * for local D1, Durable Object and R2 storage. Storage goes on tmpfs (/dev/shm) unless
 * `onDisk`: Miniflare's local D1 waits for a durable commit (a storage bookmark) after every
 * query, reads included, and every Durable Object write commits too, so on disk each of them
 * costs one fsync of this machine's disk — a property of the disk, not of Keyway.
 */
export async function scratchDir({ onDisk = false } = {}) {
  const dir = await mkdtemp(path.join(tmpdir(), "keyway-bench-"));
  const shm = "/dev/shm";
  const useShm =
    !onDisk &&
    (await stat(shm)
      .then((s) => s.isDirectory())
      .catch(() => false));
  const stateDir = useShm ? await mkdtemp(path.join(shm, "keyway-bench-state-")) : path.join(dir, "state");
  return {
    dir,
    stateDir,
    storage: useShm ? `tmpfs (${stateDir})` : `disk (${stateDir})`,
    remove: async () => {
      await rm(dir, { recursive: true, force: true });
      if (useShm) await rm(stateDir, { recursive: true, force: true });
    },
  };
}

/** POST a JSON request to a bench-only Worker and return its JSON answer. */
export async function askBenchWorker(mf, name, request, path = "/") {
  const worker = await mf.getWorker(name);
  const res = await worker.fetch(`http://${name}.bench${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(request),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${name} worker answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/**
 * CPU seconds (user + system, every thread) spent so far by the workerd processes this
 * process started, from /proc (Linux; null elsewhere). workerd runs every isolate on one
 * saturated thread here, so CPU per request is a measure the machine's other load disturbs
 * far less than a rate (the figure verify's A/B runs are judged on).
 */
export function workerdCpuSeconds() {
  let total = 0;
  let found = false;
  let entries;
  try {
    entries = readdirSync("/proc").filter((e) => /^\d+$/.test(e));
  } catch {
    return null;
  }
  const ticks = 100; // USER_HZ on Linux
  for (const pid of entries) {
    let stat;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      continue;
    }
    // pid (comm) state ppid … utime stime: fields after the closing parenthesis.
    const close = stat.lastIndexOf(")");
    const comm = stat.slice(stat.indexOf("(") + 1, close);
    const fields = stat.slice(close + 2).split(" ");
    if (comm !== "workerd" || Number(fields[1]) !== process.pid) continue;
    total += (Number(fields[11]) + Number(fields[12])) / ticks;
    found = true;
  }
  return found ? total : null;
}
