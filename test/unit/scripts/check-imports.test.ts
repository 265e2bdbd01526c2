/**
 * scripts/check-imports.mjs on tiny trees of its own (`--root`): a circle between two files
 * of one folder, type-only, fails the check; the same files without the circle pass; and
 * src/platform importing a wing breaks decision B21's rule; a route file that runs its own
 * queries (imports drizzle-orm or a schema file of src/db/schema/) breaks the repository rule;
 * a wing importing the other wing's schema file, or src/platform importing either, breaks the
 * rule that each wing owns its tables.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const script = path.resolve(import.meta.dirname, "../../../scripts/check-imports.mjs");
const roots: string[] = [];

/** Runs the checker on a tree made of `files` (paths relative to the tree's root). */
function check(files: Record<string, string>): { status: number | null; output: string } {
  const root = mkdtempSync(path.join(tmpdir(), "check-imports-"));
  roots.push(root);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
  const run = spawnSync(process.execPath, [script, "--root", root], { encoding: "utf8" });
  return { status: run.status, output: run.stdout + run.stderr };
}

afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

describe("check-imports", () => {
  it("fails on a circle between two files of one folder, type-only imports included", () => {
    const result = check({
      "src/ssh/auth/a.ts": 'import type { B } from "./b";\nexport interface A { b: B }\n',
      "src/ssh/auth/b.ts": 'import type { A } from "./a";\nexport interface B { a: A }\n',
    });
    expect(result.status).toBe(1);
    expect(result.output).toContain("import circle between files src/ssh/auth/a.ts, src/ssh/auth/b.ts");
  });

  it("passes the same folder once the circle is gone", () => {
    const result = check({
      "src/ssh/auth/a.ts": "export interface A { n: number }\n",
      "src/ssh/auth/b.ts": 'import type { A } from "./a";\nexport interface B { a: A }\n',
    });
    expect(result.output).not.toContain("problem");
    expect(result.status).toBe(0);
  });

  it("keeps src/platform out of the wings (B21) and every src/lib file in a folder", () => {
    const result = check({
      "src/nocode/x.ts": "export const x = 1;\n",
      "src/platform/store.ts": 'import { x } from "../nocode/x";\nexport const y = x;\n',
      "src/lib/loose.ts": "export const z = 1;\n",
    });
    expect(result.status).toBe(1);
    expect(result.output).toContain("src/platform imports only src/platform, src/lib and src/db (B21)");
    expect(result.output).toContain("every file of src/lib lives in a folder: src/lib/loose.ts");
  });

  it("fails on a route file that imports drizzle-orm or a schema file, and passes its repository", () => {
    const result = check({
      "src/db/schema/ssh.ts": "export const things = {};\n",
      "src/ssh/things/routes.ts": 'import { eq } from "drizzle-orm";\nexport const r = eq;\n',
      "src/ssh/things/admin-routes.ts": 'import { things } from "../../db/schema/ssh";\nexport const t = things;\n',
      "src/ssh/things/table.ts":
        'import type { VaultRoute } from "../router";\nimport { things } from "../../db/schema/ssh";\nexport const thingRoutes: VaultRoute[] = [things];\n',
      "src/ssh/router.ts": "export type VaultRoute = object;\n",
      "src/nocode/things/app.ts":
        'import { sql } from "drizzle-orm/sql";\nconst app = new Hono();\nexport { app, sql };\n',
      "src/ssh/things/repo.ts":
        'import { eq } from "drizzle-orm";\nimport { things } from "../../db/schema/ssh";\nexport const q = [eq, things];\n',
    });
    expect(result.status).toBe(1);
    for (const file of [
      "src/ssh/things/routes.ts",
      "src/ssh/things/admin-routes.ts",
      "src/ssh/things/table.ts",
      "src/nocode/things/app.ts",
    ]) {
      expect(result.output).toContain(`queries live in repo.ts): ${file} imports`);
    }
    expect(result.output).not.toContain("src/ssh/things/repo.ts imports");
    expect(result.output).toContain("check-imports: 4 problem(s)");
  });

  it("fails on a wing importing the other wing's tables or src/platform importing either, and passes each wing its own", () => {
    const tables = {
      "src/db/schema/ssh.ts": "export const roles = {};\n",
      "src/db/schema/nocode.ts": "export const teams = {};\n",
    };
    const crossed = check({
      ...tables,
      "src/ssh/roles/repo.ts": 'import { teams } from "../../db/schema/nocode";\nexport const q = teams;\n',
      "src/nocode/teams/repo.ts": 'import { roles } from "../../db/schema/ssh";\nexport const q = roles;\n',
      "src/platform/store.ts": 'import { teams } from "../db/schema/nocode";\nexport const q = teams;\n',
    });
    expect(crossed.status).toBe(1);
    expect(crossed.output).toContain(
      "a wing never imports the other wing's tables: src/ssh/roles/repo.ts → src/db/schema/nocode.ts",
    );
    expect(crossed.output).toContain(
      "a wing never imports the other wing's tables: src/nocode/teams/repo.ts → src/db/schema/ssh.ts",
    );
    expect(crossed.output).toContain("src/platform imports no wing's tables (B21): src/platform/store.ts");
    expect(crossed.output).toContain("check-imports: 3 problem(s)");

    const own = check({
      ...tables,
      "src/ssh/roles/repo.ts": 'import { roles } from "../../db/schema/ssh";\nexport const q = roles;\n',
      "src/nocode/teams/repo.ts": 'import { teams } from "../../db/schema/nocode";\nexport const q = teams;\n',
    });
    expect(own.output).not.toContain("problem");
    expect(own.status).toBe(0);
  });
});
