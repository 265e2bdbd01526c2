/**
 * Start the real Keyway Worker from Node for end-to-end tests (decision B7): wrangler's
 * `unstable_startWorker` with the project's wrangler.jsonc, real local D1 (migrated with
 * `wrangler d1 migrations apply --local`, the same command `npm start` uses), Durable
 * Objects, Queues and R2, listening on 127.0.0.1.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { unstable_startWorker } from "wrangler";

const run = promisify(execFile);
const projectRoot = path.resolve(import.meta.dirname, "../..");

export interface RunningKeyway {
  /** Origin, e.g. `http://127.0.0.1:41234`. */
  url: string;
  rootToken: string;
  adminToken: string;
  stop(): Promise<void>;
}

function randomSecret(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");
}

/** Start a fresh Worker with its own empty local storage. */
export async function startKeyway(vars: Record<string, string> = {}): Promise<RunningKeyway> {
  const persistTo = await mkdtemp(path.join(tmpdir(), "keyway-e2e-"));
  const env = { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" };
  await run(
    path.join(projectRoot, "node_modules/.bin/wrangler"),
    ["d1", "migrations", "apply", "DB", "--local", "--persist-to", persistTo],
    { cwd: projectRoot, env },
  );
  const rootToken = `root-${crypto.randomUUID()}`;
  const adminToken = `admin-${crypto.randomUUID()}`;
  const plain = (value: string) => ({ type: "plain_text" as const, value });
  const worker = await unstable_startWorker({
    config: path.join(projectRoot, "wrangler.jsonc"),
    envFiles: [],
    bindings: {
      ROOT_TOKEN: plain(rootToken),
      ADMIN_TOKEN: plain(adminToken),
      KEYWAY_HASH_KEY: plain(randomSecret()),
      KEYWAY_KEK: plain(`e2e:${randomSecret()}`),
      ...Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, plain(v)])),
    },
    dev: {
      server: { hostname: "127.0.0.1", port: 0 },
      inspector: false,
      persist: persistTo,
      watch: false,
      logLevel: (process.env.KEYWAY_WRANGLER_LOG as "warn") ?? "warn",
    },
  });
  await worker.ready;
  const url = (await worker.url).origin;
  return {
    url,
    rootToken,
    adminToken,
    async stop() {
      await worker.dispose();
      await rm(persistTo, { recursive: true, force: true });
    },
  };
}
