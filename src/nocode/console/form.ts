/**
 * The provision form of the console (N14): generated from the pinned version's
 * variables and the module's variable options, turned into exactly the JSON:API document
 * E4 reads, so E4's own service checks it (nothing is validated twice); E4's refusals
 * come back as messages beside the field they concern, in words a person understands.
 * Pure: tested in Node.
 */
import type { JsonValue, ModuleSummary, VariableSummary } from "../../lib/terraform/types";

/** One field of the form, as rendered. */
export interface FormField {
  /** The form control's name: `name`, or `var.<variable>`. */
  name: string;
  variable: string;
  label: string;
  /** Type constraint's source text, as a hint (`string`, `number`, `list(string)`…). */
  type: string;
  description: string | null;
  required: boolean;
  sensitive: boolean;
  /** Non-empty: render a select. */
  options: string[];
  /** The default as text (never for a sensitive variable); "" when none. */
  defaultText: string;
  /** Whether the value is sent as HCL (every type but `string`). */
  hcl: boolean;
}

/** What the person typed, by control name (sensitive values are never echoed back). */
export type FormValues = Record<string, string>;

/** Field errors by control name, plus errors that belong to no field. */
export interface FormErrors {
  fields: Record<string, string>;
  general: string[];
}

/** Text of a literal value as a person types it: strings bare, the rest as JSON (HCL accepts it). */
export function valueText(value: JsonValue | unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** Whether a variable's values are sent as HCL: everything but plain strings (and untyped variables). */
function isHcl(variable: VariableSummary): boolean {
  const type = variable.type?.replace(/\s/g, "") ?? "";
  return type !== "" && type !== "string" && type !== "any";
}

/** The form's variable fields, in the version's declaration order. */
export function formFields(
  summary: Pick<ModuleSummary, "variables">,
  options: readonly { variableName: string; options: readonly unknown[] }[],
): FormField[] {
  const byName = new Map(options.map((o) => [o.variableName, o.options]));
  return summary.variables.map((v) => {
    const literalDefault = v.default?.literal ? v.default.value : undefined;
    const defaultText =
      v.sensitive || v.default === null
        ? ""
        : v.default.literal
          ? literalDefault === null
            ? ""
            : valueText(literalDefault)
          : "";
    return {
      name: `var.${v.name}`,
      variable: v.name,
      label: v.name,
      type: v.type ?? "any",
      description: v.description,
      required: v.required,
      sensitive: v.sensitive,
      options: (byName.get(v.name) ?? []).map(valueText),
      defaultText,
      hcl: isHcl(v),
    };
  });
}

/**
 * E4's document for the form: the workspace name, `auto-apply` (the checkbox), and one `engine` var per variable the
 * person gave a value that is not simply the default (so a workspace keeps following the
 * version's defaults until someone chooses otherwise). An empty field is not sent: E4
 * then refuses a required variable without a value.
 */
export function provisionDocument(fields: readonly FormField[], values: FormValues): unknown {
  const vars = [];
  for (const f of fields) {
    const value = values[f.name] ?? "";
    if (value === "") continue;
    if (!f.sensitive && value === f.defaultText) continue;
    vars.push({
      type: "vars",
      attributes: { key: f.variable, value, category: "engine", hcl: f.hcl, sensitive: f.sensitive },
    });
  }
  const attributes: Record<string, unknown> = { name: values.name ?? "", "auto-apply": values["auto-apply"] === "on" };
  if (values.description) attributes.description = values.description;
  return { data: { type: "workspaces", attributes, relationships: { vars: { data: vars } } } };
}

/** What formErrors reads of a NocodeError (its detail, pointer and further errors). */
export interface RefusalDetail {
  detail?: string;
  pointer?: string;
  more: readonly RefusalDetail[];
}

/** The variable names a detail string quotes (`variable "a"`, `variables "a", "b"`). */
function quotedVariables(detail: string): string[] {
  const m = /variables? ((?:"[^"\n]{1,200}"(?:, )?)+)/.exec(detail);
  if (!m) return [];
  return [...m[1]!.matchAll(/"([^"\n]{1,200})"/g)].map((x) => x[1]!);
}

/**
 * Where each of E4's refusals belongs on the form, and how to say it. `sentVars` is the
 * `vars` relationship as sent (a pointer into it names the variable). Unknown shapes
 * become general errors with E4's own detail.
 */
export function formErrors(
  error: RefusalDetail,
  fields: readonly FormField[],
  sentVars: readonly string[],
): FormErrors {
  const out: FormErrors = { fields: {}, general: [] };
  const byVariable = new Map(fields.map((f) => [f.variable, f]));
  for (const e of [error, ...error.more]) {
    const detail = e.detail ?? "";
    const pointer = e.pointer ?? "";
    if (pointer === "/data/attributes/name") {
      out.fields.name = /taken/i.test(detail)
        ? "A workspace with this name already exists in the organization. Choose another name."
        : /blank/i.test(detail)
          ? "Give the workspace a name."
          : /only contain/i.test(detail)
            ? "Use only letters, numbers, dashes (-) and underscores (_), without spaces."
            : detail;
      continue;
    }
    const varPointer = /^\/data\/relationships\/vars\/data\/(\d+)\//.exec(pointer);
    if (varPointer) {
      const variable = sentVars[Number(varPointer[1])];
      const field = variable !== undefined ? byVariable.get(variable) : undefined;
      if (field) {
        out.fields[field.name] = /hcl|nest|pars/i.test(detail)
          ? `This is not a valid ${field.type} value: ${detail}`
          : detail;
        continue;
      }
    }
    const named = quotedVariables(detail)
      .map((n) => byVariable.get(n))
      .filter((f): f is FormField => f !== undefined);
    if (named.length > 0) {
      for (const field of named) {
        if (/must be one of/i.test(detail))
          out.fields[field.name] = `Choose one of the allowed values: ${field.options.join(", ")}.`;
        else if (/missing required/i.test(detail))
          out.fields[field.name] = `A value is required: this module version has no default for ${field.variable}.`;
        else out.fields[field.name] = detail;
      }
      continue;
    }
    out.general.push(detail || "The workspace could not be created.");
  }
  return out;
}
