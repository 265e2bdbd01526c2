#!/usr/bin/env node
// Decision B14a: both OpenAPI documents the Worker serves pass a real validator,
// @readme/openapi-parser's validate() (OpenAPI schema, `$ref` resolution, unique operationIds,
// declared path parameters). `.ci/run` runs this: it starts the real Worker (wrangler's
// unstable_startWorker with the project's wrangler.jsonc and a migrated local D1, as the
// node tests do), fetches `/v1/sys/internal/specs/openapi` and `/api/v2/openapi.json`,
// validates each, prints every problem and exits 1 when there is one.
// With --digest it also prints each document's SHA-256 (over the bytes served), so a change
// that must not alter the contract (a refactor) can be checked by comparing two runs.
import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { compileErrors, validate } from "@readme/openapi-parser";

/** The served documents, by path. */
export const SERVED_DOCUMENTS = ["/v1/sys/internal/specs/openapi", "/api/v2/openapi.json"];

/**
 * Every problem @readme/openapi-parser's validate() finds in `document` (a parsed OpenAPI
 * document; it is copied, never changed); empty when the document is valid.
 * @param {object} document
 * @returns {Promise<string[]>}
 */
export async function openApiValidatorProblems(document) {
  const result = await validate(structuredClone(document));
  if (result.valid) return [];
  return [compileErrors(result)];
}

async function main() {
  const root = path.resolve(import.meta.dirname, "..");
  const { unstable_startWorker } = await import("wrangler");
  const persistTo = await mkdtemp(path.join(tmpdir(), "keyway-openapi-"));
  const env = { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" };
  await promisify(execFile)(
    path.join(root, "node_modules/.bin/wrangler"),
    ["d1", "migrations", "apply", "DB", "--local", "--persist-to", persistTo],
    { cwd: root, env },
  );
  const secret = () => randomBytes(32).toString("base64");
  const plain = (value) => ({ type: "plain_text", value });
  const worker = await unstable_startWorker({
    config: path.join(root, "wrangler.jsonc"),
    envFiles: [],
    bindings: {
      ROOT_TOKEN: plain(`root-${secret()}`),
      ADMIN_TOKEN: plain(`admin-${secret()}`),
      KEYWAY_HASH_KEY: plain(secret()),
      KEYWAY_KEK: plain(`ci:${secret()}`),
    },
    dev: {
      server: { hostname: "127.0.0.1", port: 0 },
      inspector: false,
      persist: persistTo,
      watch: false,
      logLevel: "warn",
    },
  });
  let failed = false;
  try {
    await worker.ready;
    const origin = (await worker.url).origin;
    for (const documentPath of SERVED_DOCUMENTS) {
      const res = await fetch(`${origin}${documentPath}`);
      if (res.status !== 200) {
        console.error(`${documentPath}: answered ${res.status}`);
        failed = true;
        continue;
      }
      const body = await res.text();
      if (process.argv.includes("--digest")) {
        console.log(`${documentPath}: sha256 ${createHash("sha256").update(body).digest("hex")}`);
      }
      const problems = await openApiValidatorProblems(JSON.parse(body));
      if (problems.length === 0) console.log(`${documentPath}: valid (@readme/openapi-parser)`);
      for (const problem of problems) console.error(`${documentPath}: ${problem}`);
      if (problems.length > 0) failed = true;
    }
  } finally {
    await worker.dispose();
    await rm(persistTo, { recursive: true, force: true });
  }
  process.exit(failed ? 1 : 0);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
