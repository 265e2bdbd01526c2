/**
 * Messages on the provisioning queue (`PROVISION_QUEUE`, queue `keyway-provision`):
 * a versioned, validated union. Messages carry ids only,
 * never values (decision N11): the consumer re-reads everything else from D1/R2. A message
 * sent while serving a request also carries that request's id as `requestId` (stamped by
 * ../queue/request-id.ts, logged by the consumer; not part of any kind's validated fields).
 *
 * To add a kind: add its interface to {@link ProvisionMessage}, a parser to
 * {@link PARSERS} and a case to the consumer's dispatch (src/nocode/queue/consumer.ts).
 */

/** Ingest the uploaded tarball of a registry module version (decision N4). */
export interface IngestModuleVersionMessage {
  v: 1;
  kind: "ingest-module-version";
  /** `modver-…` */
  versionId: string;
}

/** Plan a run (decision N7): `pending` → … → `planned` | `planned_and_finished`. */
export interface PlanRunMessage {
  v: 1;
  kind: "plan-run";
  /** `run-…` */
  runId: string;
}

/** Apply a confirmed run (decision N7): `apply_queued` → `applying` → `applied`. */
export interface ApplyRunMessage {
  v: 1;
  kind: "apply-run";
  /** `run-…` */
  runId: string;
}

/**
 * Advance an upgrade rollout (decision N15): look at its current batch, plan what is
 * pending, confirm what meets its gate, move to the next batch when this one ended.
 * Idempotent by rollout id: every change is a conditional update, so a redelivered or
 * duplicated message changes nothing twice.
 */
export interface RolloutStepMessage {
  v: 1;
  kind: "rollout-step";
  /** `rollout-…` */
  rolloutId: string;
}

/** Every message the provisioning queue carries. */
export type ProvisionMessage = IngestModuleVersionMessage | PlanRunMessage | ApplyRunMessage | RolloutStepMessage;

/** Every message kind. */
export type ProvisionMessageKind = ProvisionMessage["kind"];

/** The current message format version. */
export const PROVISION_MESSAGE_VERSION = 1;

/** Result of {@link parseProvisionMessage}. */
export type ParsedProvisionMessage = { ok: true; message: ProvisionMessage } | { ok: false; error: string };

/** Ids are `<prefix>-` + 16 alphanumerics (HCP Terraform's id formats). */
function idField(body: Record<string, unknown>, field: string, prefix: string): string | { error: string } {
  const value = body[field];
  // lint-regex: `prefix` is a constant id prefix; the pattern is anchored with a fixed-length tail.
  if (typeof value !== "string" || !new RegExp(`^${prefix}-[A-Za-z0-9]{16}$`).test(value)) {
    return { error: `field "${field}" must be a ${prefix}- id` };
  }
  return value;
}

/** One parser per kind: the validated message, or why the body is malformed. */
const PARSERS: {
  [K in ProvisionMessageKind]: (body: Record<string, unknown>) => ProvisionMessage | { error: string };
} = {
  "ingest-module-version": (body) => {
    const versionId = idField(body, "versionId", "modver");
    if (typeof versionId !== "string") return versionId;
    return { v: 1, kind: "ingest-module-version", versionId };
  },
  "plan-run": (body) => {
    const runId = idField(body, "runId", "run");
    if (typeof runId !== "string") return runId;
    return { v: 1, kind: "plan-run", runId };
  },
  "apply-run": (body) => {
    const runId = idField(body, "runId", "run");
    if (typeof runId !== "string") return runId;
    return { v: 1, kind: "apply-run", runId };
  },
  "rollout-step": (body) => {
    const rolloutId = idField(body, "rolloutId", "rollout");
    if (typeof rolloutId !== "string") return rolloutId;
    return { v: 1, kind: "rollout-step", rolloutId };
  },
};

/**
 * Validate a message body. Anything that is not exactly a known kind of the current
 * version is malformed: the consumer acknowledges and logs it (a poison message must
 * never loop).
 */
export function parseProvisionMessage(body: unknown): ParsedProvisionMessage {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    return { ok: false, error: "message body is not an object" };
  }
  const record = body as Record<string, unknown>;
  if (record.v !== PROVISION_MESSAGE_VERSION)
    return { ok: false, error: `unsupported message version ${JSON.stringify(record.v)}` };
  const kind = record.kind;
  if (typeof kind !== "string" || !Object.hasOwn(PARSERS, kind)) {
    return { ok: false, error: `unknown message kind ${JSON.stringify(kind)}` };
  }
  const parsed = PARSERS[kind as ProvisionMessageKind](record);
  return "error" in parsed ? { ok: false, error: parsed.error } : { ok: true, message: parsed };
}

/** The message that queues ingestion of a module version. */
export function ingestModuleVersionMessage(versionId: string): IngestModuleVersionMessage {
  return { v: 1, kind: "ingest-module-version", versionId };
}

/** The message that queues the plan of a run (N7). */
export function planRunMessage(runId: string): PlanRunMessage {
  return { v: 1, kind: "plan-run", runId };
}

/** The message that queues the apply of a run (N7). */
export function applyRunMessage(runId: string): ApplyRunMessage {
  return { v: 1, kind: "apply-run", runId };
}

/** The message that advances an upgrade rollout (N15). */
export function rolloutStepMessage(rolloutId: string): RolloutStepMessage {
  return { v: 1, kind: "rollout-step", rolloutId };
}

/** The part of the Worker's env that sends (typed here without the workerd globals, for Node tests). */
interface ProvisionQueueEnv {
  PROVISION_QUEUE: { send(body: ProvisionMessage, options: { contentType: "json" }): Promise<unknown> };
}

/** Put a message on the provisioning queue, as JSON (the consumer reads `message.body`). */
export async function sendProvisionMessage(env: ProvisionQueueEnv, message: ProvisionMessage): Promise<void> {
  await env.PROVISION_QUEUE.send(message, { contentType: "json" });
}
