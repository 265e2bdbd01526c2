/**
 * The repository is self-contained.
 *
 * - Every decision id cited in `src/` and `test/` (`B5`, `S2a`, `N10a`…, and the no-code
 *   endpoint ids `E1`–`E7`) is defined in `docs/`. An id is defined by a `- **<id> …`
 *   entry of docs/decisions.md or a heading `### <id>.` of the API references.
 * - No comment in `src/` or `test/` cites a document that is not in the repository (the
 *   planning notes the code was written from: their sections, rows, numbered items,
 *   issue and finding numbers, or their folder). A comment says what it means, or cites
 *   `docs/`, a decision id, an RFC or a public Vault, OpenBao or HCP Terraform source
 *   (docs/architecture.md, "Comments and citations"). Only comments are checked: a string
 *   may hold such words as data (an error text, a Terraform `source = "…"`).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
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

/** Citations of documents outside the repository, each with what a reader sees instead. */
const OUTSIDE_CITATIONS: readonly { pattern: RegExp; instead: string }[] = [
  { pattern: /\breference §/i, instead: "the public source (a Vault, OpenBao or HCP Terraform URL or file)" },
  { pattern: /\bhouse[- ]style\b/i, instead: "the convention itself (docs/architecture.md)" },
  { pattern: /\bseed (?:rows?\b|§)/i, instead: "the endpoint or docs/api-*.md" },
  { pattern: /\bchecklist items?\b/i, instead: "the case itself, or the public test it mirrors" },
  { pattern: /\bissues? #?\d+(?![\w-])/i, instead: "what the change is for, or a decision id" },
  { pattern: /\bfindings? #?\d+(?![\w-])/i, instead: "what was found, or a decision id" },
  { pattern: /\.\.\/shared\b|\/work\/shared\b|\bshared\/(?:spec|reference)\//, instead: "docs/ or a public source" },
  {
    pattern:
      /\b(?:vault-ssh-behaviour|tfe-no-code-behaviour|vault-jwt-auth|terraform-source-parsing|execution-plane|house-style|ssh-secrets-api|no-code-provisioning-api)(?:\.md\b| §)/,
    instead: "the public source the note summarised",
  },
];

interface Comment {
  line: number;
  text: string;
}

/**
 * The comments of a TypeScript or JavaScript file, found by TypeScript's own parser so
 * that strings, template literals and regular expressions are never read as comments.
 * Every comment is trivia before some token, so the comments before each token (on its
 * line and on the lines above) are all of them. JSDoc nodes are skipped as tokens: they
 * are comments themselves, and are found as the trivia of the token that follows.
 */
function scriptComments(text: string, fileName: string): Comment[] {
  const kind = /\.(?:mjs|cjs|js)$/.test(fileName) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, kind);
  const found = new Map<number, Comment>();
  const collect = (pos: number) => {
    const ranges = [
      ...(ts.getTrailingCommentRanges(text, pos) ?? []),
      ...(ts.getLeadingCommentRanges(text, pos) ?? []),
    ];
    for (const range of ranges) {
      if (found.has(range.pos)) continue;
      const line = source.getLineAndCharacterOfPosition(range.pos).line + 1;
      found.set(range.pos, { line, text: text.slice(range.pos, range.end) });
    }
  };
  const visit = (node: ts.Node) => {
    if (node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode) return;
    const children = node.getChildren(source);
    if (children.length === 0) collect(node.pos);
    for (const child of children) visit(child);
  };
  visit(source);
  return [...found.values()].sort((a, b) => a.line - b.line);
}

/** The comment lines of a shell script: lines whose first non-blank character is `#` (not `#!`). */
function shellComments(text: string): Comment[] {
  return text
    .split("\n")
    .map((line, i) => ({ line: i + 1, text: line }))
    .filter((c) => /^\s*#(?!!)/.test(c.text));
}

function commentsOf(text: string, fileName: string): Comment[] {
  return fileName.endsWith(".sh") ? shellComments(text) : scriptComments(text, fileName);
}

/** `file:line: <citation> (write <instead>)` for every outside citation in a comment of the file. */
function outsideCitations(text: string, fileName: string): string[] {
  const out: string[] = [];
  for (const comment of commentsOf(text, fileName)) {
    for (const { pattern, instead } of OUTSIDE_CITATIONS) {
      const m = comment.text.match(pattern);
      if (!m) continue;
      const line = comment.line + (comment.text.slice(0, m.index).match(/\n/g)?.length ?? 0);
      out.push(`${fileName}:${line}: "${m[0]}" (write ${instead})`);
    }
  }
  return out;
}

describe("comments cite nothing outside the repository", () => {
  it("no comment in src/ or test/ cites a document that is not in the repository", () => {
    const found: string[] = [];
    for (const dir of ["src", "test"]) {
      for (const file of filesUnder(path.join(root, dir))) {
        if (file.includes(`${path.sep}fixtures${path.sep}`) || file.endsWith(".md")) continue;
        found.push(...outsideCitations(readFileSync(file, "utf8"), path.relative(root, file)));
      }
    }
    expect(found, "comments citing documents outside the repository").toEqual([]);
  });

  it("finds such citations in every kind of comment, and only in comments (the check itself can fail)", () => {
    // Built from parts so that this file's own comments and strings cite nothing.
    const section = "\u00a7";
    const fake = [
      "/**",
      ` * Roles (reference ${section}3.1, seed row 1; house style ${section}4).`,
      " */",
      `const a = "Vault said: issue 2 of 3 failed"; // issue 19: kept per isolate`,
      `const b = 'module "x" { source = "../shared" }';`,
      `const c = /issue 19|finding 13/; /* finding 13, checklist item 7 */`,
      "function f() {",
      `  return \`reference ${section}1 $\{a}\`;`,
      "  // the last line of a block: see ../shared/spec/x.md",
      "}",
      "// at the end of the file: vault-ssh-behaviour " + section + "7",
    ].join("\n");
    expect(outsideCitations(fake, "fake.ts").map((f) => f.replace(/ \(write .*\)$/, ""))).toEqual([
      `fake.ts:2: "reference ${section}"`,
      `fake.ts:2: "house style"`,
      `fake.ts:2: "seed row"`,
      `fake.ts:4: "issue 19"`,
      `fake.ts:6: "checklist item"`,
      `fake.ts:6: "finding 13"`,
      `fake.ts:9: "../shared"`,
      `fake.ts:11: "vault-ssh-behaviour ${section}"`,
    ]);
    // Shell scripts: comment lines only, never the shebang or a quoted word.
    const script = ["#!/usr/bin/env bash", "# see issue 20", 'echo "issue 20"'].join("\n");
    expect(outsideCitations(script, "fake.sh").map((f) => f.replace(/ \(write .*\)$/, ""))).toEqual([
      `fake.sh:2: "issue 20"`,
    ]);
    // Words that only look alike pass: issuing keys, a 2048-bit issue, RFC sections.
    const fine = "// issue 2048-bit keys; issuer 3; RFC 4253 \u00a76.6; PROTOCOL.krl \u00a72.1; docs/decisions.md";
    expect(outsideCitations(fine, "fine.ts")).toEqual([]);
  });
});
