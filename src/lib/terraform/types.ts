/**
 * The model that ingestion (decision N4) extracts from a module version's Terraform
 * source, and that the planner (N7) and the design checks (N12) read. Plain data: it
 * survives JSON and structured clone, so it can be stored in D1/R2 or sent over RPC.
 */

/** A JSON value, as a literal HCL expression evaluates to. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** Where something is declared: archive path of the file, 1-based line. */
export interface SourceLocation {
  file: string;
  line: number;
}

/** The `var.X` and `local.Y` names an expression or block mentions, sorted, unique. */
export interface References {
  variables: string[];
  locals: string[];
}

/**
 * A variable's `default`. Literal expressions (strings, heredocs without interpolation,
 * numbers, bools, null, lists and objects of those) are evaluated; anything else (a
 * function call, a reference) is kept as its source text.
 */
export type VariableDefault = { literal: true; value: JsonValue } | { literal: false; source: string };

/** One `validation` block of a variable, as source text. */
export interface VariableValidation {
  condition: string;
  errorMessage: string;
}

/** A `variable` block. */
export interface VariableSummary extends SourceLocation {
  name: string;
  /** The type constraint's source text, e.g. `list(object({ name = string }))`; null when absent. */
  type: string | null;
  /** Null when there is no `default` attribute (then `required` is true). */
  default: VariableDefault | null;
  /** True when there is no `default` (note: `default = null` makes a variable optional). */
  required: boolean;
  /** Evaluated when literal, else the expression's source text; null when absent. */
  description: string | null;
  sensitive: boolean;
  /** Terraform's default is true. */
  nullable: boolean;
  validations: VariableValidation[];
}

/** An `output` block. */
export interface OutputSummary extends SourceLocation {
  name: string;
  description: string | null;
  sensitive: boolean;
}

/** An entry of `terraform { required_providers { … } }`. */
export interface RequiredProvider extends SourceLocation {
  /** Local name, e.g. `aws`. */
  name: string;
  /** e.g. `hashicorp/aws`; null in the legacy string form or when absent. */
  source: string | null;
  /** Version constraint, e.g. `>= 5.0`; null when absent. */
  version: string | null;
  /** `configuration_aliases` as written, e.g. `["aws.east"]`. */
  configurationAliases: string[];
}

/** A `provider` block. */
export interface ProviderConfig extends SourceLocation {
  name: string;
  alias: string | null;
}

/** A `resource` or `data` block. */
export interface ResourceSummary extends SourceLocation {
  /** `type.name` for resources, `data.type.name` for data sources. */
  address: string;
  mode: "managed" | "data";
  type: string;
  name: string;
  hasCount: boolean;
  hasForEach: boolean;
  /** Everything the block mentions, nested blocks and meta-arguments included. */
  references: References;
  /**
   * The block's source with comments removed and insignificant whitespace canonicalised
   * (one item per line, single spaces, canonical separators in collections), for the
   * planner's "differs ignoring comments and whitespace" (N7). String and heredoc
   * contents are kept exactly.
   */
  normalizedSource: string;
}

/** A `module` block. */
export interface ModuleCallSummary extends SourceLocation {
  name: string;
  /** `module.<name>`. */
  address: string;
  /** The `source` string; null when absent or not a literal. */
  source: string | null;
  version: string | null;
  hasCount: boolean;
  hasForEach: boolean;
  /** What the call's arguments mention. */
  references: References;
  /** See {@link ResourceSummary.normalizedSource}. */
  normalizedSource: string;
  /** True for a local path source (`./…` or `../…`). */
  local: boolean;
  /**
   * For a local source found in the same archive: the submodule's summary, so the planner
   * can expand `module.<name>.<address>`. Null otherwise (remote source, or a local path
   * that is missing or outside the archive: see the summary's `warnings`).
   */
  module: ModuleSummary | null;
}

/** A problem that makes a version fail ingestion (N4). */
export interface SummaryError extends SourceLocation {
  /** `limit`: a bound of decision B9 (HCL nesting, module-call depth). */
  kind: "syntax" | "duplicate-variable" | "duplicate-output" | "limit";
  /** User-facing, e.g. `syntax error in main.tf at line 12`. */
  message: string;
}

/** Everything extracted from one module directory. */
export interface ModuleSummary {
  /** Directory inside the archive: `` for the root, `modules/vpc` for a submodule. */
  path: string;
  /** The `.tf` files read, archive paths, in Terraform's (lexical) order. */
  files: string[];
  /** `required_version` constraints of `terraform` blocks. */
  requiredVersions: string[];
  variables: VariableSummary[];
  outputs: OutputSummary[];
  requiredProviders: RequiredProvider[];
  providerConfigs: ProviderConfig[];
  resources: ResourceSummary[];
  dataSources: ResourceSummary[];
  moduleCalls: ModuleCallSummary[];
  /** Local value name → what its expression mentions (to resolve references through locals). */
  locals: Record<string, References>;
  /** Syntax errors and duplicate variable/output names of this directory (not of submodules). */
  errors: SummaryError[];
  /** Things worth telling the publisher that do not fail ingestion. */
  warnings: string[];
}
