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
 * Decision B9: HCL nests at most this deep, counting blocks and expressions within each
 * other (`[[1]]`, `f(g(x))`, `a + (b + c)`, a block in a block). Real modules stay far
 * below it; the bound keeps every walker of the copied tree (several are recursive) far
 * from the stack's limit.
 */
export const MAX_HCL_NESTING = 100;

/** Backstop on the copied tree's depth for nodes that are neither blocks nor expressions. */
const MAX_TREE_DEPTH = 1000;

/** A file nested deeper than {@link MAX_HCL_NESTING}: refused before anything walks it. */
export class HclNestingError extends Error {
  override name = "HclNestingError";
  constructor(readonly line: number) {
    super(`nested more than ${MAX_HCL_NESTING} levels deep`);
  }
}

/** Node types that open a level of HCL nesting. */
function opensLevel(type: string): boolean {
  return type === "expression" || type === "block";
}

/**
 * Copies a tree. The caller still owns `tree` and must `delete()` it. The walk is
 * iterative (a cursor), so any depth is safe here.
 *
 * @param source the string the tree was parsed from.
 * @throws HclNestingError when blocks and expressions nest deeper than {@link MAX_HCL_NESTING}.
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
    // levels[i]: blocks and expressions among parents[0..i].
    const levels = [opensLevel(root.type) ? 1 : 0];
    for (;;) {
      const node = make();
      parents[parents.length - 1]!.children.push(node);
      if (cursor.gotoFirstChild()) {
        const level = levels[levels.length - 1]! + (opensLevel(node.type) ? 1 : 0);
        if (level > MAX_HCL_NESTING || parents.length >= MAX_TREE_DEPTH) throw new HclNestingError(node.line);
        parents.push(node);
        levels.push(level);
        continue;
      }
      while (!cursor.gotoNextSibling()) {
        cursor.gotoParent();
        parents.pop();
        levels.pop();
        if (parents.length === 0) return root;
      }
    }
  } finally {
    cursor.delete();
  }
}
