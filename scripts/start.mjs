#!/usr/bin/env node
// `npm start` (decision B4): fresh clone → running service on 127.0.0.1.
// 1. installs dependencies (`npm ci`) when node_modules is missing;
// 2. creates .dev.vars with random values for every missing secret of .dev.vars.example
//    and prints the root and admin tokens;
// 3. refuses a misconfigured .dev.vars (decision B10: placeholders, bad keys, duplicate
//    key ids, ROOT_TOKEN = ADMIN_TOKEN) with the Worker's own message, before starting;
// 4. applies the D1 migrations locally;
// 5. runs `wrangler dev` on loopback.
// Uses only Node built-ins until dependencies are installed (then esbuild, to load the
// Worker's own check from src/lib/deployment-config/).
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
// node_modules/.bin first, so wrangler runs on the Node 22 the lock file carries (the
// `node` devDependency) even when this script was started by an older system Node.
const env = {
  ...process.env,
  PATH: `${path.join(root, "node_modules", ".bin")}${path.delimiter}${process.env.PATH ?? ""}`,
  WRANGLER_SEND_METRICS: "false",
};
const port = process.env.PORT ?? "8787";

function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, env, stdio: "inherit" });
  if (result.status !== 0) {
    console.error(`\n${command} ${args.join(" ")} failed (exit ${result.status})`);
    process.exit(result.status ?? 1);
  }
}

if (!existsSync(path.join(root, "node_modules", ".bin", "wrangler"))) {
  console.log("Installing dependencies (npm ci, exactly as locked)…");
  run("npm", ["ci", "--no-audit", "--no-fund"]);
}

// Secrets (B6): keep what .dev.vars already has, fill in the rest.
const devVarsPath = path.join(root, ".dev.vars");
const example = readFileSync(path.join(root, ".dev.vars.example"), "utf8");
const existing = new Map();
if (existsSync(devVarsPath)) {
  for (const line of readFileSync(devVarsPath, "utf8").split("\n")) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) existing.set(m[1], m[2]);
  }
}
const generators = {
  ROOT_TOKEN: () => `hvs.${randomBytes(24).toString("base64url")}`,
  ADMIN_TOKEN: () => `admin.atlasv1.${randomBytes(32).toString("base64url")}`,
  KEYWAY_HASH_KEY: () => randomBytes(32).toString("base64"),
  KEYWAY_KEK: () => `k1:${randomBytes(32).toString("base64")}`,
};
const lines = [];
let added = 0;
for (const line of example.split("\n")) {
  const m = /^([A-Z0-9_]+)=/.exec(line);
  if (!m) {
    lines.push(line);
    continue;
  }
  const name = m[1];
  let value = existing.get(name);
  if (value === undefined) {
    value = (generators[name] ?? (() => randomBytes(32).toString("base64url")))();
    added++;
  }
  lines.push(`${name}=${value}`);
  existing.delete(name);
}
for (const [name, value] of existing) lines.push(`${name}=${value}`);
writeFileSync(devVarsPath, lines.join("\n"), { mode: 0o600 });
const vars = Object.fromEntries(
  lines
    .map((l) => /^([A-Z0-9_]+)=(.*)$/.exec(l))
    .filter(Boolean)
    .map((m) => [m[1], m[2]]),
);
console.log(added > 0 ? `Wrote ${added} new secret(s) to .dev.vars.` : "Using the secrets in .dev.vars.");

// B10: the same check the Worker applies to every request, so a bad .dev.vars stops here
// with the message the Worker would answer with (it names the setting, never its value).
const { build } = await import("esbuild");
const bundled = await build({
  entryPoints: [path.join(root, "src", "lib", "deployment-config", "index.ts")],
  bundle: true,
  format: "esm",
  platform: "neutral",
  write: false,
  logLevel: "silent",
});
const config = await import(
  `data:text/javascript;base64,${Buffer.from(bundled.outputFiles[0].text).toString("base64")}`
);
const problem = config.deploymentProblem(vars);
if (problem !== null) {
  console.error(
    `\n${config.misconfiguredMessage(problem)}\nFix it in .dev.vars (delete a line to have a fresh random value generated).`,
  );
  process.exit(1);
}

console.log("Applying D1 migrations locally…");
run(path.join(root, "node_modules", ".bin", "wrangler"), ["d1", "migrations", "apply", "DB", "--local"]);

console.log(`
Keyway is starting on http://127.0.0.1:${port}
  Secrets API (Vault SSH):  export VAULT_ADDR=http://127.0.0.1:${port} VAULT_TOKEN=${vars.ROOT_TOKEN}
  No-code API (HCP TF):     Authorization: Bearer ${vars.ADMIN_TOKEN}   (site admin: bootstrap only)
`);
const dev = spawnSync(
  path.join(root, "node_modules", ".bin", "wrangler"),
  ["dev", "--ip", "127.0.0.1", "--port", port],
  {
    cwd: root,
    env,
    stdio: "inherit",
  },
);
process.exit(dev.status ?? 0);
