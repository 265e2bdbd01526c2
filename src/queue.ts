/**
 * The Queue consumer (decision N11): one entry point, routed by queue name.
 */
import { createDb } from "./db/client";
import { guardEnv } from "./db/d1-guard";
import { logError } from "./lib/log";
import { ingestModule } from "./lib/terraform";
import { handleProvisionBatch, handleProvisionDeadLetters, type ProvisionConsumerDeps } from "./nocode/queue/consumer";
import { handleKrlRebuildBatch, KRL_REBUILD_QUEUE_NAME } from "./ssh/revocation/krl";

export const PROVISION_QUEUE_NAME = "keyway-provision";
export const PROVISION_DLQ_NAME = "keyway-provision-dlq";

/** Production dependencies of the consumers. */
export const defaultQueueDeps: ProvisionConsumerDeps = { ingest: (gzipBytes) => ingestModule(gzipBytes) };

/** A queue handler with the given dependencies (tests inject failures through them, N11). */
export function createQueueHandler(deps: ProvisionConsumerDeps) {
  return async function queue(batch: MessageBatch<unknown>, rawEnv: Env, _ctx: ExecutionContext): Promise<void> {
    const env = guardEnv(rawEnv); // B8: D1's limits enforced in tests (inert in production)
    switch (batch.queue) {
      case PROVISION_QUEUE_NAME:
        return handleProvisionBatch(batch, env, deps);
      case PROVISION_DLQ_NAME:
        return handleProvisionDeadLetters(batch, env);
      case KRL_REBUILD_QUEUE_NAME:
        return handleKrlRebuildBatch(batch, env, createDb(env.DB));
      default:
        // A message nobody understands is acknowledged, never retried forever (poison).
        for (const message of batch.messages) {
          logError("", `unhandled message on queue ${batch.queue}`, `id=${message.id}`);
          message.ack();
        }
    }
  };
}

/** Consume a batch from either queue. */
export const handleQueue = createQueueHandler(defaultQueueDeps);
