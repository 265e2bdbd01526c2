/**
 * The Queue consumer (decision N11): one entry point, routed by queue name.
 */
import { logError } from "./lib/log";

export const PROVISION_QUEUE_NAME = "keyway-provision";
export const PROVISION_DLQ_NAME = "keyway-provision-dlq";

/** Consume a batch from either queue. */
export async function handleQueue(batch: MessageBatch<unknown>, _env: Env, _ctx: ExecutionContext): Promise<void> {
  switch (batch.queue) {
    default:
      // A message nobody understands is acknowledged, never retried forever (poison).
      for (const message of batch.messages) {
        logError("", `unhandled message on queue ${batch.queue}`, { id: message.id });
        message.ack();
      }
  }
}
