#!/usr/bin/env node
/**
 * The import rules of the repository (README, "The two commands"), checked on every file of src/:
 *
 * 1. No import circle between feature folders. A feature is a folder directly under
 *    src/ssh, src/nocode or src/lib (src/nocode/registry, src/lib/sshwire, …); a file
 *    directly in a wing (src/ssh/errors.ts, src/nocode/respond.ts, …) is a node of its own,
 *    since those files are the wing's shared plumbing, not a feature.
 * 2. Nothing inside src/nocode imports src/nocode/app.ts (only src/index.ts mounts it).
 * 3. The two wings (src/ssh, src/nocode) never import each other.
 * 4. src/lib is pure: it imports neither Hono, nor the wings, nor src/db, src/app-env.ts,
 *    src/index.ts, src/queue.ts, nor `cloudflare:*` modules (no bindings).
 *    Every file of src/lib lives in a folder (src/lib/bytes/, src/lib/crypto/, …), so
 *    rule 1 sees lib as folders only and a circle through a loose root file cannot hide.
 * 5. No import circle between files: every .ts file under src/ is a node, and a file
 *    may not reach itself again through its imports (within a folder too).
 * 6. Decision B21: src/platform/ (binding-aware code both wings use) imports only
 *    src/platform, src/lib and src/db (and packages, `cloudflare:*` bindings included):
 *    neither wing, nor the files that mount Hono routes (src/index.ts, src/queue.ts).
 *    src/lib may not import src/platform (rule 4), so neither imports Hono routes.
 * 7. Queries live in repositories: no route file imports `drizzle-orm` (or a `drizzle-orm/…`
 *    entry point) or a schema file (src/db/schema/*.ts). A route file is a .ts file under src/ that is named
 *    `routes.ts` or `*-routes.ts`, or that registers routes itself: it constructs a Hono app
 *    (`new Hono`) or declares a Vault route table (`…: VaultRoute[] = [`). Its queries belong
 *    in the feature's `repo.ts`. There is no exception.
 * 8. Each wing owns its tables: src/db/schema/ssh.ts holds the secrets service's, and
 *    src/db/schema/nocode.ts the no-code service's. A wing never imports the other wing's
 *    schema file, and src/platform (B21: code both wings use) imports neither.
 *
 * Type-only imports count: a circle of types is still a circle a reader has to untangle.
 * Imports are read with the TypeScript scanner (ts.preProcessFile), so `import type`,
 * `export … from` and dynamic `import()` are all seen.
 *
 * Usage: node scripts/check-imports.mjs [--graph] [--root <dir>]   (exit 1 when a rule is broken;
 * --root checks another tree's src/, as test/unit/scripts/check-imports.test.ts does)
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const rootArg = process.argv.indexOf("--root");
const root =
  rootArg === -1 ? resolve(dirname(fileURLToPath(import.meta.url)), "..") : resolve(process.argv[rootArg + 1]);
const src = join(root, "src");
const WINGS = ["src/ssh", "src/nocode"];
const FEATURE_PARENTS = ["src/ssh", "src/nocode", "src/lib", "src/platform"];
/** Rule 6 (B21): what src/platform may import. */
const PLATFORM_MAY_IMPORT = ["src/platform/", "src/lib/", "src/db/"];
/** Rule 8: the schema file of each wing's tables. */
const WING_SCHEMAS = new Map([
  ["src/ssh", "src/db/schema/ssh.ts"],
  ["src/nocode", "src/db/schema/nocode.ts"],
]);

/** Rule 7: whether `target` is a schema file (the tables of src/db/schema/). */
function isSchemaFile(target) {
  return target?.startsWith("src/db/schema/") === true;
}

/** Rule 7: whether `file` (with source `text`) is a route file. */
function isRouteFile(file, text) {
  const name = file.slice(file.lastIndexOf("/") + 1);
  if (name === "routes.ts" || name.endsWith("-routes.ts")) return true;
  return /\bnew (?:OpenAPI)?Hono\b/.test(text) || /:\s*VaultRoute\[\]\s*=\s*\[/.test(text);
}

function isDrizzle(specifier) {
  return specifier === "drizzle-orm" || specifier.startsWith("drizzle-orm/");
}

/** Every .ts file under `dir`, as paths relative to the repository root with `/`. */
function tsFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...tsFiles(full));
    else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) out.push(posix(relative(root, full)));
  }
  return out;
}

function posix(path) {
  return path.split(sep).join("/");
}

/** The file a relative specifier names (Bundler resolution: `x`, `x.ts`, `x/index.ts`). */
function resolveRelative(fromFile, specifier) {
  const base = join(root, dirname(fromFile), specifier.replace(/\.js$/, ""));
  for (const candidate of [base, `${base}.ts`, join(base, "index.ts")]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return posix(relative(root, candidate));
  }
  return undefined;
}

/** The node of the folder graph a file belongs to (see rule 1). */
function nodeOf(file) {
  for (const parent of FEATURE_PARENTS) {
    if (!file.startsWith(`${parent}/`)) continue;
    const rest = file.slice(parent.length + 1);
    const slash = rest.indexOf("/");
    return slash === -1 ? file : `${parent}/${rest.slice(0, slash)}`;
  }
  return file;
}

function wingOf(file) {
  return WINGS.find((wing) => file.startsWith(`${wing}/`));
}

const problems = [];
/** folder graph: node → Map(target node → one example import "a.ts → b.ts") */
const graph = new Map();
/** file graph (rule 5): file → Map(target file → the same import, as "a.ts → b.ts") */
const fileGraph = new Map();

function addEdge(into, from, to, example) {
  if (!into.has(from)) into.set(from, new Map());
  const edges = into.get(from);
  if (!edges.has(to)) edges.set(to, example);
}

/** Rule 7: route files that import drizzle-orm or a schema file → the first such import. */
const routeFilesWithQueries = new Map();

for (const file of tsFiles(src)) {
  if (/^src\/lib\/[^/]+$/.test(file)) problems.push(`every file of src/lib lives in a folder: ${file}`);
  const text = readFileSync(join(root, file), "utf8");
  const routeFile = isRouteFile(file, text);
  const { importedFiles } = ts.preProcessFile(text, true, true);
  for (const { fileName: specifier } of importedFiles) {
    const inLib = file.startsWith("src/lib/");
    if (routeFile && !routeFilesWithQueries.has(file)) {
      const target = specifier.startsWith(".") ? resolveRelative(file, specifier) : undefined;
      if (isDrizzle(specifier) || isSchemaFile(target)) routeFilesWithQueries.set(file, specifier);
    }
    if (!specifier.startsWith(".")) {
      if (inLib && (specifier === "hono" || specifier.startsWith("hono/") || specifier.startsWith("cloudflare:"))) {
        problems.push(`src/lib must stay pure: ${file} imports "${specifier}"`);
      }
      continue;
    }
    const target = resolveRelative(file, specifier);
    if (!target) {
      problems.push(`${file}: cannot resolve import "${specifier}"`);
      continue;
    }
    if (target === "src/nocode/app.ts" && file.startsWith("src/nocode/")) {
      problems.push(
        `${file} imports src/nocode/app.ts (only src/index.ts may; the wing's types live in src/nocode/env.ts)`,
      );
    }
    const fromWing = wingOf(file);
    const toWing = wingOf(target);
    if (fromWing && toWing && fromWing !== toWing)
      problems.push(`the wings never import each other: ${file} → ${target}`);
    for (const [wing, schema] of WING_SCHEMAS) {
      if (target !== schema) continue;
      if (fromWing && fromWing !== wing)
        problems.push(`a wing never imports the other wing's tables: ${file} → ${target}`);
      if (file.startsWith("src/platform/"))
        problems.push(`src/platform imports no wing's tables (B21): ${file} → ${target}`);
    }
    if (inLib && !target.startsWith("src/lib/")) problems.push(`src/lib must stay pure: ${file} → ${target}`);
    if (file.startsWith("src/platform/") && !PLATFORM_MAY_IMPORT.some((allowed) => target.startsWith(allowed))) {
      problems.push(`src/platform imports only src/platform, src/lib and src/db (B21): ${file} → ${target}`);
    }
    if (target !== file) addEdge(fileGraph, file, target, `${file} → ${target}`);
    const from = nodeOf(file);
    const to = nodeOf(target);
    if (from === to) continue;
    addEdge(graph, from, to, `${file} → ${target}`);
  }
}

for (const [file, specifier] of routeFilesWithQueries) {
  problems.push(
    `a route file imports no drizzle-orm or schema file (queries live in repo.ts): ${file} imports "${specifier}"`,
  );
}

/** Tarjan's strongly connected components: each component of more than one node is a circle. */
function circles(graph) {
  let index = 0;
  const stack = [];
  const onStack = new Set();
  const indexOf = new Map();
  const low = new Map();
  const found = [];
  const visit = (node) => {
    indexOf.set(node, index);
    low.set(node, index);
    index++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node)?.keys() ?? []) {
      if (!indexOf.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node), low.get(next)));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node), indexOf.get(next)));
      }
    }
    if (low.get(node) === indexOf.get(node)) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!indexOf.has(node)) visit(node);
  return found;
}

for (const [what, into] of [
  ["feature folders", graph],
  ["files", fileGraph],
]) {
  for (const component of circles(into)) {
    const members = new Set(component);
    const lines = [];
    for (const from of component) {
      for (const [to, example] of into.get(from) ?? []) if (members.has(to)) lines.push(`    ${example}`);
    }
    problems.push(`import circle between ${what} ${component.join(", ")}:\n${lines.join("\n")}`);
  }
}

if (process.argv.includes("--graph")) {
  for (const [from, edges] of [...graph].sort()) console.log(`${from} → ${[...edges.keys()].sort().join(", ")}`);
}

if (problems.length > 0) {
  for (const problem of problems) console.error(problem);
  console.error(`check-imports: ${problems.length} problem(s)`);
  process.exit(1);
}
console.log(
  "check-imports: no import circle between feature folders or files; wings, src/lib and src/platform keep their bounds; each wing imports only its own tables; route files leave queries to repositories",
);
