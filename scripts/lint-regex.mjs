#!/usr/bin/env node
/**
 * Decision B9: no backtracking-prone regular expression in the Worker's code. Every regex
 * literal and every `new RegExp(…)` under src/ is analysed with scslre (super-linear
 * worst-case time: polynomial or exponential backtracking on a repeated character, the
 * class of `^\s*(op)?\s*…\s*$` that took minutes on `1.0,` + a million spaces + `x`).
 *
 * `new RegExp(…)` is evaluated when its pattern is built from string literals, templates
 * and `const`s of the same file; a pattern built at run time must say why it is safe with
 * a comment `lint-regex: <reason>` on the line above (it is then not analysed).
 * Exits 1 and lists every finding; prints how many patterns were checked.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { RegExpParser } from "@eslint-community/regexpp";
import { analyse } from "scslre";
import ts from "typescript";

const root = path.resolve(import.meta.dirname, "..");
const dirs = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ["src"];

function* sourceFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(full);
    else if (/\.(ts|tsx|mjs|js)$/.test(entry.name) && !entry.name.endsWith(".d.ts")) yield full;
  }
}

const parser = new RegExpParser();
const findings = [];
let checked = 0;
let exempted = 0;

/** Analyse one pattern; records findings. */
function check(file, sf, node, source, flags) {
  const where = `${path.relative(root, file)}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}`;
  let literal;
  try {
    literal = parser.parseLiteral(`/${source}/${flags}`);
  } catch (err) {
    findings.push(`${where}: cannot parse /${source}/${flags}: ${err.message}`);
    return;
  }
  checked++;
  const result = analyse(literal, { assumeRejectingSuffix: true });
  for (const report of result.reports) {
    const kind = report.exponential ? "exponential" : "polynomial";
    findings.push(
      `${where}: /${source}/${flags} has ${kind} backtracking (${report.type}: ${report.character?.literal?.source ?? "?"})`,
    );
  }
}

/** The string value of a pattern expression, or undefined when it is built at run time. */
function evaluate(node, consts, depth = 0) {
  if (depth > 20 || !node) return undefined;
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isParenthesizedExpression(node)) return evaluate(node.expression, consts, depth + 1);
  if (ts.isTemplateExpression(node)) {
    let out = node.head.text;
    for (const span of node.templateSpans) {
      const part = evaluate(span.expression, consts, depth + 1);
      if (part === undefined) return undefined;
      out += part + span.literal.text;
    }
    return out;
  }
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    const a = evaluate(node.left, consts, depth + 1);
    const b = evaluate(node.right, consts, depth + 1);
    return a === undefined || b === undefined ? undefined : a + b;
  }
  if (ts.isNumericLiteral(node)) return node.text;
  if (ts.isIdentifier(node) && consts.has(node.text)) return evaluate(consts.get(node.text), consts, depth + 1);
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.MinusToken) {
    const a = Number(evaluate(node.left, consts, depth + 1));
    const b = Number(evaluate(node.right, consts, depth + 1));
    return Number.isFinite(a - b) ? String(a - b) : undefined;
  }
  return undefined;
}

for (const dir of dirs) {
  for (const file of sourceFiles(path.resolve(root, dir))) {
    const text = readFileSync(file, "utf8");
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const consts = new Map();
    const collect = (node) => {
      if (ts.isVariableDeclarationList(node) && node.flags & ts.NodeFlags.Const) {
        for (const d of node.declarations)
          if (ts.isIdentifier(d.name) && d.initializer) consts.set(d.name.text, d.initializer);
      }
      ts.forEachChild(node, collect);
    };
    collect(sf);
    const lines = text.split("\n");
    const visit = (node) => {
      if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
        const raw = node.getText(sf);
        const slash = raw.lastIndexOf("/");
        check(file, sf, node, raw.slice(1, slash), raw.slice(slash + 1));
      } else if (
        (ts.isNewExpression(node) || ts.isCallExpression(node)) &&
        ts.isIdentifier(node.expression) &&
        node.expression.text === "RegExp"
      ) {
        const [pattern, flagsNode] = node.arguments ?? [];
        const source = evaluate(pattern, consts);
        const flags = flagsNode ? evaluate(flagsNode, consts) : "";
        if (source === undefined || flags === undefined) {
          const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
          if (/lint-regex: \S/.test(lines[line - 1] ?? "") || /lint-regex: \S/.test(lines[line] ?? "")) exempted++;
          else
            findings.push(
              `${path.relative(root, file)}:${line + 1}: a RegExp built at run time needs a "lint-regex: <why it is safe>" comment above it`,
            );
        } else check(file, sf, node, source, flags);
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
}

if (findings.length > 0) {
  for (const f of findings) console.error(f);
  console.error(`lint:regex: ${findings.length} finding(s) in ${checked} patterns`);
  process.exit(1);
}
console.log(
  `lint:regex: ${checked} patterns checked, none backtracking-prone; ${exempted} run-time patterns exempted with a reason`,
);
