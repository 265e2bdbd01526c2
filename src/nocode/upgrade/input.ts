/** E5's request body (seed §2 E5; decisions N1, N5): an optional `message` and `vars`. */
import { attributeAt, FieldErrors, readDocument, relationshipAt, toManyMembers } from "../no-code-modules/document";
import { WORKSPACE_TYPES } from "../workspaces/input";
import { parseVarMembers, requireUniqueVarKeys, type VarInput } from "../workspaces/vars";

/** Validated E5 input. */
export interface UpgradeInput {
  vars: VarInput[];
  message: string | null;
}

/** An E5 that gives nothing: no vars, no message (a rollout's step, the console's upgrade button). */
export const NO_UPGRADE_INPUT: UpgradeInput = { vars: [], message: null };

/** Read E5's body: `data.type` `workspaces` (or a synonym, N1), optional `message` and `vars`; an empty body is no vars. */
export async function readUpgradeInput(request: Request): Promise<UpgradeInput> {
  const doc = await readDocument(request, WORKSPACE_TYPES, { optional: true });
  const errors = new FieldErrors();
  const message = doc.attributes.message;
  if (message !== undefined && message !== null && typeof message !== "string") errors.add(attributeAt("message"), "Message must be a string");
  const members = toManyMembers(errors, doc.relationships, "vars") ?? [];
  const vars = parseVarMembers(errors, members, relationshipAt("vars"));
  errors.throwIfAny();
  requireUniqueVarKeys(vars);
  return { vars, message: typeof message === "string" ? message : null };
}
