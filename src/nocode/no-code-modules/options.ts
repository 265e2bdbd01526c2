/**
 * Variable options of E1 and E2 (decision N5): parsing the `variable-options`
 * relationship and checking the resulting set against the pinned version.
 *
 * - Each entry names a variable (`variable-name`) and its type (`variable-type`; when
 *   omitted, the variable's type in the pinned source, else `string`); `options` may be
 *   absent or `[]` ("free text", HCP Terraform's no-code provisioning API (E1)).
 * - When the pin is `ok`, every entry must name a variable of that version: 422
 *   `variable "<name>" not found in source`.
 * - Two entries for one variable → 422; an `id` that is not a set of this module → 422.
 */
import * as v from "valibot";
import type { ModuleSummary } from "../../lib/terraform/types";
import { unprocessable } from "../errors";
import { members, relationshipMember, reportedHere, toMany } from "../request/document";

/** Accepted `type` of an entry (N1: tolerant input). */
const OPTION_TYPES = ["variable-options", "variable-option"] as const;

/** At most this many sets per module and values per set (the 1 MiB body bounds it anyway). */
export const MAX_OPTION_SETS = 500;
export const MAX_OPTIONS_PER_SET = 1000;

const NAME_BLANK = "Variable name can't be blank";

/**
 * An entry of `variable-options`: `variable-name` required, `variable-type` and `options`
 * optional (null reads as absent; `options` are strings, numbers, booleans or null, all
 * reported at `…/attributes/options`).
 */
const optionSetMember = relationshipMember(
  "variable-options",
  {
    type: v.optional(v.picklist(OPTION_TYPES, 'type must be "variable-options"')),
    id: v.nullish(v.string("id must be a string")),
    attributes: v.nullish(
      members(
        {
          "variable-name": v.pipe(v.string(NAME_BLANK), v.nonEmpty(NAME_BLANK)),
          "variable-type": v.nullish(v.string("Variable type must be a string")),
          options: v.nullish(
            reportedHere(
              v.pipe(
                v.array(
                  v.union(
                    [v.string(), v.number(), v.boolean(), v.null()],
                    "Options must be strings, numbers or booleans",
                  ),
                  "Options must be an array",
                ),
                v.maxLength(MAX_OPTIONS_PER_SET, `At most ${MAX_OPTIONS_PER_SET} options are allowed per variable`),
              ),
            ),
            [],
          ),
        },
        "attributes must be an object",
        () => NAME_BLANK,
      ),
      {} as never,
    ),
  },
  () => 'type must be "variable-options"',
);

/** The `variable-options` relationship of E1 and E2 (absent: E2 leaves the sets alone). */
export const variableOptionsRelationship = toMany("variable-options", optionSetMember, {
  count: MAX_OPTION_SETS,
  message: `At most ${MAX_OPTION_SETS} variable-options sets are allowed`,
});

/** One entry of the relationship, read. */
export interface OptionInput {
  /** The set it replaces (E2), if any. */
  id: string | undefined;
  variableName: string;
  variableType: string | undefined;
  options: unknown[];
}

/** The entries of a validated `variable-options` relationship. */
export function optionInputsOf(
  relationship: v.InferOutput<typeof variableOptionsRelationship>,
): OptionInput[] | undefined {
  return relationship?.data.map((member) => ({
    id: member.id ? member.id : undefined,
    variableName: member.attributes["variable-name"],
    variableType: member.attributes["variable-type"] ? member.attributes["variable-type"] : undefined,
    options: member.attributes.options,
  }));
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
    if (seen.has(input.variableName))
      throw unprocessable(`variable "${input.variableName}" has more than one set of variable options`);
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
