/** E5's request body (decisions N1, N5): an optional `message` and `vars`. */
import * as v from "valibot";
import { optionalResourceDocument } from "../request/document";
import { WORKSPACE_TYPES } from "../workspaces/input";
import { requireUniqueVarKeys, type VarInput, varInputsOf, varsRelationship } from "../workspaces/vars";

/** Validated E5 input. */
export interface UpgradeInput {
  vars: VarInput[];
  message: string | null;
}

/** An E5 that gives nothing: no vars, no message (a rollout's step, the console's upgrade button). */
export const NO_UPGRADE_INPUT: UpgradeInput = { vars: [], message: null };

/** E5's document: `data.type` `workspaces` (or a synonym, N1), optional `message` and `vars`; an empty body is no vars. */
export const upgradeDocument = optionalResourceDocument({
  types: WORKSPACE_TYPES,
  attributes: { message: v.nullish(v.string("Message must be a string")) },
  relationships: { vars: varsRelationship },
});

/** E5's input from its validated document; two vars with one key and category → 422. */
export function upgradeInputOf({ data }: v.InferOutput<typeof upgradeDocument>): UpgradeInput {
  const vars = varInputsOf(data?.relationships.vars);
  requireUniqueVarKeys(vars);
  return { vars, message: data?.attributes.message ?? null };
}
