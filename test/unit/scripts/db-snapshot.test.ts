/**
 * scripts/db-snapshot.mjs: on the repository, migrations/meta is the snapshot of src/db/schema/,
 * the SQL migrations build that schema, and `drizzle-kit generate` writes nothing. On a copy of
 * the tree it fails on a column no migration makes and on a stale snapshot, and passes once the
 * migration is written and the snapshot refreshed (docs/storage-schema.md, "Making a migration").
 */
import { spawnSync } from "node:child_process";
import { appendFileSync, cpSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const repo = path.resolve(import.meta.dirname, "../../..");
const script = path.join(repo, "scripts/db-snapshot.mjs");
const trees: string[] = [];

function run(args: string[], cwd = repo): { status: number | null; output: string } {
  const result = spawnSync(process.execPath, args, { cwd, encoding: "utf8" });
  return { status: result.status, output: result.stdout + result.stderr };
}

/** A scratch tree holding what the script and drizzle-kit read: config, schema files, migrations. */
function copyOfTree(): string {
  const tree = mkdtempSync(path.join(tmpdir(), "db-snapshot-"));
  trees.push(tree);
  cpSync(path.join(repo, "drizzle.config.ts"), path.join(tree, "drizzle.config.ts"));
  cpSync(path.join(repo, "src/db/schema"), path.join(tree, "src/db/schema"), { recursive: true });
  cpSync(path.join(repo, "migrations"), path.join(tree, "migrations"), { recursive: true });
  symlinkSync(path.join(repo, "node_modules"), path.join(tree, "node_modules"), "dir");
  return tree;
}

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
}

/** `drizzle-kit generate` on `tree` (the repository's drizzle-kit); returns its output. */
function generate(tree: string): string {
  return run([path.join(repo, "node_modules/drizzle-kit/bin.cjs"), "generate"], tree).output;
}

afterEach(() => {
  for (const tree of trees.splice(0)) rmSync(tree, { recursive: true, force: true });
});

describe("db-snapshot", () => {
  it("finds the repository's snapshot current and the SQL migrations building the schema files", () => {
    const result = run([script, "--check"]);
    expect(result.output).toContain("migrations/meta is the snapshot of src/db/schema/");
    expect(result.status).toBe(0);
  });

  it("leaves drizzle-kit generate nothing to write", () => {
    const tree = copyOfTree();
    const before = filesUnder(path.join(tree, "migrations"));
    expect(generate(tree)).toContain("No schema changes, nothing to migrate");
    expect(filesUnder(path.join(tree, "migrations"))).toEqual(before);
  });

  it("fails on a column no migration makes and on a stale snapshot, and passes once both are written", () => {
    const tree = copyOfTree();
    appendFileSync(
      path.join(tree, "src/db/schema/nocode.ts"),
      '\nexport const probes = sqliteTable("probes", { id: text("id").primaryKey(), size: integer("size") });\n',
    );
    writeFileSync(
      path.join(tree, "migrations/0099_probes.sql"),
      "CREATE TABLE `probes` (`id` text PRIMARY KEY NOT NULL);\n",
    );
    const partial = run([script, "--check", "--root", tree]);
    expect(partial.status).toBe(1);
    expect(partial.output).toContain('probes: schema files have "size integer", migrations do not');

    appendFileSync(path.join(tree, "migrations/0099_probes.sql"), "ALTER TABLE `probes` ADD `size` integer;\n");
    const stale = run([script, "--check", "--root", tree]);
    expect(stale.status).toBe(1);
    expect(stale.output).toContain("expected 0099_snapshot.json, _journal.json");

    const refreshed = run([script, "--root", tree]);
    expect(refreshed.output).toContain("wrote migrations/meta/0099_snapshot.json");
    expect(run([script, "--check", "--root", tree]).status).toBe(0);
    const before = filesUnder(path.join(tree, "migrations"));
    expect(generate(tree)).toContain("No schema changes, nothing to migrate");
    expect(filesUnder(path.join(tree, "migrations"))).toEqual(before);
  });
});
