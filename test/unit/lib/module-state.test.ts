/**
 * B18: every per-isolate collection that outlives a request is an IsolateCache
 * (src/lib/isolate-cache), bounded in entries and, where sizes vary, in bytes. This
 * test reads src/ with the TypeScript compiler API and fails on any module-level `Map`,
 * `Set`, `WeakMap`, `WeakSet`, array or object literal that some function mutates (a
 * mutating method call, a property or element assignment, `delete`, `Object.assign`, or a
 * reassignment of the variable), in its own file or through an import, unless it is
 * allow-listed below with a reason. Mutations while the module loads (top-level
 * statements) build constant tables and are fine.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../../..");

/** `path#name` → why this collection is allowed to be mutated outside an IsolateCache. */
const ALLOWED: Record<string, string> = {
  "src/lib/isolate-cache/index.ts#registry":
    "the registry of caches: one entry per cache name written in code, replaced when a cache of that name is built again",
  "src/ssh/context-cache.ts#caches":
    "one element per mountContextCache() call, and every call is at module load (one per cache in code)",
  "src/db/d1-guard.ts#failureRules":
    "test instrumentation: only tests inject failures (injectD1Failure), and each rule is removed once spent",
  "src/db/d1-guard.ts#statementListeners":
    "test instrumentation: only tests add listeners, and they remove them; production code never does",
  "src/db/d1-guard.ts#guarded": "WeakMap keyed by the D1 binding object: one entry per binding, released with it",
  "src/db/d1-guard.ts#guards": "WeakSet of guarded binding objects: one per binding, released with it",
  "src/db/d1-guard.ts#guardedEnvs": "WeakMap keyed by the env object: released with it, never keyed by input",
  "src/db/client.ts#instances": "WeakMap keyed by the D1 binding object: one drizzle handle per binding",
  "src/lib/http/request-id.ts#records": "WeakMap keyed by the Request: the entry goes with its request",
  "src/nocode/releases/resolve.ts#parsedLists":
    "WeakMap keyed by the release lists the bounded no-code cache holds: an entry goes with its list",
};

const COLLECTION_CONSTRUCTORS = new Set(["Map", "Set", "WeakMap", "WeakSet", "Array"]);
const MUTATING_METHODS = new Set([
  "set",
  "add",
  "delete",
  "clear",
  "push",
  "pop",
  "shift",
  "unshift",
  "splice",
  "sort",
  "reverse",
  "fill",
  "copyWithin",
]);

interface Finding {
  /** `path#name` of the module-level collection. */
  id: string;
  /** Where a function mutates it (`path:line`). */
  at: string;
}

function unwrap(expr: ts.Expression): ts.Expression {
  let e = expr;
  while (ts.isAsExpression(e) || ts.isSatisfiesExpression(e) || ts.isParenthesizedExpression(e)) e = e.expression;
  return e;
}

/** Whether a module-level variable holds a collection (by its initializer, else by its declared type). */
function isCollection(decl: ts.VariableDeclaration, checker: ts.TypeChecker): boolean {
  if (decl.initializer) {
    const init = unwrap(decl.initializer);
    if (ts.isArrayLiteralExpression(init) || ts.isObjectLiteralExpression(init)) return true;
    if (ts.isNewExpression(init) && ts.isIdentifier(init.expression))
      return COLLECTION_CONSTRUCTORS.has(init.expression.text);
  }
  const type = checker.getNonNullableType(checker.getTypeAtLocation(decl.name));
  const types = type.isUnion() ? type.types : [type];
  return types.some(
    (t) =>
      checker.isArrayType(t) ||
      COLLECTION_CONSTRUCTORS.has(t.getSymbol()?.getName() ?? "") ||
      COLLECTION_CONSTRUCTORS.has(t.aliasSymbol?.getName() ?? ""),
  );
}

function insideFunction(node: ts.Node): boolean {
  for (let p = node.parent; p; p = p.parent) {
    if (
      ts.isFunctionLike(p) ||
      ts.isClassStaticBlockDeclaration(p) ||
      (ts.isPropertyDeclaration(p) && !p.modifiers?.some((m) => m.kind === ts.SyntaxKind.StaticKeyword))
    )
      return true;
  }
  return false;
}

/** The identifier a receiver chain starts with (`a` of `a.b[c].d`), if any. */
function rootIdentifier(expr: ts.Expression): ts.Identifier | null {
  let e = unwrap(expr);
  while (ts.isPropertyAccessExpression(e) || ts.isElementAccessExpression(e) || ts.isNonNullExpression(e))
    e = unwrap(e.expression);
  return ts.isIdentifier(e) ? e : null;
}

/**
 * Scan `files` (path → source) for mutated module-level collections. Files outside
 * `files` (the TypeScript lib) are read from disk.
 */
function scanModuleState(files: Map<string, string>): Finding[] {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ["lib.es2023.d.ts"],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.readFile = (name) => files.get(name) ?? readFile(name);
  host.fileExists = (name) => files.has(name) || fileExists(name);
  const directoryExists = host.directoryExists?.bind(host);
  host.directoryExists = (name) =>
    [...files.keys()].some((f) => f.startsWith(`${name}/`)) || (directoryExists?.(name) ?? false);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, languageVersion, onError) => {
    const text = files.get(name);
    return text !== undefined
      ? ts.createSourceFile(name, text, languageVersion, true)
      : getSourceFile(name, languageVersion, onError);
  };
  const program = ts.createProgram([...files.keys()], options, host);
  const checker = program.getTypeChecker();
  const ours = program.getSourceFiles().filter((sf) => files.has(sf.fileName));

  const collections = new Map<ts.Symbol, string>();
  for (const sf of ours) {
    for (const statement of sf.statements) {
      if (!ts.isVariableStatement(statement)) continue;
      for (const decl of statement.declarationList.declarations) {
        if (!ts.isIdentifier(decl.name) || !isCollection(decl, checker)) continue;
        const symbol = checker.getSymbolAtLocation(decl.name);
        if (symbol) collections.set(symbol, `${path.relative(ROOT, sf.fileName)}#${decl.name.text}`);
      }
    }
  }

  const resolve = (id: ts.Identifier | null): string | undefined => {
    if (!id) return undefined;
    let symbol = checker.getSymbolAtLocation(id);
    if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
    return symbol ? collections.get(symbol) : undefined;
  };

  const findings: Finding[] = [];
  for (const sf of ours) {
    const visit = (node: ts.Node): void => {
      let target: string | undefined;
      if (ts.isCallExpression(node)) {
        const callee = unwrap(node.expression);
        if (ts.isPropertyAccessExpression(callee)) {
          if (MUTATING_METHODS.has(callee.name.text)) target = resolve(rootIdentifier(callee.expression));
          else if (
            callee.name.text === "assign" &&
            ts.isIdentifier(callee.expression) &&
            callee.expression.text === "Object" &&
            node.arguments[0]
          )
            target = resolve(rootIdentifier(node.arguments[0]));
        }
      } else if (
        ts.isBinaryExpression(node) &&
        node.operatorToken.kind >= ts.SyntaxKind.FirstAssignment &&
        node.operatorToken.kind <= ts.SyntaxKind.LastAssignment
      ) {
        target = resolve(rootIdentifier(node.left));
      } else if (ts.isDeleteExpression(node)) {
        target = resolve(rootIdentifier(node.expression));
      } else if (
        (ts.isPrefixUnaryExpression(node) || ts.isPostfixUnaryExpression(node)) &&
        (node.operator === ts.SyntaxKind.PlusPlusToken || node.operator === ts.SyntaxKind.MinusMinusToken)
      ) {
        target = resolve(rootIdentifier(node.operand));
      }
      if (target && insideFunction(node)) {
        const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
        findings.push({ id: target, at: `${path.relative(ROOT, sf.fileName)}:${line}` });
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return findings;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [full] : [];
  });
}

describe("B18: module-level state in src/", () => {
  it("the scan finds mutated module-level collections, through imports too, and nothing else", () => {
    const dir = path.join(ROOT, "src/__sample__");
    const files = new Map([
      [
        path.join(dir, "a.ts"),
        `export const shared: string[] = [];
const seen = new Map<string, number>();
const table = new Set(["a", "b"]);
const config = { limit: 1 };
const tags: Record<string, string> = {};
let lazy: Set<string> | null = null;
const names = ["x"];
names.push("y"); // while the module loads: fine
class Box { #items = new Map<string, string>(); put(k: string) { this.#items.set(k, k); } }
export const box = new Box();
export function remember(key: string): boolean {
  seen.set(key, Date.now());
  tags[key] = key;
  lazy ??= new Set();
  return table.has(key) && config.limit > 0;
}
`,
      ],
      [
        path.join(dir, "b.ts"),
        `import { shared as list } from "./a";\nexport const add = (v: string) => list.push(v);\n`,
      ],
    ]);
    const found = scanModuleState(files).map((f) => f.id);
    expect(new Set(found)).toEqual(
      new Set([
        "src/__sample__/a.ts#seen",
        "src/__sample__/a.ts#tags",
        "src/__sample__/a.ts#lazy",
        "src/__sample__/a.ts#shared",
      ]),
    );
  });

  it("src/ mutates no module-level collection except IsolateCaches and the allow-listed ones", () => {
    const files = new Map(sourceFiles(path.join(ROOT, "src")).map((f) => [f, readFileSync(f, "utf8")]));
    const findings = scanModuleState(files);
    const offenders = findings.filter((f) => !(f.id in ALLOWED)).map((f) => `${f.id} (mutated at ${f.at})`);
    expect(offenders, "use an IsolateCache (src/lib/isolate-cache) or allow-list it with a reason").toEqual([]);
    // The allow-list stays honest: every entry still names a mutated collection.
    const flagged = new Set(findings.map((f) => f.id));
    expect(Object.keys(ALLOWED).filter((id) => !flagged.has(id))).toEqual([]);
  });
});
