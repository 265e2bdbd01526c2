/**
 * A plain-JavaScript copy of a tree-sitter tree. Every property read on a web-tree-sitter
 * `Node` is a call into WebAssembly (type, children, positions are not cached), and the
 * extraction reads each node several times; copying the tree once with a `TreeCursor`
 * (four calls per node) made extraction about twice as fast as working on `Node`s, and
 * lets the tree be freed before extraction starts.
 */

import type { Tree } from "web-tree-sitter";

/** One node: the subset of tree-sitter's `Node` that the extraction uses. */
export class SyntaxNode {
  readonly children: SyntaxNode[] = [];

  constructor(
    /** Grammar symbol for named nodes (`block`, `attribute`…), the token itself for anonymous ones (`=`, `{`). */
    readonly type: string,
    readonly isNamed: boolean,
    /** Offsets in the source string (UTF-16 code units, as `String.prototype.slice` wants). */
    readonly startIndex: number,
    readonly endIndex: number,
    /** 1-based line of the first character. */
    readonly line: number,
    /** A zero-width node the parser inserted to recover from an error. */
    readonly isMissing: boolean,
    private readonly source: string,
  ) {}

  /** The node's source text. */
  get text(): string {
    return this.source.slice(this.startIndex, this.endIndex);
  }

  get namedChildren(): SyntaxNode[] {
    return this.children.filter((c) => c.isNamed);
  }
}

/** Offsets at which each line starts, for offset → line lookups. */
function lineStarts(source: string): number[] {
  const starts = [0];
  for (let i = source.indexOf("\n"); i >= 0; i = source.indexOf("\n", i + 1)) starts.push(i + 1);
  return starts;
}

/** 1-based line holding `offset` (binary search). */
function lineAt(starts: number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

/**
 * Decision B9: HCL nests at most this deep, counting open brackets: a block's or object's
 * `{`, a tuple's `[`, a call's or a parenthesis' `(`, a template's `${`/`%{`. Real modules
 * stay far below it; with the depth backstop below it keeps every walker of the copied
 * tree (several are recursive) far from the stack's limit.
 */
export const MAX_HCL_NESTING = 100;

/** Backstop on the copied tree's depth, for nesting without brackets (`1 + 1 + … + 1`, `!!…x`). */
const MAX_TREE_DEPTH = 1000;

/** A file nested deeper than {@link MAX_HCL_NESTING}: refused before anything walks it. */
export class HclNestingError extends Error {
  override name = "HclNestingError";
  constructor(readonly line: number) {
    super(`nested more than ${MAX_HCL_NESTING} levels deep`);
  }
}

/** Tokens (node types) that open and close a level of HCL nesting. */
const OPENERS = new Set([
  "block_start",
  "object_start",
  "tuple_start",
  "(",
  "template_interpolation_start",
  "template_directive_start",
]);
const CLOSERS = new Set([
  "block_end",
  "object_end",
  "tuple_end",
  ")",
  "template_interpolation_end",
  "template_directive_end",
]);

/**
 * Copies a tree. The caller still owns `tree` and must `delete()` it. The walk is
 * iterative (a cursor), so any depth is safe here.
 *
 * @param source the string the tree was parsed from.
 * @throws HclNestingError when brackets nest deeper than {@link MAX_HCL_NESTING}, or the
 *   tree is deeper than a backstop of 1,000 nodes.
 */
export function toSyntaxTree(tree: Tree, source: string): SyntaxNode {
  const starts = lineStarts(source);
  // MISSING nodes exist only in trees with errors: skip that call otherwise.
  const mayHaveMissing = tree.rootNode.hasError;
  const cursor = tree.walk();
  try {
    const make = () => {
      const start = cursor.startIndex;
      return new SyntaxNode(
        cursor.nodeType,
        cursor.nodeIsNamed,
        start,
        cursor.endIndex,
        lineAt(starts, start),
        mayHaveMissing && cursor.nodeIsMissing,
        source,
      );
    };
    const root = make();
    if (!cursor.gotoFirstChild()) return root;
    const parents = [root];
    // Open brackets so far, in document order (the walk visits tokens in source order).
    let level = 0;
    for (;;) {
      const node = make();
      parents[parents.length - 1]!.children.push(node);
      if (OPENERS.has(node.type)) {
        if (++level > MAX_HCL_NESTING) throw new HclNestingError(node.line);
      } else if (CLOSERS.has(node.type) && level > 0) level--;
      if (cursor.gotoFirstChild()) {
        if (parents.length >= MAX_TREE_DEPTH) throw new HclNestingError(node.line);
        parents.push(node);
        continue;
      }
      while (!cursor.gotoNextSibling()) {
        cursor.gotoParent();
        parents.pop();
        if (parents.length === 0) return root;
      }
    }
  } finally {
    cursor.delete();
  }
}
