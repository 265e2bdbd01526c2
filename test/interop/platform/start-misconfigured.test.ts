/**
 * B10: `npm start` (scripts/start.mjs) stops with the Worker's own message when
 * .dev.vars is misconfigured, before applying migrations or starting anything. Runs the
 * real script in a scratch copy of the project layout (its scripts, src, node_modules
 * and .dev.vars.example), so the checkout's own .dev.vars is never touched.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const projectRoot = path.resolve(import.meta.dirname, "../../..");
const scratch = mkdtempSync(path.join(tmpdir(), "keyway-start-"));
mkdirSync(path.join(scratch, "scripts"));
copyFileSync(path.join(projectRoot, "scripts/start.mjs"), path.join(scratch, "scripts/start.mjs"));
copyFileSync(path.join(projectRoot, ".dev.vars.example"), path.join(scratch, ".dev.vars.example"));
symlinkSync(path.join(projectRoot, "src"), path.join(scratch, "src"));
symlinkSync(path.join(projectRoot, "node_modules"), path.join(scratch, "node_modules"));

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const key = (fill: number) => Buffer.alloc(32, fill).toString("base64");

function start(devVars: string) {
  writeFileSync(path.join(scratch, ".dev.vars"), devVars);
  return spawnSync(process.execPath, [path.join(scratch, "scripts/start.mjs")], {
    cwd: scratch,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", PORT: "1" },
    encoding: "utf8",
    timeout: 60_000,
  });
}

describe("npm start refuses a misconfigured .dev.vars (B10)", () => {
  it.each([
    ["the example copied as is", null, "server misconfigured: ROOT_TOKEN: the placeholder value of .dev.vars.example"],
    [
      "ROOT_TOKEN equal to ADMIN_TOKEN",
      `ROOT_TOKEN=same-token\nADMIN_TOKEN=same-token\nKEYWAY_HASH_KEY=${key(1)}\nKEYWAY_KEK=k1:${key(2)}\n`,
      "server misconfigured: ROOT_TOKEN: equal to ADMIN_TOKEN",
    ],
    [
      "a duplicate key id",
      `ROOT_TOKEN=r-token\nADMIN_TOKEN=a-token\nKEYWAY_HASH_KEY=${key(1)}\nKEYWAY_KEK=k1:${key(2)},k1:${key(3)}\n`,
      'server misconfigured: KEYWAY_KEK: duplicate key id "k1"',
    ],
  ])("%s", (_name, devVars, message) => {
    const result = start(devVars ?? readFileSync(path.join(projectRoot, ".dev.vars.example"), "utf8"));
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(message);
    // It stopped before migrations and wrangler dev.
    expect(result.stdout).not.toContain("Applying D1 migrations");
    expect(result.stdout + result.stderr).not.toContain(key(2));
  });
});
