/**
 * Walks over tree-sitter-hcl's concrete syntax tree: block structure, `var.*`/`local.*`
 * references, a canonical comment-free rendering of blocks, and syntax errors.
 */

import { evaluateLiteral, meaningfulChildren, objectElemParts } from "./hcl-values";
import type { SyntaxNode } from "./syntax-tree";
import type { References } from "./types";

/** A block's type, labels and body items. */
export interface BlockParts {
  type: string;
  /** Label values: quoted labels unescaped, bare ones as written. */
  labels: string[];
  /** `attribute` nodes by name (the last one wins, as a reader of invalid HCL must pick one). */
  attributes: Map<string, SyntaxNode>;
  /** Nested `block` nodes, in order. */
  blocks: SyntaxNode[];
}

/** Splits a `block` node into its parts. */
export function blockParts(block: SyntaxNode, source: string): BlockParts {
  const parts: BlockParts = { type: "", labels: [], attributes: new Map(), blocks: [] };
  let seenType = false;
  for (const child of block.children) {
    switch (child.type) {
      case "identifier":
        if (!seenType) {
          parts.type = child.text;
          seenType = true;
        } else parts.labels.push(child.text);
        break;
      case "string_lit": {
        const value = evaluateLiteral(child, source)?.value;
        parts.labels.push(typeof value === "string" ? value : child.text);
        break;
      }
      case "body":
        for (const item of child.children) {
          if (item.type === "attribute") {
            const name = item.children.find((c) => c.type === "identifier");
            if (name) parts.attributes.set(name.text, item);
          } else if (item.type === "block") parts.blocks.push(item);
        }
        break;
    }
  }
  return parts;
}

/** The expression node of an `attribute`. */
export function attributeValue(attribute: SyntaxNode): SyntaxNode | null {
  return attribute.children.find((c) => c.type === "expression") ?? null;
}

/** The type of a nested block, without splitting it fully. */
export function blockType(block: SyntaxNode): string {
  return block.children.find((c) => c.type === "identifier")?.text ?? "";
}

/** 1-based line of a node. */
export function lineOf(node: SyntaxNode): number {
  return node.line;
}

/** Accumulates reference names; {@link toReferences} freezes them sorted. */
export interface ReferenceSets {
  variables: Set<string>;
  locals: Set<string>;
}

/** Empty accumulators. */
export function newReferenceSets(): ReferenceSets {
  return { variables: new Set(), locals: new Set() };
}

/** Sorted arrays for the model. */
export function toReferences(sets: ReferenceSets): References {
  return { variables: [...sets.variables].sort(), locals: [...sets.locals].sort() };
}

/**
 * If `children[i]` roots a `var.NAME` or `local.NAME` traversal, records NAME. A traversal
 * root is a `variable_expr` (never something after a `.`); its attribute is the next
 * meaningful sibling, a `get_attr`. `var["x"]` is not valid Terraform and is ignored.
 */
function noteReference(children: SyntaxNode[], i: number, into: ReferenceSets): void {
  const child = children[i]!;
  if (child.type !== "variable_expr") return;
  const root = child.text;
  if (root !== "var" && root !== "local") return;
  let j = i + 1;
  while (j < children.length && children[j]!.type === "comment") j++;
  const next = children[j];
  if (next?.type !== "get_attr") return;
  const name = next.children.find((c) => c.type === "identifier")?.text;
  if (!name) return;
  (root === "var" ? into.variables : into.locals).add(name);
}

/** Collects the `var.*` and `local.*` names mentioned anywhere under `node`. */
export function collectReferences(node: SyntaxNode, into: ReferenceSets): void {
  const stack: SyntaxNode[] = [node];
  while (stack.length > 0) {
    const current = stack.pop()!;
    const children = current.children;
    for (let i = 0; i < children.length; i++) {
      noteReference(children, i, into);
      if (children[i]!.children.length > 0) stack.push(children[i]!);
    }
  }
}

/** SyntaxNode types whose text is template content: gaps between their children are literal. */
const TEMPLATE_CONTEXT = new Set([
  "string_lit",
  "quoted_template",
  "heredoc_template",
  "template_directive",
  "template_if",
  "template_for",
]);

/** Traversal steps glue to what precedes them: `a.b[0][*].c`. */
const GLUE_BEFORE = new Set(["get_attr", "index", "new_index", "legacy_index", "splat", "attr_splat", "full_splat"]);

/**
 * Renders a node canonically: no comments, one body item per line without indentation,
 * single spaces between tokens, `, ` between collection items (commas and newlines are
 * interchangeable separators in HCL) and ` = ` in object items (`:` is a synonym). The
 * text of strings and heredocs is copied exactly; only the expressions inside their
 * `${…}`/`%{…}` are canonicalised. References are collected on the way.
 */
export function renderCanonical(node: SyntaxNode, source: string, refs: ReferenceSets): string {
  const render = (n: SyntaxNode): string => {
    if (n.type === "comment") return "";
    if (n.children.length === 0) return n.text;
    const children = n.children;
    for (let i = 0; i < children.length; i++) noteReference(children, i, refs);

    if (TEMPLATE_CONTEXT.has(n.type)) {
      let out = "";
      let pos = n.startIndex;
      for (const child of children) {
        out += source.slice(pos, child.startIndex) + render(child);
        pos = child.endIndex;
      }
      return out + source.slice(pos, n.endIndex);
    }

    const items = meaningfulChildren(n);
    switch (n.type) {
      case "body":
        return items.map(render).join("\n");
      case "block": {
        const header: string[] = [];
        let body = "";
        for (const child of items) {
          if (child.type === "body") body = render(child);
          else if (child.type !== "block_start" && child.type !== "block_end") header.push(render(child));
        }
        return `${header.join(" ")} {${body ? `\n${body}\n` : ""}}`;
      }
      case "attribute": {
        const name = items.find((c) => c.type === "identifier");
        const value = items.find((c) => c.type === "expression");
        return `${name ? render(name) : ""} = ${value ? render(value) : ""}`;
      }
      case "tuple":
        return `[${items
          .filter((c) => c.type === "expression")
          .map(render)
          .join(", ")}]`;
      case "object":
        return `{${items
          .filter((c) => c.type === "object_elem")
          .map(render)
          .join(", ")}}`;
      case "object_elem": {
        const parts = objectElemParts(n);
        return parts ? `${render(parts.key)} = ${render(parts.val)}` : items.map(render).join(" ");
      }
      case "function_call": {
        const name = items.find((c) => c.type === "identifier");
        const args = items.find((c) => c.type === "function_arguments");
        return `${name ? render(name) : ""}(${args ? render(args) : ""})`;
      }
      case "function_arguments": {
        const rendered = items
          .filter((c) => c.type === "expression")
          .map(render)
          .join(", ");
        return items.some((c) => c.type === "ellipsis") ? `${rendered}...` : rendered;
      }
      case "template_interpolation":
        return items.map(render).join("");
    }

    let out = "";
    let previous = "";
    for (const child of items) {
      const text = render(child);
      if (text === "") continue;
      const glue =
        out === "" ||
        GLUE_BEFORE.has(child.type) ||
        text === "," ||
        text === ")" ||
        text === "]" ||
        previous === "(" ||
        previous === "[" ||
        previous === ".";
      out += glue ? text : ` ${text}`;
      previous = text;
    }
    return out;
  };
  return render(node);
}

/** A syntax error found in a tree. */
export interface SyntaxProblem {
  line: number;
  /** e.g. `missing "}"`, `unexpected "e3"`. */
  detail: string;
}

/**
 * The tree's ERROR and MISSING nodes, in source order, at most `limit`. ERROR nodes are not
 * searched for nested errors: one report per broken region is enough.
 */
export function syntaxProblems(root: SyntaxNode, limit = 20): SyntaxProblem[] {
  const found: SyntaxProblem[] = [];
  const stack: SyntaxNode[] = [root];
  while (stack.length > 0 && found.length < limit) {
    const node = stack.pop()!;
    if (node.type === "ERROR") {
      const snippet = node.text.split(/\r?\n/)[0]!.trim();
      const shown = snippet.length > 30 ? `${snippet.slice(0, 30)}…` : snippet;
      found.push({ line: node.line, detail: shown ? `unexpected ${JSON.stringify(shown)}` : "unexpected input" });
      continue;
    }
    if (node.isMissing) {
      found.push({ line: node.line, detail: `missing ${JSON.stringify(node.type)}` });
      continue;
    }
    // Reverse so that popping visits children in source order.
    for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!);
  }
  return found;
}
