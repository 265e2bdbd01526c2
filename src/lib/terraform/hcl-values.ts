/**
 * Evaluation of literal HCL expressions (strings, heredocs, numbers, bools, null, tuples,
 * objects) from tree-sitter-hcl nodes, following the HCL native syntax spec
 * (hashicorp/hcl `hclsyntax/spec.md`, "Template Expressions" and "Literal Values").
 *
 * tree-sitter's `template_literal` nodes leave out leading and trailing whitespace and, in
 * heredocs, the line structure, so string values are always rebuilt from the source text
 * between the delimiters, never from the literal nodes' text.
 */

import type { SyntaxNode } from "./syntax-tree";
import type { JsonValue } from "./types";

/** A literal's value, or `undefined` when the expression is not literal. */
export type Evaluated = { value: JsonValue } | undefined;

/** Children that carry meaning: comments may sit between any two tokens. */
export function meaningfulChildren(node: SyntaxNode): SyntaxNode[] {
  return node.children.filter((c) => c.type !== "comment");
}

/**
 * The key and value expressions of an `object_elem` (`key = val` or `key: val`); comments
 * may sit between them.
 */
export function objectElemParts(elem: SyntaxNode): { key: SyntaxNode; val: SyntaxNode } | null {
  const expressions = elem.children.filter((c) => c.type === "expression");
  return expressions.length === 2 ? { key: expressions[0]!, val: expressions[1]! } : null;
}

/**
 * Decodes the escapes of a quoted template's literal text: `\n \r \t \" \\ \uNNNN
 * \UNNNNNNNN`, plus `$${` → `${` and `%%{` → `%{`. An unknown escape is kept as written
 * (HCL rejects it; tree-sitter does not, and this is not a validator).
 */
export function unescapeQuoted(raw: string): string {
  return raw.replace(/\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|[nrt"\\])|\$\$\{|%%\{/g, (match, sequence?: string) => {
    if (match === "$${") return "${";
    if (match === "%%{") return "%{";
    switch (sequence![0]) {
      case "n":
        return "\n";
      case "r":
        return "\r";
      case "t":
        return "\t";
      case '"':
        return '"';
      case "\\":
        return "\\";
      default: {
        const code = Number.parseInt(sequence!.slice(1), 16);
        return code <= 0x10ffff ? String.fromCodePoint(code) : match;
      }
    }
  });
}

/** Heredocs interpret only the template escapes; backslashes are literal. */
function unescapeHeredoc(raw: string): string {
  return raw.replace(/\$\$\{|%%\{/g, (m) => (m === "$${" ? "${" : "%{"));
}

/**
 * Strips the common leading whitespace of a `<<-` heredoc body. Lines that are blank do
 * not lower the common indentation; they lose what they have up to it.
 */
function stripIndent(body: string): string {
  const lines = body.split("\n");
  let min = Number.POSITIVE_INFINITY;
  for (const line of lines) {
    const content = line.replace(/\r$/, "");
    if (content.trim() === "") continue;
    const indent = content.length - content.replace(/^[ \t]+/, "").length;
    min = Math.min(min, indent);
  }
  if (!Number.isFinite(min) || min === 0) return body;
  return lines
    .map((line) => {
      const indent = line.length - line.replace(/^[ \t]+/, "").length;
      return line.slice(Math.min(indent, min));
    })
    .join("\n");
}

/**
 * The raw body of a heredoc: from the line after the opening marker up to the start of
 * the line holding the closing marker (so it ends with the last line's newline, as in HCL).
 */
function heredocBody(node: SyntaxNode, source: string): string {
  const markers = node.children.filter((c) => c.type === "heredoc_identifier");
  const open = markers[0];
  const close = markers[markers.length - 1];
  if (!open || !close || open === close) return "";
  const newline = source.indexOf("\n", open.endIndex);
  const start = newline < 0 ? open.endIndex : newline + 1;
  const end = source.lastIndexOf("\n", close.startIndex - 1) + 1;
  return end > start ? source.slice(start, end) : "";
}

/** True when a template node has interpolations or directives (so it is not a literal). */
function hasTemplateParts(node: SyntaxNode): boolean {
  return node.children.some((c) => c.type === "template_interpolation" || c.type === "template_directive");
}

/** Text between a quoted template's delimiters, escapes decoded. */
function quotedValue(node: SyntaxNode, source: string): string {
  const children = node.children;
  const open = children[0];
  const close = children[children.length - 1];
  if (!open || !close || open === close) return "";
  return unescapeQuoted(source.slice(open.endIndex, close.startIndex));
}

/**
 * Evaluates a string-valued literal (quoted string or heredoc without interpolation),
 * e.g. a block label, `source`, `description`. Undefined for anything else.
 */
export function stringValue(node: SyntaxNode, source: string): string | undefined {
  const evaluated = evaluateLiteral(node, source);
  return evaluated && typeof evaluated.value === "string" ? evaluated.value : undefined;
}

/**
 * Evaluates a literal expression. Anything that needs evaluation context (references,
 * function calls, operators other than a leading minus on a number, templates with
 * interpolations, `for` expressions) yields `undefined`.
 */
export function evaluateLiteral(node: SyntaxNode, source: string): Evaluated {
  switch (node.type) {
    case "expression":
    case "literal_value":
    case "collection_value":
    case "template_expr":
    case "operation": {
      const children = meaningfulChildren(node);
      // A parenthesised expression: `(` expression `)`.
      if (children.length === 3 && children[0]!.type === "(" && children[2]!.type === ")") {
        return evaluateLiteral(children[1]!, source);
      }
      return children.length === 1 ? evaluateLiteral(children[0]!, source) : undefined;
    }
    case "string_lit":
      return { value: quotedValue(node, source) };
    case "quoted_template":
      return hasTemplateParts(node) ? undefined : { value: quotedValue(node, source) };
    case "heredoc_template": {
      if (hasTemplateParts(node)) return undefined;
      const start = node.children.find((c) => c.type === "heredoc_start");
      const body = heredocBody(node, source);
      return { value: unescapeHeredoc(start?.text === "<<-" ? stripIndent(body) : body) };
    }
    case "numeric_lit": {
      const n = Number(node.text);
      return Number.isFinite(n) ? { value: n } : undefined;
    }
    case "bool_lit":
      return { value: node.text === "true" };
    case "null_lit":
      return { value: null };
    case "unary_operation": {
      const [op, operand] = meaningfulChildren(node);
      if (op?.type !== "-" || !operand) return undefined;
      const inner = evaluateLiteral(operand, source);
      return inner && typeof inner.value === "number" ? { value: -inner.value } : undefined;
    }
    case "tuple": {
      const values: JsonValue[] = [];
      for (const child of node.namedChildren) {
        if (child.type !== "expression") continue;
        const v = evaluateLiteral(child, source);
        if (!v) return undefined;
        values.push(v.value);
      }
      return { value: values };
    }
    case "object": {
      const value: Record<string, JsonValue> = {};
      for (const elem of node.namedChildren) {
        if (elem.type !== "object_elem") continue;
        const parts = objectElemParts(elem);
        if (!parts) return undefined;
        const key = objectKey(parts.key, source);
        const v = evaluateLiteral(parts.val, source);
        if (key === undefined || !v) return undefined;
        // Defined rather than assigned, so a key named `__proto__` is just a key.
        Object.defineProperty(value, key, { value: v.value, enumerable: true, writable: true, configurable: true });
      }
      return { value };
    }
    default:
      return undefined;
  }
}

/**
 * An object key: a bare identifier (`name = …`) stands for itself; otherwise it must be
 * a literal whose value converts to a string. Parenthesised keys (`(var.k) = …`) are
 * expressions and make the object non-literal.
 */
function objectKey(keyNode: SyntaxNode, source: string): string | undefined {
  const children = meaningfulChildren(keyNode);
  if (children.length === 1 && children[0]!.type === "variable_expr") return children[0]!.text;
  const evaluated = evaluateLiteral(keyNode, source);
  if (!evaluated) return undefined;
  const v = evaluated.value;
  return typeof v === "string" || typeof v === "number" || typeof v === "boolean" ? String(v) : undefined;
}
