/**
 * Variable options of E1 and E2 (decision N5): parsing the `variable-options`
 * relationship and checking the resulting set against the pinned version.
 *
 * - Each entry names a variable (`variable-name`) and its type (`variable-type`; when
 *   omitted, the variable's type in the pinned source, else `string`); `options` may be
 *   absent or `[]` ("free text", reference §3 E1).
 * - When the pin is `ok`, every entry must name a variable of that version: 422
 *   `variable "<name>" not found in source`.
 * - Two entries for one variable → 422; an `id` that is not a set of this module → 422.
 */
import type { ModuleSummary } from "../../lib/terraform/types";
import { unprocessable } from "../errors";
import { type FieldErrors, isObject, memberAttributes, relationshipAt } from "./document";

/** Accepted `type` of an entry (N1: tolerant input). */
const OPTION_TYPES = ["variable-options", "variable-option"];

/** At most this many sets per module and values per set (the 1 MiB body bounds it anyway). */
export const MAX_OPTION_SETS = 500;
export const MAX_OPTIONS_PER_SET = 1000;

/** One parsed entry of the relationship. */
export interface OptionInput {
  /** The set it replaces (E2), if any. */
  id: string | undefined;
  variableName: string;
  variableType: string | undefined;
  options: unknown[];
}

/** Parse the members of `variable-options`; malformed entries record errors. */
export function parseOptionInputs(errors: FieldErrors, members: readonly Record<string, unknown>[]): OptionInput[] {
  const out: OptionInput[] = [];
  if (members.length > MAX_OPTION_SETS) {
    errors.add(relationshipAt("variable-options"), `At most ${MAX_OPTION_SETS} variable-options sets are allowed`);
    return out;
  }
  members.forEach((member, i) => {
    const pointer = `${relationshipAt("variable-options")}/data/${i}`;
    if (member.type !== undefined && (typeof member.type !== "string" || !OPTION_TYPES.includes(member.type))) {
      errors.add(`${pointer}/type`, 'type must be "variable-options"');
      return;
    }
    const id = member.id;
    if (id !== undefined && id !== null && typeof id !== "string") {
      errors.add(`${pointer}/id`, "id must be a string");
      return;
    }
    const attributes = memberAttributes(errors, member, pointer);
    const name = attributes["variable-name"];
    if (typeof name !== "string" || name === "") {
      errors.add(`${pointer}/attributes/variable-name`, "Variable name can't be blank");
      return;
    }
    const type = attributes["variable-type"];
    if (type !== undefined && type !== null && typeof type !== "string") {
      errors.add(`${pointer}/attributes/variable-type`, "Variable type must be a string");
      return;
    }
    const options = attributes.options ?? [];
    if (!Array.isArray(options)) {
      errors.add(`${pointer}/attributes/options`, "Options must be an array");
      return;
    }
    if (options.length > MAX_OPTIONS_PER_SET) {
      errors.add(`${pointer}/attributes/options`, `At most ${MAX_OPTIONS_PER_SET} options are allowed per variable`);
      return;
    }
    if (options.some((o) => isObject(o) || Array.isArray(o))) {
      errors.add(`${pointer}/attributes/options`, "Options must be strings, numbers or booleans");
      return;
    }
    out.push({
      id: typeof id === "string" && id !== "" ? id : undefined,
      variableName: name,
      variableType: typeof type === "string" && type !== "" ? type : undefined,
      options,
    });
  });
  return out;
}

/** A checked set, ready to store. */
export interface CheckedOptionSet {
  id: string | undefined;
  variableName: string;
  variableType: string;
  options: unknown[];
}

/**
 * Check a complete option set (N5) against the pinned version's summary (null when the
 * pin is not `ok`: names are then not checked) and the ids this module owns.
 */
export function checkOptionSets(
  inputs: readonly OptionInput[],
  summary: ModuleSummary | null,
  ownIds: ReadonlySet<string>,
): CheckedOptionSet[] {
  const seen = new Set<string>();
  const seenIds = new Set<string>();
  const out: CheckedOptionSet[] = [];
  for (const input of inputs) {
    if (seen.has(input.variableName)) throw unprocessable(`variable "${input.variableName}" has more than one set of variable options`);
    seen.add(input.variableName);
    if (input.id !== undefined) {
      if (!ownIds.has(input.id) || seenIds.has(input.id)) {
        throw unprocessable(`variable options ${input.id} are not a set of this no-code module`);
      }
      seenIds.add(input.id);
    }
    const variable = summary?.variables.find((v) => v.name === input.variableName);
    if (summary && !variable) throw unprocessable(`variable "${input.variableName}" not found in source`);
    out.push({
      id: input.id,
      variableName: input.variableName,
      variableType: input.variableType ?? variable?.type ?? "string",
      options: input.options,
    });
  }
  return out;
}

/**
 * Whether a workspace value is one of a variable's options (N5). Values are strings (HCP
 * Terraform's var API); an option matches when it is that string, or, for a number or
 * bool option, its text; an HCL value is also compared after parsing (`"a"` matches a).
 */
export function valueMatchesOptions(value: string, hcl: boolean, options: readonly unknown[]): boolean {
  let parsed: unknown;
  let hasParsed = false;
  if (hcl) {
    try {
      parsed = JSON.parse(value);
      hasParsed = true;
    } catch {
      hasParsed = false;
    }
  }
  return options.some((option) => {
    if (typeof option === "string" ? option === value : String(option) === value) return true;
    return hasParsed && (parsed === option || (typeof option !== "string" && String(option) === String(parsed)));
  });
}
