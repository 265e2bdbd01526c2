/**
 * Deliver a batch of messages to a queue handler inside workerd (the real handler, or one
 * built by `createQueueHandler` with test dependencies) and read what it did to each.
 */
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";

type QueueHandler = (batch: MessageBatch<unknown>, env: Env, ctx: ExecutionContext) => Promise<void>;

/**
 * Run `bodies` as one batch of `queue` through `handler`. Returns the ack/retry result,
 * the message ids in order, and each retried message's delay, which getQueueResult does
 * not report.
 */
export async function deliverBatch(handler: QueueHandler, queue: string, bodies: unknown[], attempts = 1) {
  const messages = bodies.map((body, i) => ({
    id: `msg-${i}-${crypto.randomUUID()}`,
    timestamp: new Date(),
    attempts,
    body,
  }));
  const batch = createMessageBatch(queue, messages);
  const delays: Record<string, number | undefined> = {};
  for (const message of batch.messages) {
    const retry = message.retry.bind(message);
    message.retry = (options?: QueueRetryOptions) => {
      delays[message.id] = options?.delaySeconds;
      retry(options);
    };
  }
  const ctx = createExecutionContext();
  await handler(batch, env, ctx);
  return { result: await getQueueResult(batch, ctx), ids: messages.map((m) => m.id), delays };
}
