#!/usr/bin/env node
/**
 * Keeps drizzle-kit's record of the schema (migrations/meta) equal to the schema files, so
 * that `npx drizzle-kit generate` finds nothing new (docs/storage-schema.md, "Making a
 * migration").
 *
 * Migrations are hand-written SQL, `migrations/00NN_<what>.sql` with the numbers each change
 * reserves (decision B22); wrangler applies them, and so do the worker tests, reading only
 * `migrations/*.sql`. drizzle-kit reads only migrations/meta: its newest snapshot is what
 * `generate` compares src/db/schema/ against. This script rebuilds that folder from the schema
 * files named by drizzle.config.ts: one snapshot, named after the newest migration, and a
 * journal naming that migration (so a drafted migration would take the next number). Before
 * it writes anything it checks that the SQL migrations build exactly the tables, columns,
 * defaults, keys and indexes the schema files describe: both are applied to empty in-memory
 * SQLite databases (node:sqlite) and read back through SQLite's own catalogue.
 *
 * Usage: node scripts/db-snapshot.mjs [--check] [--root <dir>]
 *   (no option) rewrite <root>/migrations/meta; exit 1 when the migrations and the schema differ
 *   --check     write nothing; exit 1 when they differ or migrations/meta is not the snapshot
 *   --root      work on another tree (default: this repository), as
 *               test/unit/scripts/db-snapshot.test.ts does; drizzle-kit comes from this repository
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const rootArg = process.argv.indexOf("--root");
const root = rootArg === -1 ? here : resolve(process.argv[rootArg + 1]);
const check = process.argv.includes("--check");
const migrationsDir = join(root, "migrations");
const metaDir = join(migrationsDir, "meta");
const ZERO_ID = "00000000-0000-0000-0000-000000000000";

/** The newest hand-written migration: its tag (file name without `.sql`) and number. */
function newestMigration() {
  const files = readdirSync(migrationsDir)
    .filter((name) => /^\d{4}_[a-z0-9_]+\.sql$/.test(name))
    .sort();
  if (files.length === 0) throw new Error(`no migration in ${migrationsDir}`);
  const tag = files[files.length - 1].replace(/\.sql$/, "");
  return { files, tag, number: Number(tag.slice(0, 4)) };
}

/**
 * What drizzle-kit makes of the schema files on an empty migrations folder: its snapshot and
 * the SQL that creates every table from nothing.
 */
function generateFromScratch() {
  const work = mkdtempSync(join(tmpdir(), "db-snapshot-"));
  try {
    const out = join(work, "out");
    const config = join(work, "drizzle.config.ts");
    // The tree's own config, with only the output folder moved (schema paths stay relative to the tree).
    writeFileSync(
      config,
      `import config from ${JSON.stringify(join(root, "drizzle.config.ts"))};\nexport default { ...config, out: ${JSON.stringify(out)} };\n`,
    );
    const run = spawnSync(
      process.execPath,
      [join(here, "node_modules/drizzle-kit/bin.cjs"), "generate", "--config", config],
      {
        cwd: root,
        encoding: "utf8",
      },
    );
    const sqlFile = run.status === 0 ? readdirSync(out).find((name) => name.endsWith(".sql")) : undefined;
    if (!sqlFile) throw new Error(`drizzle-kit generate failed:\n${run.stdout}${run.stderr}`);
    return {
      snapshot: JSON.parse(readFileSync(join(out, "meta", "0000_snapshot.json"), "utf8")),
      sql: readFileSync(join(out, sqlFile), "utf8"),
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The snapshot as this script records it: no parent, and an id derived from its content, so
 * that the same schema always gives the same file.
 */
function recorded(snapshot) {
  const body = { ...snapshot, id: ZERO_ID, prevId: ZERO_ID };
  const hex = createHash("sha256").update(JSON.stringify(body)).digest("hex");
  const id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
  return `${JSON.stringify({ ...body, id }, null, 2)}\n`;
}

/** Every table of a SQLite database as SQLite itself reports it: columns, keys and indexes. */
function catalogue(db) {
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    .all();
  const out = {};
  for (const { name } of tables) {
    const columns = db
      .prepare(`PRAGMA table_info("${name}")`)
      .all()
      .map(
        (c) =>
          `${c.name} ${c.type.toLowerCase()}${c.notnull ? " not null" : ""}${c.pk ? ` pk${c.pk}` : ""}${c.dflt_value === null ? "" : ` default ${c.dflt_value}`}`,
      )
      .sort();
    const indexes = db
      .prepare(`PRAGMA index_list("${name}")`)
      .all()
      .filter((index) => index.origin !== "pk")
      .map((index) => {
        const on = db
          .prepare(`PRAGMA index_info("${index.name}")`)
          .all()
          .map((column) => column.name)
          .join(", ");
        // Indexes a UNIQUE constraint makes have names of SQLite's choosing; named ones keep theirs.
        const label = index.origin === "c" ? index.name : `(${index.origin})`;
        const where = index.partial
          ? ` where ${db
              .prepare("SELECT sql FROM sqlite_master WHERE name = ?")
              .get(index.name)
              .sql.replace(/^[\s\S]*?\bWHERE\b/i, "")
              .replace(/[`"]/g, "")
              .replace(/\s+/g, " ")
              .trim()}`
          : "";
        return `${index.unique ? "unique " : ""}index ${label} on (${on})${where}`;
      })
      .sort();
    out[name] = [...columns, ...indexes];
  }
  return out;
}

/** The lines of difference between what the migrations build and what the schema files describe. */
async function migrationsVersusSchema(files, schemaSql) {
  // node:sqlite is still flagged experimental in Node 22; its one-time warning is noise here.
  const emitWarning = process.emitWarning;
  process.emitWarning = (warning, ...rest) =>
    String(warning).includes("SQLite") ? undefined : emitWarning.call(process, warning, ...rest);
  const { DatabaseSync } = await import("node:sqlite");
  const built = new DatabaseSync(":memory:");
  for (const file of files) {
    try {
      built.exec(readFileSync(join(migrationsDir, file), "utf8"));
    } catch (error) {
      return [`migrations/${file} does not apply: ${error.message}`];
    }
  }
  const described = new DatabaseSync(":memory:");
  described.exec(schemaSql);
  const a = catalogue(built);
  const b = catalogue(described);
  const lines = [];
  for (const table of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    if (!a[table]) lines.push(`table ${table}: in the schema files, made by no migration`);
    else if (!b[table]) lines.push(`table ${table}: made by the migrations, not in the schema files`);
    else {
      for (const item of a[table])
        if (!b[table].includes(item)) lines.push(`${table}: migrations have "${item}", schema files do not`);
      for (const item of b[table])
        if (!a[table].includes(item)) lines.push(`${table}: schema files have "${item}", migrations do not`);
    }
  }
  return lines;
}

const { files, tag, number } = newestMigration();
const { snapshot, sql } = generateFromScratch();
const snapshotName = `${tag.slice(0, 4)}_snapshot.json`;
const snapshotText = recorded(snapshot);
const journalEntry = { idx: number, version: snapshot.version, tag, breakpoints: true };

const problems = (await migrationsVersusSchema(files, sql)).map((line) => `  ${line}`);
if (problems.length > 0) {
  console.error(
    `db-snapshot: the SQL migrations and src/db/schema/ describe different tables:\n${problems.join("\n")}`,
  );
  process.exit(1);
}

if (check) {
  const stale = [];
  const present = readdirSync(metaDir).sort();
  const expected = ["_journal.json", snapshotName].sort();
  if (JSON.stringify(present) !== JSON.stringify(expected)) {
    stale.push(`migrations/meta holds ${present.join(", ")}; expected ${expected.join(", ")}`);
  } else {
    if (readFileSync(join(metaDir, snapshotName), "utf8") !== snapshotText) {
      stale.push(`migrations/meta/${snapshotName} is not the snapshot of the schema files`);
    }
    const journal = JSON.parse(readFileSync(join(metaDir, "_journal.json"), "utf8"));
    const entries = journal.entries.map(({ when: _when, ...entry }) => entry);
    if (JSON.stringify(entries) !== JSON.stringify([journalEntry])) {
      stale.push(`migrations/meta/_journal.json does not name ${tag} alone`);
    }
  }
  if (stale.length > 0) {
    console.error(`db-snapshot: ${stale.join("; ")}. Run npm run db:snapshot.`);
    process.exit(1);
  }
  console.log(
    `db-snapshot: migrations/meta is the snapshot of src/db/schema/ as of ${tag}, which the SQL migrations build`,
  );
} else {
  for (const name of readdirSync(metaDir)) unlinkSync(join(metaDir, name));
  writeFileSync(join(metaDir, snapshotName), snapshotText);
  // `when` is drizzle's own migrator's bookkeeping (Keyway never runs it): the time of this refresh.
  const { idx, version, breakpoints } = journalEntry;
  const journal = { version: "7", dialect: "sqlite", entries: [{ idx, version, when: Date.now(), tag, breakpoints }] };
  writeFileSync(join(metaDir, "_journal.json"), `${JSON.stringify(journal, null, 2)}\n`);
  console.log(`db-snapshot: wrote migrations/meta/${snapshotName} and _journal.json (${tag})`);
}
