/**
 * Consumer of the provisioning queue and of its dead-letter queue (decisions N4, N11):
 * - a malformed message is acknowledged and logged (a poison message never loops);
 * - a transient fault (a thrown error) is retried with
 *   `delaySeconds = min(2^attempts, 300)`; after `max_retries` (5, wrangler.jsonc) the
 *   queue moves the message to `keyway-provision-dlq`;
 * - the dead-letter consumer records the failure (an ingestion → `reg_ingress_failed`,
 *   a run → `errored`);
 * - handlers are idempotent by the message's id field, because delivery is at least once.
 *
 * Dependencies come in as a parameter so tests can inject failures (N11).
 */

import { createDb } from "../../db/client";
import { logError, logInfo } from "../../lib/log";
import { type ProvisionMessage, parseProvisionMessage } from "../messages/provision";
import { failVersionAfterRetries, type IngestFn, ingestModuleVersion } from "../registry/ingestion";
import { notifyRolloutOfRun } from "../rollout-hooks";
import { advanceRollout } from "../rollouts/service";
import {
  defaultRunStepDeps,
  failRunAfterRetries,
  processApplyRun,
  processPlanRuns,
  type RunStepDeps,
} from "../runs/lifecycle";
import { messageRequestId, stampRequestId } from "./request-id";

/** What the consumers need besides the bindings. */
export interface ProvisionConsumerDeps {
  /** Tarball → verdict (N4); src/lib/terraform `ingestModule` in production. */
  ingest: IngestFn;
  /** Clock; defaults to Date.now. */
  now?: () => number;
  /** Overrides of the run steps' dependencies (N7, N11); production uses the defaults. */
  runs?: Partial<RunStepDeps>;
}

/** Bindings the consumers use. */
export type ProvisionConsumerEnv = Pick<
  Env,
  "DB" | "MODULES" | "PROVISION_QUEUE" | "KEYWAY_KEK" | "KEYWAY_HASH_KEY" | "AGENT_POOLS"
>;

/** Send on the provisioning queue (N15's steps). */
const sendOn = (env: Pick<Env, "PROVISION_QUEUE">) => async (message: ProvisionMessage) => {
  await env.PROVISION_QUEUE.send(message, { contentType: "json" });
};

/**
 * The request id a message carries (decision B15): logged with everything done for it, and
 * stamped on the messages sent while handling it.
 */
function messageContext(body: unknown, env: ProvisionConsumerEnv): { requestId: string; env: ProvisionConsumerEnv } {
  const requestId = messageRequestId(body);
  return requestId ? { requestId, env: stampRequestId(env, requestId) } : { requestId: "", env };
}

/** Backoff of a transient failure: 2^attempts seconds, at most 5 minutes. */
export function retryDelaySeconds(attempts: number): number {
  return Math.min(2 ** attempts, 300);
}

/** A message handled on its own (plan-run messages are planned together, processPlanRuns). */
type SingleStepMessage = Exclude<ProvisionMessage, { kind: "plan-run" }>;

/** Run one validated message; throws on a transient fault. */
async function dispatch(
  message: SingleStepMessage,
  env: ProvisionConsumerEnv,
  deps: ProvisionConsumerDeps,
): Promise<unknown> {
  switch (message.kind) {
    case "ingest-module-version":
      return ingestModuleVersion(env, message.versionId, deps.ingest, deps.now);
    case "apply-run": {
      const outcome = await processApplyRun(env, message.runId, defaultRunStepDeps(env, deps.runs));
      // N15: a rollout whose item holds this run takes its next step.
      await notifyRolloutOfRun(createDb(env.DB), message.runId, sendOn(env));
      return outcome;
    }
    case "rollout-step":
      return advanceRollout(env, message.rolloutId, { now: deps.now ?? Date.now, send: sendOn(env) });
  }
}

/** Record the final failure of a message that exhausted its retries. */
async function deadLetter(message: ProvisionMessage, env: ProvisionConsumerEnv): Promise<unknown> {
  switch (message.kind) {
    case "ingest-module-version":
      return { failed: await failVersionAfterRetries(env, message.versionId) };
    case "plan-run":
    case "apply-run": {
      const errored = await failRunAfterRetries(env, message.runId, message.kind);
      await notifyRolloutOfRun(createDb(env.DB), message.runId, sendOn(env));
      return { errored };
    }
    case "rollout-step":
      // Nothing to record: the rollout's items keep their statuses; a resume or confirm steps again.
      return { gaveUp: message.rolloutId };
  }
}

/** A valid message of a batch, with its request id and the env that stamps that id. */
interface ParsedMessage {
  msg: Message<unknown>;
  message: ProvisionMessage;
  requestId: string;
  env: ProvisionConsumerEnv;
}

/**
 * The valid messages of `batch`; each one that is not a provisioning message is
 * acknowledged at once as poison (logged).
 */
function parseBatch(batch: MessageBatch<unknown>, env: ProvisionConsumerEnv): ParsedMessage[] {
  const out: ParsedMessage[] = [];
  for (const msg of batch.messages) {
    const { requestId, env: messageEnv } = messageContext(msg.body, env);
    const parsed = parseProvisionMessage(msg.body);
    if (!parsed.ok) {
      logError(requestId, "poison message acknowledged", `queue=${batch.queue} id=${msg.id}: ${parsed.error}`);
      msg.ack();
      continue;
    }
    out.push({ msg, message: parsed.message, requestId, env: messageEnv });
  }
  return out;
}

/** Retry `msg` with backoff after a transient fault (logged as `what` failed). */
function retryLater(msg: Message<unknown>, requestId: string, what: string, err: unknown): void {
  const delaySeconds = retryDelaySeconds(msg.attempts);
  logError(requestId, `${what} failed (attempt ${msg.attempts}); retrying in ${delaySeconds}s`, err);
  msg.retry({ delaySeconds });
}

/**
 * Hand each message to `handle`: acknowledged when it returns, retried with backoff when
 * it throws (logged as `what` failed).
 */
async function consumeEach<M extends ParsedMessage>(
  messages: readonly M[],
  what: string,
  handle: (m: M) => Promise<void>,
): Promise<void> {
  for (const m of messages) {
    try {
      await handle(m);
      m.msg.ack();
    } catch (err) {
      retryLater(m.msg, m.requestId, what, err);
    }
  }
}

/**
 * Consume a batch of `keyway-provision`. Its `plan-run` messages are planned together
 * (processPlanRuns: two D1 round trips for the whole batch, docs/performance.md), then the other
 * messages are handled one by one in order. Plans and the other steps touch different
 * runs' states, and each step is idempotent, so the order between the two groups does not
 * matter (a queue may reorder deliveries anyway).
 */
export async function handleProvisionBatch(
  batch: MessageBatch<unknown>,
  env: ProvisionConsumerEnv,
  deps: ProvisionConsumerDeps,
): Promise<void> {
  const messages = parseBatch(batch, env);
  const handled = (m: ParsedMessage, result: unknown) =>
    logInfo("queue message handled", {
      queue: batch.queue,
      id: m.msg.id,
      kind: m.message.kind,
      request_id: m.requestId,
      result,
    });

  const plans = messages.filter(
    (m): m is ParsedMessage & { message: { kind: "plan-run" } } => m.message.kind === "plan-run",
  );
  if (plans.length > 0) {
    try {
      const results = await processPlanRuns(
        env,
        plans.map((m) => ({ runId: m.message.runId, deps: defaultRunStepDeps(m.env, deps.runs) })),
      );
      for (const [i, m] of plans.entries()) {
        const result = results[i]!;
        if ("fault" in result) {
          retryLater(m.msg, m.requestId, "queue message", result.fault);
          continue;
        }
        m.msg.ack();
        handled(m, result);
      }
    } catch (err) {
      // A shared D1 batch failed: every plan of the batch is retried (each is idempotent).
      for (const m of plans) retryLater(m.msg, m.requestId, "queue message", err);
    }
  }

  await consumeEach(
    messages.filter((m): m is ParsedMessage & { message: SingleStepMessage } => m.message.kind !== "plan-run"),
    "queue message",
    async (m) => handled(m, await dispatch(m.message, m.env, deps)),
  );
}

/** Consume a batch of `keyway-provision-dlq`: record each failure, then acknowledge. */
export async function handleProvisionDeadLetters(
  batch: MessageBatch<unknown>,
  env: ProvisionConsumerEnv,
): Promise<void> {
  await consumeEach(
    parseBatch(batch, env),
    "dead-letter handling",
    async ({ msg, message, requestId, env: messageEnv }) => {
      const result = await deadLetter(message, messageEnv);
      logError(
        requestId,
        "queue message gave up after its retries",
        JSON.stringify({ id: msg.id, kind: message.kind, result }),
      );
    },
  );
}
