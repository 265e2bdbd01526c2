/**
 * Extraction from one `.tf` file: the top-level blocks that ingestion and the planner
 * care about. Module-level concerns (duplicates across files, submodules) are in
 * `summarize-module.ts`.
 */

import {
  attributeValue,
  blockParts,
  blockType,
  collectReferences,
  lineOf,
  newReferenceSets,
  renderCanonical,
  syntaxProblems,
  toReferences,
} from "./cst";
import { evaluateLiteral, meaningfulChildren, objectElemParts, stringValue } from "./hcl-values";
import type { TerraformParser } from "./parser";
import type { SyntaxNode } from "./syntax-tree";
import { HclNestingError, MAX_HCL_NESTING, toSyntaxTree } from "./syntax-tree";
import type {
  ModuleCallSummary,
  OutputSummary,
  ProviderConfig,
  References,
  RequiredProvider,
  ResourceSummary,
  SummaryError,
  VariableDefault,
  VariableSummary,
} from "./types";

/** A module call before its local source is resolved. */
export type FileModuleCall = Omit<ModuleCallSummary, "module">;

/** A `locals` entry. */
export interface FileLocal {
  name: string;
  line: number;
  references: References;
}

/** Everything read from one file. */
export interface FileContents {
  file: string;
  requiredVersions: string[];
  variables: VariableSummary[];
  outputs: OutputSummary[];
  requiredProviders: RequiredProvider[];
  providerConfigs: ProviderConfig[];
  resources: ResourceSummary[];
  dataSources: ResourceSummary[];
  moduleCalls: FileModuleCall[];
  locals: FileLocal[];
  /** Syntax errors only; duplicates are found across files. */
  errors: SummaryError[];
}

/** Source text of an attribute's expression, or null when the attribute is absent. */
function expressionText(attribute: SyntaxNode | undefined): string | null {
  if (!attribute) return null;
  return attributeValue(attribute)?.text ?? null;
}

/** A literal string attribute; a non-literal one as its source text; null when absent. */
function stringOrSource(attribute: SyntaxNode | undefined, source: string): string | null {
  const value = attribute && attributeValue(attribute);
  if (!value) return null;
  return stringValue(value, source) ?? value.text;
}

/** A literal string attribute, else null. */
function literalString(attribute: SyntaxNode | undefined, source: string): string | null {
  const value = attribute && attributeValue(attribute);
  return value ? (stringValue(value, source) ?? null) : null;
}

/** A literal bool attribute, else the fallback (Terraform requires literals here). */
function literalBool(attribute: SyntaxNode | undefined, source: string, fallback: boolean): boolean {
  const value = attribute && attributeValue(attribute);
  const evaluated = value ? evaluateLiteral(value, source) : undefined;
  return evaluated && typeof evaluated.value === "boolean" ? evaluated.value : fallback;
}

function readVariable(block: SyntaxNode, file: string, source: string): VariableSummary | null {
  const parts = blockParts(block, source);
  const name = parts.labels[0];
  if (name === undefined) return null;
  const defaultAttr = parts.attributes.get("default");
  let defaultValue: VariableDefault | null = null;
  if (defaultAttr) {
    const value = attributeValue(defaultAttr);
    const evaluated = value ? evaluateLiteral(value, source) : undefined;
    defaultValue = evaluated
      ? { literal: true, value: evaluated.value }
      : { literal: false, source: value?.text ?? "" };
  }
  const validations = parts.blocks
    .filter((b) => blockType(b) === "validation")
    .map((b) => {
      const v = blockParts(b, source);
      return {
        condition: expressionText(v.attributes.get("condition")) ?? "",
        errorMessage: expressionText(v.attributes.get("error_message")) ?? "",
      };
    });
  return {
    name,
    file,
    line: lineOf(block),
    type: expressionText(parts.attributes.get("type")),
    default: defaultValue,
    required: defaultAttr === undefined,
    description: stringOrSource(parts.attributes.get("description"), source),
    sensitive: literalBool(parts.attributes.get("sensitive"), source, false),
    nullable: literalBool(parts.attributes.get("nullable"), source, true),
    validations,
  };
}

function readOutput(block: SyntaxNode, file: string, source: string): OutputSummary | null {
  const parts = blockParts(block, source);
  const name = parts.labels[0];
  if (name === undefined) return null;
  return {
    name,
    file,
    line: lineOf(block),
    description: stringOrSource(parts.attributes.get("description"), source),
    sensitive: literalBool(parts.attributes.get("sensitive"), source, false),
  };
}

function readResource(
  block: SyntaxNode,
  file: string,
  source: string,
  mode: "managed" | "data",
): ResourceSummary | null {
  const parts = blockParts(block, source);
  const [type, name] = parts.labels;
  if (type === undefined || name === undefined) return null;
  const refs = newReferenceSets();
  const normalizedSource = renderCanonical(block, source, refs);
  return {
    address: mode === "data" ? `data.${type}.${name}` : `${type}.${name}`,
    mode,
    type,
    name,
    file,
    line: lineOf(block),
    hasCount: parts.attributes.has("count"),
    hasForEach: parts.attributes.has("for_each"),
    references: toReferences(refs),
    normalizedSource,
  };
}

function readModuleCall(block: SyntaxNode, file: string, source: string): FileModuleCall | null {
  const parts = blockParts(block, source);
  const name = parts.labels[0];
  if (name === undefined) return null;
  const refs = newReferenceSets();
  const normalizedSource = renderCanonical(block, source, refs);
  const moduleSource = literalString(parts.attributes.get("source"), source);
  return {
    name,
    address: `module.${name}`,
    file,
    line: lineOf(block),
    source: moduleSource,
    version: literalString(parts.attributes.get("version"), source),
    hasCount: parts.attributes.has("count"),
    hasForEach: parts.attributes.has("for_each"),
    references: toReferences(refs),
    normalizedSource,
    local: moduleSource !== null && (moduleSource.startsWith("./") || moduleSource.startsWith("../")),
  };
}

function readProvider(block: SyntaxNode, file: string, source: string): ProviderConfig | null {
  const parts = blockParts(block, source);
  const name = parts.labels[0];
  if (name === undefined) return null;
  return { name, file, line: lineOf(block), alias: literalString(parts.attributes.get("alias"), source) };
}

/**
 * `required_providers` entries: `aws = { source = "hashicorp/aws", version = "~> 5.0" }`,
 * or the legacy `aws = "~> 2.0"` (a version). `configuration_aliases` holds references
 * (`[aws.east]`), so it is read as the items' source text.
 */
function readRequiredProviders(block: SyntaxNode, file: string, source: string): RequiredProvider[] {
  const out: RequiredProvider[] = [];
  for (const [name, attribute] of blockParts(block, source).attributes) {
    const value = attributeValue(attribute);
    const entry: RequiredProvider = {
      name,
      file,
      line: lineOf(attribute),
      source: null,
      version: null,
      configurationAliases: [],
    };
    const legacy = value ? stringValue(value, source) : undefined;
    if (legacy !== undefined) entry.version = legacy;
    const object = value && findObject(value);
    if (object) {
      for (const elem of object.namedChildren) {
        if (elem.type !== "object_elem") continue;
        const parts = objectElemParts(elem);
        if (!parts) continue;
        const { key, val } = parts;
        const keyName = key.text.replace(/^"|"$/g, "");
        if (keyName === "source") entry.source = stringValue(val, source) ?? val.text;
        else if (keyName === "version") entry.version = stringValue(val, source) ?? val.text;
        else if (keyName === "configuration_aliases") {
          const tuple = findTuple(val);
          entry.configurationAliases = tuple
            ? tuple.namedChildren.filter((c) => c.type === "expression").map((c) => c.text)
            : [val.text];
        }
      }
    }
    out.push(entry);
  }
  return out;
}

/** Descends `expression > collection_value > object`. */
function findObject(node: SyntaxNode): SyntaxNode | null {
  let current: SyntaxNode | undefined = node;
  while (current && current.type !== "object") {
    const children = meaningfulChildren(current);
    current = children.length === 1 ? children[0] : undefined;
  }
  return current ?? null;
}

/** Descends `expression > collection_value > tuple`. */
function findTuple(node: SyntaxNode): SyntaxNode | null {
  let current: SyntaxNode | undefined = node;
  while (current && current.type !== "tuple") {
    const children = meaningfulChildren(current);
    current = children.length === 1 ? children[0] : undefined;
  }
  return current ?? null;
}

/**
 * Parses and reads one file. Never throws for bad source: syntax errors are returned in
 * `errors`, and whatever parsed is still extracted (tree-sitter recovers locally).
 *
 * @param file the file's archive path, used in locations and messages.
 */
export function readTerraformFile(parser: TerraformParser, file: string, source: string): FileContents {
  const contents: FileContents = {
    file,
    requiredVersions: [],
    variables: [],
    outputs: [],
    requiredProviders: [],
    providerConfigs: [],
    resources: [],
    dataSources: [],
    moduleCalls: [],
    locals: [],
    errors: [],
  };
  // Copy the tree and free tree-sitter's memory at once: extraction works on the copy.
  const tree = parser.parse(source);
  let root: ReturnType<typeof toSyntaxTree>;
  try {
    root = toSyntaxTree(tree, source);
  } catch (err) {
    // B9: a file nested deeper than the bound is refused whole, before any walker runs.
    if (!(err instanceof HclNestingError)) throw err;
    const message = `${file} at line ${err.line}: blocks and expressions nested more than ${MAX_HCL_NESTING} levels deep (HCL nesting limit)`;
    contents.errors.push({ kind: "limit", file, line: err.line, message });
    return contents;
  } finally {
    tree.delete();
  }
  for (const problem of syntaxProblems(root)) {
    contents.errors.push({
      kind: "syntax",
      file,
      line: problem.line,
      message: `syntax error in ${file} at line ${problem.line}: ${problem.detail}`,
    });
  }
  const body = root.children.find((c) => c.type === "body");
  for (const block of body?.children ?? []) {
    if (block.type !== "block") continue;
    switch (blockType(block)) {
      case "variable": {
        const v = readVariable(block, file, source);
        if (v) contents.variables.push(v);
        break;
      }
      case "output": {
        const o = readOutput(block, file, source);
        if (o) contents.outputs.push(o);
        break;
      }
      case "resource": {
        const r = readResource(block, file, source, "managed");
        if (r) contents.resources.push(r);
        break;
      }
      case "data": {
        const d = readResource(block, file, source, "data");
        if (d) contents.dataSources.push(d);
        break;
      }
      case "module": {
        const m = readModuleCall(block, file, source);
        if (m) contents.moduleCalls.push(m);
        break;
      }
      case "provider": {
        const p = readProvider(block, file, source);
        if (p) contents.providerConfigs.push(p);
        break;
      }
      case "locals":
        for (const [name, attribute] of blockParts(block, source).attributes) {
          const refs = newReferenceSets();
          collectReferences(attribute, refs);
          contents.locals.push({ name, line: lineOf(attribute), references: toReferences(refs) });
        }
        break;
      case "terraform": {
        const parts = blockParts(block, source);
        const requiredVersion = literalString(parts.attributes.get("required_version"), source);
        if (requiredVersion !== null) contents.requiredVersions.push(requiredVersion);
        for (const nested of parts.blocks) {
          if (blockType(nested) === "required_providers") {
            contents.requiredProviders.push(...readRequiredProviders(nested, file, source));
          }
        }
        break;
      }
      // moved, import, removed, check, ephemeral…: not part of the model.
    }
  }
  return contents;
}
