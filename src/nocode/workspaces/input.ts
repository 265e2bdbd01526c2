/**
 * E4's request body (seed §4; decisions N1, N5, N6): the `workspaces` document read and
 * checked field by field, before the service sees it. Every field error of the document
 * is reported at once (422 with pointers); rules that need D1 (the project, the module's
 * vars) are the service's.
 */
import { invalidAttribute } from "../errors";
import { attributeAt, FieldErrors, readDocument, relationshipAt, toManyMembers, toOneId } from "../no-code-modules/document";
import { parseVarMembers, requireUniqueVarKeys, type VarInput } from "./vars";

/** Accepted `data.type` of E4/E5 (N1: go-tfe sends `no-code-module-workspace`). */
export const WORKSPACE_TYPES = ["workspaces", "workspace", "no-code-module-workspace"] as const;
/** Accepted project relationship types (N1). */
const PROJECT_TYPES = ["projects", "project"] as const;

/** N6: letters, digits, `-`, `_`; 1–260 characters. */
export const WORKSPACE_NAME_RE = /^[A-Za-z0-9_-]+$/;
export const WORKSPACE_NAME_MAX = 260;

/** N6: the exact text for a taken name (reference §2.3). */
export const nameTaken = () => invalidAttribute("name", "Name has already been taken");

/** Validated E4 input. */
export interface WorkspaceInput {
  name: string;
  description: string;
  autoApply: boolean;
  executionMode: "remote" | "agent";
  executionModeSet: boolean;
  agentPoolId: string | null;
  sourceName: string | null;
  sourceUrl: string | null;
  /** The engine version as given, and the attribute it came in. */
  engineVersion: { value: string | null; attribute: string };
  message: string | null;
  projectId: string | undefined;
  vars: VarInput[];
}

function optionalString(errors: FieldErrors, attrs: Record<string, unknown>, name: string): string | null | undefined {
  const value = attrs[name];
  if (value === undefined) return undefined;
  if (value === null) return null;
  if (typeof value !== "string") {
    errors.add(attributeAt(name), `${name.charAt(0).toUpperCase()}${name.slice(1).replaceAll("-", " ")} must be a string`);
    return undefined;
  }
  return value;
}

/** N6: validate a workspace name (records errors). */
export function checkWorkspaceName(errors: FieldErrors, name: unknown): string | undefined {
  if (name === undefined || name === null || name === "") errors.add(attributeAt("name"), "Name can't be blank");
  else if (typeof name !== "string") errors.add(attributeAt("name"), "Name must be a string");
  else if (name.length > WORKSPACE_NAME_MAX) errors.add(attributeAt("name"), `Name is too long (maximum is ${WORKSPACE_NAME_MAX} characters)`);
  else if (!WORKSPACE_NAME_RE.test(name)) {
    errors.add(attributeAt("name"), "Name may only contain letters, numbers, dashes (-), and underscores (_)");
  } else return name;
  return undefined;
}

/** Read and check E4's body; throws NocodeError (400/422) for a malformed or invalid one. */
export async function readWorkspaceInput(request: Request): Promise<WorkspaceInput> {
  const doc = await readDocument(request, WORKSPACE_TYPES);
  const attrs = doc.attributes;
  const errors = new FieldErrors();
  const name = checkWorkspaceName(errors, attrs.name);
  const description = optionalString(errors, attrs, "description");

  // N1: `auto-apply` (go-tfe) and `auto_apply` (the docs, pytfe).
  const autoApplyKey = attrs["auto-apply"] !== undefined ? "auto-apply" : "auto_apply";
  const autoApply = attrs[autoApplyKey];
  if (autoApply !== undefined && autoApply !== null && typeof autoApply !== "boolean") errors.add(attributeAt(autoApplyKey), "Auto apply must be true or false");

  const mode = attrs["execution-mode"];
  if (mode !== undefined && mode !== null && mode !== "remote" && mode !== "agent") {
    errors.add(attributeAt("execution-mode"), 'Execution mode must be "remote" or "agent" for a no-code workspace');
  }
  const agentPoolId = optionalString(errors, attrs, "agent-pool-id");
  const sourceName = optionalString(errors, attrs, "source-name");
  const sourceUrl = optionalString(errors, attrs, "source-url");
  const message = optionalString(errors, attrs, "message");
  // N1: `terraform-version` is a synonym of `engine-version`.
  const engineAttribute = attrs["engine-version"] !== undefined ? "engine-version" : "terraform-version";
  const engineVersion = optionalString(errors, attrs, engineAttribute);

  const projectId = toOneId(errors, doc.relationships, "project", PROJECT_TYPES);
  const members = toManyMembers(errors, doc.relationships, "vars") ?? [];
  const vars = parseVarMembers(errors, members, relationshipAt("vars"));
  errors.throwIfAny();

  requireUniqueVarKeys(vars);
  return {
    name: name!,
    description: description ?? "",
    autoApply: typeof autoApply === "boolean" ? autoApply : false,
    executionMode: mode === "agent" ? "agent" : "remote",
    executionModeSet: mode === "remote" || mode === "agent",
    agentPoolId: agentPoolId ?? null,
    sourceName: sourceName ?? null,
    sourceUrl: sourceUrl ?? null,
    engineVersion: { value: engineVersion ?? null, attribute: engineAttribute },
    message: message ?? null,
    projectId,
    vars,
  };
}
