/**
 * The repository is self-contained: every decision id cited in `src/` and
 * `test/` (`B5`, `S2a`, `N10a`…, and the no-code endpoint ids `E1`–`E7`) is defined in
 * `docs/`. An id is defined by a `- **<id> …` entry of docs/decisions.md or a heading
 * `### <id>.` of the API references.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../../..");

/**
 * A cited id: a service letter and a number (1–49) with an optional amendment letter, or
 * an endpoint id E1–E7. Word boundaries keep `B64`, `E1s` (a plural) and `sha256` out.
 */
const CITED_ID = /\b(?:[BSN](?:[1-9]|[1-4][0-9])[a-d]?|E[1-7])\b/g;
const DEFINED_ID = /^(?:- \*\*|#{2,4} )((?:[BSN]\d{1,2}[a-d]?|E[1-7]))\b/gm;

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) out.push(...filesUnder(full));
    else if (/\.(ts|tsx|mjs|js|sh|md)$/.test(name)) out.push(full);
  }
  return out;
}

function definedIds(): Set<string> {
  const ids = new Set<string>();
  for (const file of filesUnder(path.join(root, "docs"))) {
    for (const m of readFileSync(file, "utf8").matchAll(DEFINED_ID)) ids.add(m[1]!);
  }
  return ids;
}

describe("decision ids resolve inside the repository", () => {
  it("docs/ defines every id cited in src/ and test/", () => {
    const defined = definedIds();
    const missing = new Map<string, string>();
    for (const dir of ["src", "test"]) {
      for (const file of filesUnder(path.join(root, dir))) {
        if (file.includes(`${path.sep}fixtures${path.sep}`)) continue;
        for (const m of readFileSync(file, "utf8").matchAll(CITED_ID)) {
          if (!defined.has(m[0]) && !missing.has(m[0])) missing.set(m[0], path.relative(root, file));
        }
      }
    }
    expect(Object.fromEntries(missing), "ids cited but not defined in docs/ (first file citing each)").toEqual({});
  });

  it("finds the definitions it relies on (the check itself can fail)", () => {
    const defined = definedIds();
    for (const id of ["B1", "S2a", "S16a", "N10a", "E4", "B15"]) expect(defined.has(id), id).toBe(true);
    // An id that does not exist, spelled so this file does not cite it itself.
    const undefinedId = ["S", "48"].join("");
    expect(defined.has(undefinedId)).toBe(false);
    expect(`see ${undefinedId} and E1s, B64`.match(CITED_ID)).toEqual([undefinedId]);
  });
});
