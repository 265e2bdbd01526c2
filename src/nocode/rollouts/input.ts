/** The body of `POST /no-code-modules/:id/upgrade-rollouts` (decision N15), described for the request kit. */
import * as v from "valibot";
import { optionalResourceDocument, relationshipMember, reportedHere, toMany } from "../request/document";
import { validDocument } from "../request/operation";

/** The `auto-confirm` gates (N15). */
export const AUTO_CONFIRM = ["never", "no-destructions", "no-changes"] as const;
export type AutoConfirm = (typeof AUTO_CONFIRM)[number];

/** Bounds (no unbounded work per request or per step). */
export const MAX_BATCH_SIZE = 100;
export const MAX_ROLLOUT_WORKSPACES = 1000;
const MAX_FAILURES_LIMIT = 100_000;

/** Validated create input. */
export interface RolloutInput {
  batchSize: number;
  autoConfirm: AutoConfirm;
  maxFailures: number;
  /** The workspaces listed, or null: every workspace of the module with an upgrade available. */
  workspaceIds: string[] | null;
}

/** An integer attribute from `min` to `max`; absent or null: the default. */
function integerAttribute(name: string, min: number, max: number) {
  const message = `${name} must be an integer from ${min} to ${max}`;
  return v.nullish(v.pipe(v.number(message), v.integer(message), v.minValue(min, message), v.maxValue(max, message)));
}

const MEMBER = 'Each member must be {"type": "workspaces", "id": …}';

/** A listed workspace: `{"type": "workspaces", "id"}` exactly (one error at the member otherwise). */
const workspaceMember = reportedHere(
  relationshipMember("workspaces", { type: v.literal("workspaces", MEMBER), id: v.string(MEMBER) }, () => MEMBER),
);

/** `workspaces`: at least one, at most MAX_ROLLOUT_WORKSPACES, none twice. */
const workspacesRelationship = v.pipe(
  toMany("workspaces", workspaceMember, {
    count: MAX_ROLLOUT_WORKSPACES,
    message: `A rollout holds at most ${MAX_ROLLOUT_WORKSPACES} workspaces`,
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed || dataset.value === undefined) return;
    const listed = dataset.value.data;
    if (listed.length === 0) addIssue({ message: "workspaces must list at least one workspace" });
    const seen = new Set<string>();
    listed.forEach((member, i) => {
      if (seen.has(member.id)) {
        addIssue({
          message: `Workspace ${member.id} is listed twice`,
          path: [
            {
              type: "object",
              origin: "value",
              input: dataset.value as Record<string, unknown>,
              key: "data",
              value: listed,
            },
            { type: "array", origin: "value", input: listed, key: i, value: member },
          ],
        });
      }
      seen.add(member.id);
    });
  }),
);

/** The create document (an empty body is every default). */
export const rolloutDocument = optionalResourceDocument({
  types: ["upgrade-rollouts"],
  attributes: {
    "batch-size": integerAttribute("batch-size", 1, MAX_BATCH_SIZE),
    "max-failures": integerAttribute("max-failures", 0, MAX_FAILURES_LIMIT),
    "auto-confirm": v.nullish(v.picklist(AUTO_CONFIRM, `auto-confirm must be one of ${AUTO_CONFIRM.join(", ")}`)),
  },
  relationships: { workspaces: workspacesRelationship },
});

/** The input of a validated create document, its defaults filled in. */
export function rolloutInputOf({ data }: v.InferOutput<typeof rolloutDocument>): RolloutInput {
  const attributes = data?.attributes;
  const listed = data?.relationships.workspaces;
  return {
    batchSize: attributes?.["batch-size"] ?? 1,
    maxFailures: attributes?.["max-failures"] ?? 0,
    autoConfirm: attributes?.["auto-confirm"] ?? "never",
    workspaceIds: listed ? listed.data.map((member) => member.id) : null,
  };
}

/** Read a create document built outside a request (the console's form): 422 with pointers as the API answers. */
export function readRolloutDocument(document: unknown): RolloutInput {
  return rolloutInputOf(validDocument(rolloutDocument, document));
}
