/**
 * The documents name files that exist: every repository path that README.md and docs/*.md
 * name (`src/…`, `test/…`, `scripts/…`, `bench/…`, `docs/…`, `migrations/…`, `agent/…`) is
 * a file or folder of the repository, so a newcomer following docs/architecture.md never
 * meets a path a move or a rename left behind.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../../..");

/** A repository path as the documents write it; `*`, `<…>` and `…` mark a pattern, not a file. */
const NAMED_PATH = /(?<![\w/.:-])(?:src|test|scripts|bench|docs|migrations|agent)\/[A-Za-z0-9_.\-/]*[A-Za-z0-9_]/g;

/** Words shaped like a path that name something else: a registry module address of the bench. */
const NOT_PATHS = new Set(["bench/null"]);

/** Whether `named` is in the repository (a module may be named as it is imported, without `.ts`). */
function exists(named: string): boolean {
  return existsSync(path.join(root, named)) || existsSync(path.join(root, `${named}.ts`));
}

/** The paths a document's text names (patterns and placeholders left out). */
function namedPaths(text: string): string[] {
  const out = new Set<string>();
  for (const match of text.matchAll(NAMED_PATH)) {
    const end = (match.index ?? 0) + match[0].length;
    if (/^[*<…{]/.test(text.slice(end, end + 1))) continue;
    if (!NOT_PATHS.has(match[0])) out.add(match[0]);
  }
  return [...out];
}

function documents(): string[] {
  const docs = readdirSync(path.join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => path.join("docs", name));
  return ["README.md", ...docs];
}

describe("paths the documents name", () => {
  it("the scanner finds a path, and leaves patterns and placeholders out", () => {
    expect(namedPaths("see `src/nocode/teams/repo.ts`, and src/db/schema/ for the tables.")).toEqual([
      "src/nocode/teams/repo.ts",
      "src/db/schema",
    ]);
    expect(namedPaths("migrations/00NN_<what>.sql, test/worker/*.test.ts, src/ssh/<feature>/repo.ts")).toEqual([
      "test/worker",
      "src/ssh",
    ]);
  });

  it("a missing path is found (the check can fail)", () => {
    const missing = namedPaths("src/nocode/no-such-file.ts and src/nocode/app").filter((p) => !exists(p));
    expect(missing).toEqual(["src/nocode/no-such-file.ts"]);
  });

  for (const document of documents()) {
    it(`${document} names only paths that exist`, () => {
      const text = readFileSync(path.join(root, document), "utf8");
      const missing = namedPaths(text).filter((p) => !exists(p));
      expect(missing).toEqual([]);
    });
  }
});
