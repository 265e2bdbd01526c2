/**
 * The reader in the bundle Cloudflare receives. The Workers Vitest plugin runs the source
 * through Vite, which is not what wrangler uploads; some failures of the HCL grammar's WebAssembly
 * loader show up in only one of the two. So this
 * bundles a tiny entry that imports `src/lib/terraform` with `wrangler deploy --dry-run`,
 * then runs that output in workerd through Miniflare, with and without `nodejs_compat`.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { IngestResult } from "../../../../src/lib/terraform/ingest-module";
import { fixtureFiles } from "../../../fixtures/terraform";
import { checkSummary, EXPECTED } from "../../../fixtures/terraform/expectations";
import { buildTarball } from "../../../support/tarball";
import { compatibilityDate as projectCompatibilityDate } from "../../../support/wrangler-config";

const run = promisify(execFile);
const repo = path.resolve(import.meta.dirname, "../../../..");

const ENTRY = `
import { ingestModule } from ${JSON.stringify(path.join(repo, "src/lib/terraform/index.ts"))};
export default {
  async fetch(request) {
    const result = await ingestModule(request.body);
    return Response.json(result);
  },
};
`;

let work: string;
let outdir: string;
let compatibilityDate: string;

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), "kw-bundle-"));
  outdir = path.join(work, "out");
  compatibilityDate = projectCompatibilityDate();
  await writeFile(path.join(work, "entry.js"), ENTRY);
  await writeFile(
    path.join(work, "wrangler.jsonc"),
    JSON.stringify({ name: "kw-bundle-check", main: "entry.js", compatibility_date: compatibilityDate }),
  );
  await run(
    path.join(repo, "node_modules/.bin/wrangler"),
    ["deploy", "--dry-run", "--outdir", outdir, "--config", path.join(work, "wrangler.jsonc")],
    { cwd: repo, env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" } },
  );
}, 120_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe("production bundle", () => {
  it("ships both WebAssembly modules beside the script", async () => {
    const files = await readdir(outdir);
    expect(files.some((f) => f.endsWith("-web-tree-sitter.wasm"))).toBe(true);
    expect(files.some((f) => f.endsWith("-tree-sitter-terraform.wasm"))).toBe(true);
  });

  it.each([[[]], [["nodejs_compat"]]])("ingests in workerd with compatibility flags %j", async (flags) => {
    // Miniflare 5 takes a new configuration shape; its converter keeps the v4 one readable.
    const mf = new Miniflare(
      convertV4MiniflareOptions({
        // Every file of the bundle, as Cloudflare receives it: the script first, then its
        // WebAssembly modules (and any other module file wrangler wrote).
        modules: (await readdir(outdir))
          .filter((f) => f.endsWith(".js") || f.endsWith(".wasm"))
          .sort((a, b) => (a === "entry.js" ? -1 : b === "entry.js" ? 1 : a.localeCompare(b)))
          .map((f) => ({
            type: f.endsWith(".wasm") ? ("CompiledWasm" as const) : ("ESModule" as const),
            path: path.join(outdir, f),
          })),
        modulesRoot: outdir,
        compatibilityDate,
        compatibilityFlags: flags,
      }),
    );
    try {
      const post = async (body: Uint8Array) => {
        const response = await mf.dispatchFetch("http://bundle.test/", { method: "POST", body });
        return (await response.json()) as IngestResult;
      };
      const ok = await post(await buildTarball(fixtureFiles("aws-vpc"), { prefix: "./", directories: true }));
      if (!ok.ok) throw new Error(ok.error);
      checkSummary(ok.summary, EXPECTED["aws-vpc"]!);
      expect(await post(await buildTarball({ "main.tf": 'resource "a" "b" {\n' }))).toEqual({
        ok: false,
        error: 'syntax error in main.tf at line 2: missing "}"',
      });
      expect(await post(new TextEncoder().encode("not gzip"))).toEqual({ ok: false, error: "not a gzip archive" });
    } finally {
      await mf.dispose();
    }
  });
});
