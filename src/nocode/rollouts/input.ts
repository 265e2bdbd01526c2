/** The body of `POST /no-code-modules/:id/upgrade-rollouts` (decision N15), read and checked. */
import { attributeAt, FieldErrors, readDocument, relationshipAt, toManyMembers } from "../no-code-modules/document";

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

function integerAttribute(errors: FieldErrors, attributes: Record<string, unknown>, name: string, fallback: number, min: number, max: number): number {
  const value = attributes[name];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    errors.add(attributeAt(name), `${name} must be an integer from ${min} to ${max}`);
    return fallback;
  }
  return value;
}

/** Read and check a rollout create body (an empty body is every default); throws NocodeError (400/422). */
export async function readRolloutInput(request: Request): Promise<RolloutInput> {
  const doc = await readDocument(request, ["upgrade-rollouts"], { optional: true });
  const errors = new FieldErrors();
  const batchSize = integerAttribute(errors, doc.attributes, "batch-size", 1, 1, MAX_BATCH_SIZE);
  const maxFailures = integerAttribute(errors, doc.attributes, "max-failures", 0, 0, MAX_FAILURES_LIMIT);
  const gate = doc.attributes["auto-confirm"] ?? "never";
  if (!(AUTO_CONFIRM as readonly unknown[]).includes(gate)) errors.add(attributeAt("auto-confirm"), `auto-confirm must be one of ${AUTO_CONFIRM.join(", ")}`);
  const members = toManyMembers(errors, doc.relationships, "workspaces");
  let workspaceIds: string[] | null = null;
  if (members) {
    workspaceIds = [];
    members.forEach((m, i) => {
      if (m.type !== "workspaces" || typeof m.id !== "string") errors.add(`${relationshipAt("workspaces")}/data/${i}`, 'Each member must be {"type": "workspaces", "id": …}');
      else if (workspaceIds!.includes(m.id)) errors.add(`${relationshipAt("workspaces")}/data/${i}`, `Workspace ${m.id} is listed twice`);
      else workspaceIds!.push(m.id);
    });
    if (members.length === 0) errors.add(relationshipAt("workspaces"), "workspaces must list at least one workspace");
    if (members.length > MAX_ROLLOUT_WORKSPACES) errors.add(relationshipAt("workspaces"), `A rollout holds at most ${MAX_ROLLOUT_WORKSPACES} workspaces`);
  }
  errors.throwIfAny();
  return { batchSize, maxFailures, autoConfirm: gate as AutoConfirm, workspaceIds };
}
