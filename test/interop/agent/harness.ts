/**
 * End-to-end set-up for the agent tests (decision N22): the real Worker, an organization with
 * a module whose only provider is built in, agent pools and their tokens, agent workspaces
 * created through E4, and `agent/keyway-agent` running as a child process. Everything goes
 * through the public APIs; the only thing between the agent and the Worker is
 * {@link RecordingProxy}, a pass-through that keeps a copy of the log chunks the agent sent.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { createServer as createNetServer, type Server as NetServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type Api, expectStatus, type Json, tfe } from "../../support/client";
import { type RunningKeyway, startKeyway } from "../../support/worker";
import { createOrg, publishModuleVersion, unique } from "../console/seed";

const root = path.resolve(import.meta.dirname, "../../..");
export const AGENT_PROGRAM = path.join(root, "agent", "keyway-agent");
const STAND_IN_ENGINE = path.join(root, "test", "fixtures", "agent", "stand-in-engine.mjs");
const MODULES = path.join(root, "test", "fixtures", "agent", "modules");

/** The module files of test/fixtures/agent/modules/<name>, keyed by path. */
export function moduleFiles(name: string): Record<string, string> {
  const dir = path.join(MODULES, name);
  return Object.fromEntries(readdirSync(dir).map((file) => [file, readFileSync(path.join(dir, file), "utf8")]));
}

/**
 * The real engine of N22: `/usr/local/bin/terraform` or a `tofu` / `terraform` on PATH.
 * Null when there is none (the real-engine tests then skip outside CI and fail in CI).
 */
export function realEngine(): string | null {
  const candidates = ["/usr/local/bin/terraform"];
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (dir) candidates.push(path.join(dir, "tofu"), path.join(dir, "terraform"));
  }
  return candidates.find((file) => existsSync(file)) ?? null;
}

/** Why the real-engine tests skip: there is no engine binary. */
export const NO_ENGINE =
  "no engine binary: /usr/local/bin/terraform is missing and neither tofu nor terraform is on PATH";

/**
 * A suite `title` whose one test runs everywhere (never skipped): in CI a missing real
 * engine fails it (N22); elsewhere a missing engine only skips the real-engine tests.
 */
export function describeEngineRequiredInCi(title: string, engine: string | null): void {
  describe(title, () => {
    it("is present when CI=true: CI requires the real engine (N22)", () => {
      if (process.env.CI === "true" && engine === null) expect.fail(NO_ENGINE);
    });
  });
}

/** What `<engine> version -json` prints as the engine's version. */
export function engineVersionOf(engine: string): string {
  const printed = execFileSync(engine, ["version", "-json"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  return JSON.parse(printed).terraform_version;
}

/** Lost-agent thresholds shortened for the tests (the defaults are 30 s and 300 s). */
export const THRESHOLDS = { unknownAfter: 12, erroredAfter: 15 };

export interface Keyway extends Api {
  keyway: RunningKeyway;
  proxy: RecordingProxy;
  stop(): Promise<void>;
}

/**
 * Start the Worker, and the recording proxy in front of it; `shortThresholds` sets the
 * lost-agent thresholds to {@link THRESHOLDS} (tests of lost agents), else they keep their
 * defaults (an agent idle between tests is never declared lost); `vars` sets other
 * deployment vars (e.g. a shortened KEYWAY_FORCE_CANCEL_AFTER_SECONDS).
 */
export async function startWorker(options: {
  shortThresholds: boolean;
  vars?: Record<string, string>;
}): Promise<Keyway> {
  const keyway = await startKeyway({
    ...(options.shortThresholds
      ? {
          KEYWAY_AGENT_UNKNOWN_AFTER: String(THRESHOLDS.unknownAfter),
          KEYWAY_AGENT_ERRORED_AFTER: String(THRESHOLDS.erroredAfter),
        }
      : {}),
    ...options.vars,
  });
  const proxy = await RecordingProxy.start(keyway.url);
  return {
    keyway,
    proxy,
    url: keyway.url,
    adminToken: keyway.adminToken,
    async stop() {
      await proxy.stop();
      await keyway.stop();
    },
  };
}

/** What the tests of an agent test file share: the Worker and an organization of {@link agentOrg}. */
export interface AgentWorld {
  keyway: Keyway;
  ctx: AgentOrg;
}

/**
 * The prologue of an agent test file: before its tests, start the Worker with `options` and
 * create an organization of {@link agentOrg}, handed to `started`; after them, run what the
 * tests pushed on the returned list (the last first) and stop the Worker.
 */
export function agentWorld(
  options: Parameters<typeof startWorker>[0],
  started: (world: AgentWorld) => void,
): (() => Promise<void> | void)[] {
  const cleanups: (() => Promise<void> | void)[] = [];
  let keyway: Keyway | undefined;
  beforeAll(async () => {
    keyway = await startWorker(options);
    started({ keyway, ctx: await agentOrg(keyway) });
  }, 120_000);
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    await keyway?.stop();
  });
  return cleanups;
}

/**
 * A pass-through HTTP proxy in front of the Worker, so a test can see what the agent sent as
 * the run's log (PUT …/jobs/:id/logs) byte for byte. It changes nothing it forwards.
 */
export class RecordingProxy {
  /** Log bytes per job id, in offset order as the Worker accepted them. */
  readonly logs = new Map<string, Buffer>();
  /** Every call that passed, as "METHOD url → status" (printed when a test fails). */
  readonly requests: string[] = [];
  /** Jobs agents started (POST …/jobs/:id/start): their run and phase. */
  readonly jobs = new Map<string, { runId: string; phase: string }>();
  /** JSON plans the agent uploaded (PUT …/jobs/:id/json-plan) and Keyway accepted, by job id, as sent. */
  readonly jsonPlans = new Map<string, Buffer>();
  /** State documents the agent uploaded (PUT …/state) and Keyway handed to jobs (GET …/state), in order. */
  readonly states: { jobId: string; direction: "upload" | "download"; status: number; body: string }[] = [];

  private constructor(
    private readonly server: NetServer,
    readonly url: string,
  ) {}

  /**
   * Listen on 127.0.0.1 and forward every call to `target` with its Host header unchanged, so
   * the Worker sees the address the agent used. With `tls` the same port also speaks https
   * (the first byte of a connection says which), as an engine needs for a module registry.
   */
  static async start(target: string, tls?: { key: string; cert: string }): Promise<RecordingProxy> {
    let proxy: RecordingProxy | undefined;
    const upstream = new URL(target);
    const handler = (req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const body = Buffer.concat(chunks);
        // Uncompressed answers, so the proxy can read what it records; everything else as sent.
        const headers = { ...req.headers };
        delete headers["accept-encoding"];
        const forwarded = httpRequest(
          { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers },
          (answer) => {
            const parts: Buffer[] = [];
            answer.on("data", (chunk: Buffer) => parts.push(chunk));
            answer.on("end", () => {
              const bytes = Buffer.concat(parts);
              try {
                proxy?.observe(req.method ?? "GET", req.url ?? "", answer.statusCode ?? 0, body, bytes);
              } catch (error) {
                proxy?.requests.push(`could not record ${req.url}: ${error}`);
              }
              res.writeHead(answer.statusCode ?? 502, answer.headers);
              res.end(bytes);
            });
          },
        );
        forwarded.on("error", (error) => {
          res.writeHead(502);
          res.end(String(error));
        });
        forwarded.end(body);
      });
    };
    const plain = createServer(handler);
    const secure = tls ? createHttpsServer(tls, handler) : null;
    const server = createNetServer((socket) => {
      socket.once("data", (first: Buffer) => {
        socket.pause();
        socket.unshift(first);
        (secure && first[0] === 0x16 ? secure : plain).emit("connection", socket);
        process.nextTick(() => socket.resume());
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("proxy did not listen");
    proxy = new RecordingProxy(server, `${tls ? "https" : "http"}://127.0.0.1:${address.port}`);
    proxy.plain = plain;
    proxy.secure = secure;
    return proxy;
  }

  private plain: Server | null = null;
  private secure: Server | null = null;

  /** Keep what the tests read: log chunks, started jobs, state uploads and downloads. */
  private observe(method: string, url: string, status: number, body: Buffer, answer: Buffer): void {
    this.requests.push(`${method} ${url} → ${status}`);
    const log = /^\/api\/agent\/v1\/jobs\/([^/]+)\/logs\?offset=(\d+)$/.exec(url);
    if (log && method === "PUT" && status === 200) this.recordLog(log[1]!, Number(log[2]), body);
    if (/^\/api\/agent\/v1\/jobs\/[^/]+\/start$/.test(url) && status === 200) {
      const job = JSON.parse(answer.toString("utf8")).job;
      this.jobs.set(job.id, { runId: job["run-id"], phase: job.phase });
    }
    const jsonPlan = /^\/api\/agent\/v1\/jobs\/([^/]+)\/json-plan$/.exec(url);
    if (jsonPlan && method === "PUT" && status < 300) this.jsonPlans.set(jsonPlan[1]!, body);
    const state = /^\/api\/agent\/v1\/jobs\/([^/]+)\/state$/.exec(url);
    if (state && method === "PUT") {
      this.states.push({ jobId: state[1]!, direction: "upload", status, body: body.toString("utf8") });
    }
    if (state && method === "GET") {
      this.states.push({ jobId: state[1]!, direction: "download", status, body: answer.toString("utf8") });
    }
  }

  private recordLog(jobId: string, offset: number, chunk: Buffer): void {
    const stored = this.logs.get(jobId) ?? Buffer.alloc(0);
    if (offset > stored.length) return;
    const merged = Buffer.concat([stored.subarray(0, offset), chunk]);
    this.logs.set(jobId, merged.length >= stored.length ? merged : stored);
  }

  /** The ids of the jobs of a run, in the order they started. */
  jobsOfRun(runId: string): string[] {
    return [...this.jobs].filter(([, job]) => job.runId === runId).map(([id]) => id);
  }

  /** The state documents the agents of a run's jobs uploaded and Keyway accepted, parsed. */
  uploadedStates(runId: string): Json[] {
    const jobs = this.jobsOfRun(runId);
    return this.states
      .filter((s) => s.direction === "upload" && s.status < 300 && jobs.includes(s.jobId))
      .map((s) => JSON.parse(s.body));
  }

  /** Every log byte the agent sent, all jobs together. */
  allLogs(): string {
    return [...this.logs.values()].map((b) => b.toString("utf8")).join("\n");
  }

  stop(): Promise<void> {
    this.plain?.closeAllConnections();
    this.secure?.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

export interface AgentOrg {
  org: string;
  token: string;
  noCodeModuleId: string;
  /** The registry module's address, `<org>/<name>/terraform`. */
  moduleAddress: string;
}

/** An organization with `terraform-data` published as 1.0.0 and enabled for no-code pinned there. */
export async function agentOrg(api: Api): Promise<AgentOrg> {
  const { org, owner } = await createOrg(api);
  const published = await publishModule(api, org, owner.token, moduleFiles("terraform-data"));
  return { org, token: owner.token, ...published };
}

/** Publish `files` as version 1.0.0 of a new private module (provider `terraform`) and enable it for no-code. */
export async function publishModule(
  api: Api,
  org: string,
  token: string,
  files: Record<string, string>,
): Promise<{ noCodeModuleId: string; moduleAddress: string }> {
  const name = unique("data");
  const registryModule = await expectStatus(
    tfe(api, "POST", `organizations/${org}/registry-modules`, token, {
      data: { type: "registry-modules", attributes: { name, provider: "terraform", "registry-name": "private" } },
    }),
    201,
    "registry module",
  );
  const moduleAddress = `${org}/${name}/terraform`;
  await publishModuleVersion(api, token, moduleAddress, "1.0.0", files);
  const enabled = await expectStatus(
    tfe(api, "POST", `organizations/${org}/no-code-modules`, token, {
      data: {
        type: "no-code-modules",
        attributes: { enabled: true, "version-pin": "1.0.0" },
        relationships: { "registry-module": { data: { type: "registry-modules", id: registryModule.json.data.id } } },
      },
    }),
    200,
    "enable no-code",
  );
  return { noCodeModuleId: enabled.json.data.id, moduleAddress };
}

/** A self-signed certificate for 127.0.0.1 (openssl), for a proxy that speaks https. */
export function selfSignedCertificate(): { key: string; cert: string; certFile: string; dispose(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), "keyway-tls-"));
  const keyFile = path.join(dir, "key.pem");
  const certFile = path.join(dir, "cert.pem");
  execFileSync(
    "openssl",
    ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", keyFile, "-out", certFile, "-days", "1"].concat([
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
    ]),
    { stdio: "ignore" },
  );
  return {
    key: readFileSync(keyFile, "utf8"),
    cert: readFileSync(certFile, "utf8"),
    certFile,
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface Pool {
  id: string;
  name: string;
  /** The pool's agent token (`at-….atlasv1.…`). */
  token: string;
}

/** An agent pool with one agent token (N17). */
export async function createPool(api: Api, ctx: AgentOrg): Promise<Pool> {
  const name = unique("pool");
  const pool = await expectStatus(
    tfe(api, "POST", `organizations/${ctx.org}/agent-pools`, ctx.token, {
      data: { type: "agent-pools", attributes: { name } },
    }),
    201,
    "agent pool",
  );
  const id = pool.json.data.id as string;
  const token = await expectStatus(
    tfe(api, "POST", `agent-pools/${id}/authentication-tokens`, ctx.token, {
      data: { type: "authentication-tokens", attributes: { description: "e2e" } },
    }),
    201,
    "agent token",
  );
  return { id, name, token: token.json.data.attributes.token };
}

/** A var of E4. */
export function engineVar(key: string, value: string, extra: { hcl?: boolean; sensitive?: boolean } = {}) {
  return { type: "vars", attributes: { key, value, category: "terraform", hcl: false, sensitive: false, ...extra } };
}

/** An `env` var of E4. */
export function envVar(key: string, value: string, sensitive = false) {
  return { type: "vars", attributes: { key, value, category: "env", hcl: false, sensitive } };
}

/** E4 with `execution-mode: agent` in `pool`; returns the workspace id and its first run's id. */
export async function createAgentWorkspace(
  api: Api,
  ctx: AgentOrg,
  pool: Pool,
  options: { autoApply: boolean; vars: ReturnType<typeof engineVar>[]; engineVersion?: string },
): Promise<{ workspaceId: string; runId: string; name: string }> {
  const name = unique("ws");
  const created = await expectStatus(
    tfe(api, "POST", `no-code-modules/${ctx.noCodeModuleId}/workspaces`, ctx.token, {
      data: {
        type: "workspaces",
        attributes: {
          name,
          "auto-apply": options.autoApply,
          "execution-mode": "agent",
          "agent-pool-id": pool.id,
          // The stand-in reports 1.11.4, the version of the real engine its outputs were recorded from.
          "engine-version": options.engineVersion ?? "1.11.4",
        },
        relationships: { vars: { data: options.vars } },
      },
    }),
    200,
    "E4",
  );
  return {
    workspaceId: created.json.data.id,
    runId: created.json.data.relationships["latest-run"].data.id,
    name,
  };
}

/** `GET /runs/:id` until its status is one of `statuses` (fails early on another final status). */
export async function waitForRun(
  api: Api,
  token: string,
  runId: string,
  statuses: string[],
  timeout = 60_000,
): Promise<Json> {
  const final = ["applied", "errored", "canceled", "discarded", "planned_and_finished", "force_canceled"];
  const deadline = Date.now() + timeout;
  let status = "";
  while (Date.now() < deadline) {
    const read = await tfe(api, "GET", `runs/${runId}`, token);
    const run = read.json?.data;
    status = run?.attributes?.status;
    if (statuses.includes(status)) return run;
    if (final.includes(status)) {
      throw new Error(
        `run ${runId} is ${status} (${run.attributes["error-message"] ?? ""}), expected ${statuses.join("|")}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`run ${runId} is still ${status} after ${timeout} ms, expected ${statuses.join("|")}`);
}

/** The plan resource of a run. */
export async function readPlan(api: Api, token: string, run: Json): Promise<Json> {
  const planId = run.relationships.plan.data.id;
  return (await expectStatus(tfe(api, "GET", `plans/${planId}`, token), 200, "plan")).json.data;
}

/**
 * The workspace's current state version as `/api/v2` shows it (`GET /state-versions/:id`:
 * serial, resource addresses, outputs with their names and sensitivity, values null).
 */
export async function currentState(api: Api, token: string, workspaceId: string): Promise<Json> {
  const workspace = (await expectStatus(tfe(api, "GET", `workspaces/${workspaceId}`, token), 200, "workspace")).json
    .data;
  const id = workspace.relationships["current-state-version"].data?.id;
  if (!id) throw new Error(`workspace ${workspaceId} has no current state version`);
  return (await expectStatus(tfe(api, "GET", `state-versions/${id}`, token), 200, "state version")).json.data;
}

/** The resource addresses of a state version, sorted. */
export const addressesOf = (stateVersion: Json): string[] =>
  stateVersion.attributes.resources.map((r: Json) => r.address).sort();

/** The agents of a pool as the API lists them. */
export async function listAgents(api: Api, token: string, poolId: string): Promise<Json[]> {
  return (await expectStatus(tfe(api, "GET", `agent-pools/${poolId}/agents`, token), 200, "agents")).json.data;
}

export interface AgentProcess {
  child: ChildProcess;
  name: string;
  workdir: string;
  stderr(): string;
  /** Resolves when the agent exits. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Kill it if it still runs, and remove its files. */
  dispose(): Promise<void>;
}

/** Values put in the agent's own environment that must never reach the engine (N21). */
export const HOST_SECRET = "agent-host-secret-value-0f3a";

/** Start `agent/keyway-agent` for `pool` with the token in a 0600 file. */
export function startAgent(
  keyway: Keyway,
  pool: Pool,
  options: {
    engine: string;
    args?: string[];
    drainSeconds?: number;
    env?: Record<string, string>;
    /** KEYWAY_ADDRESS; default the recording proxy's. */
    address?: string;
  },
): AgentProcess {
  const dir = mkdtempSync(path.join(tmpdir(), "keyway-agent-e2e-"));
  const tokenFile = path.join(dir, "token");
  writeFileSync(tokenFile, `${pool.token}\n`, { mode: 0o600 });
  const workdir = path.join(dir, "work");
  mkdirSync(workdir, { mode: 0o700 });
  const name = unique("agent");
  const child = spawn(process.execPath, [AGENT_PROGRAM, ...(options.args ?? [])], {
    env: {
      PATH: process.env.PATH,
      KEYWAY_ADDRESS: options.address ?? keyway.proxy.url,
      KEYWAY_AGENT_TOKEN_FILE: tokenFile,
      KEYWAY_AGENT_NAME: name,
      KEYWAY_ENGINE: options.engine,
      KEYWAY_AGENT_WORKDIR: workdir,
      KEYWAY_AGENT_DRAIN_SECONDS: String(options.drainSeconds ?? 3600),
      // Neither may reach the engine: the allow-list keeps out everything else of the agent's.
      KEYWAY_CANARY: "keyway-variable-of-the-agent",
      AGENT_HOST_SECRET: HOST_SECRET,
      ...options.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  child.stdout?.resume();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    name,
    workdir,
    stderr: () => stderr,
    exited,
    async dispose() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One line of the stand-in engine's record (test/fixtures/agent/stand-in-engine.mjs). */
export interface StandInRecord {
  event: "invoke" | "paused" | "registry" | "signal";
  /** A signal the engine received (`signal` events) and whether STAND_IN_IGNORE_SIGINT ignored it. */
  signal?: string;
  ignored?: boolean;
  /** A registry call's answer (STAND_IN_REGISTRY_MODULE). */
  status?: number | null;
  versions?: string[];
  /** The `terraform.tfstate` the engine found: what Keyway handed the job. */
  state?: { serial: number; lineage: string; resources: number } | null;
  argv?: string[];
  cwd?: string;
  files?: string[];
  env?: Record<string, string>;
  tfvars?: { json: string | null; hcl: string | null };
  cliConfig?: string | null;
  command?: string;
  pid: number;
}

/**
 * The stand-in engine for one test: a symbolic link named `terraform` to it in a fresh
 * directory (KEYWAY_ENGINE), so the stand-in records every call — the agent's `version -json`
 * at start included — in `stand-in-record.jsonl` there, without a variable added to the
 * environment it records.
 */
export function standInEngine(): { engine: string; read(): StandInRecord[]; dispose(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), "keyway-stand-in-"));
  const engine = path.join(dir, "terraform");
  symlinkSync(STAND_IN_ENGINE, engine);
  const file = path.join(dir, "stand-in-record.jsonl");
  return {
    engine,
    read: () =>
      existsSync(file)
        ? readFileSync(file, "utf8")
            .split("\n")
            .filter(Boolean)
            .map((line) => JSON.parse(line) as StandInRecord)
        : [],
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Wait until the stand-in engine recorded a pause; returns its record. */
export async function waitForPause(record: { read(): StandInRecord[] }, command: string): Promise<StandInRecord> {
  return vi.waitFor(
    () => {
      const paused = record.read().find((r) => r.event === "paused" && r.command === command);
      if (!paused) throw new Error(`the stand-in engine has not paused in ${command} yet`);
      return paused;
    },
    { timeout: 60_000, interval: 100 },
  );
}
