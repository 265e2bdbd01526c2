/**
 * E4's request body (decisions N1, N5, N6): the `workspaces` document, described
 * once for the request kit (../request/) and the OpenAPI document. Every field error of
 * the document is reported at once (422 with pointers); rules that need D1 (the project,
 * the module's vars) are the service's.
 */
import * as v from "valibot";
import { invalidAttribute } from "../errors";
import { attributeLabel, nullableFlag, relatedId, requiredText, resourceDocument, toOne } from "../request/document";
import { validDocument } from "../request/operation";
import { requireUniqueVarKeys, type VarInput, varInputsOf, varsRelationship } from "./vars";

/** Accepted `data.type` of E4/E5 (N1: go-tfe sends `no-code-module-workspace`). */
export const WORKSPACE_TYPES = ["workspaces", "workspace", "no-code-module-workspace"] as const;
/** Accepted project relationship types (N1). */
const PROJECT_TYPES = ["projects", "project"] as const;

/** N6: letters, digits, `-`, `_`; 1–260 characters. */
const WORKSPACE_NAME_RE = /^[A-Za-z0-9_-]+$/;
const WORKSPACE_NAME_MAX = 260;

/** N6: the exact text for a taken name (HCP Terraform's exact error text). */
export const nameTaken = () => invalidAttribute("name", "Name has already been taken");

/** An optional string attribute; null reads as null. */
const optionalString = (attribute: string) => v.nullish(v.string(`${attributeLabel(attribute)} must be a string`));

/** E4's request document. */
export const workspaceDocument = resourceDocument({
  types: WORKSPACE_TYPES,
  attributes: {
    name: v.pipe(
      requiredText("name"),
      v.maxLength(WORKSPACE_NAME_MAX, `Name is too long (maximum is ${WORKSPACE_NAME_MAX} characters)`),
      v.regex(WORKSPACE_NAME_RE, "Name may only contain letters, numbers, dashes (-), and underscores (_)"),
    ),
    description: optionalString("description"),
    // N1: `auto-apply` (go-tfe) and `auto_apply` (the docs, pytfe).
    "auto-apply": nullableFlag("auto-apply"),
    auto_apply: nullableFlag("auto_apply"),
    "execution-mode": v.nullish(
      v.picklist(["remote", "agent"], 'Execution mode must be "remote" or "agent" for a no-code workspace'),
    ),
    "agent-pool-id": optionalString("agent-pool-id"),
    "source-name": optionalString("source-name"),
    "source-url": optionalString("source-url"),
    message: optionalString("message"),
    // N1: `terraform-version` is a synonym of `engine-version`.
    "engine-version": optionalString("engine-version"),
    "terraform-version": optionalString("terraform-version"),
  },
  relationships: {
    project: toOne("project", PROJECT_TYPES),
    vars: varsRelationship,
  },
});

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

/** E4's input from its validated document; two vars with one key and category → 422. */
export function workspaceInputOf({ data }: v.InferOutput<typeof workspaceDocument>): WorkspaceInput {
  const attrs = data.attributes;
  const vars = varInputsOf(data.relationships.vars);
  requireUniqueVarKeys(vars);
  // The synonyms: the first spelling wins when it is present (even null).
  const autoApply = attrs["auto-apply"] !== undefined ? attrs["auto-apply"] : attrs.auto_apply;
  const engineAttribute = attrs["engine-version"] !== undefined ? "engine-version" : "terraform-version";
  const mode = attrs["execution-mode"];
  return {
    name: attrs.name,
    description: attrs.description ?? "",
    autoApply: autoApply ?? false,
    executionMode: mode === "agent" ? "agent" : "remote",
    executionModeSet: mode === "remote" || mode === "agent",
    agentPoolId: attrs["agent-pool-id"] ?? null,
    sourceName: attrs["source-name"] ?? null,
    sourceUrl: attrs["source-url"] ?? null,
    engineVersion: { value: attrs[engineAttribute] ?? null, attribute: engineAttribute },
    message: attrs.message ?? null,
    projectId: relatedId(data.relationships.project),
    vars,
  };
}

/** Read an E4 document built outside a request (the console's form): 422 with pointers as the API answers. */
export function readWorkspaceDocument(document: unknown): WorkspaceInput {
  return workspaceInputOf(validDocument(workspaceDocument, document));
}
