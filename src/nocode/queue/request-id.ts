/**
 * Request ids across the queue (decision B15): every message sent on the provisioning
 * queue while serving a request carries that request's id as `requestId`, and every
 * message the consumer sends while handling one carries the id of the message it handles.
 * The consumer logs it, so a plan or an ingestion can be traced to the request that caused
 * it. Done once, by handing the code an `env` whose queue producer stamps the id, rather
 * than at each of the places that send.
 */
import { isAcceptableRequestId } from "../../lib/http/request-id";

/** `env` whose `PROVISION_QUEUE` adds `requestId` to every object message it sends. */
export function stampRequestId<E extends Pick<Env, "PROVISION_QUEUE">>(env: E, requestId: string): E {
  const queue = env.PROVISION_QUEUE;
  if (!queue) return env;
  const stamp = (body: unknown) =>
    body !== null && typeof body === "object" && !Array.isArray(body)
      ? { ...(body as Record<string, unknown>), requestId }
      : body;
  const stamped: Queue = {
    send: (body, options) => queue.send(stamp(body), options),
    sendBatch: (messages, options) =>
      queue.sendBatch(
        [...messages].map((m) => ({ ...m, body: stamp(m.body) })),
        options,
      ),
    metrics: () => queue.metrics(),
  } as Queue;
  return { ...env, PROVISION_QUEUE: stamped };
}

/** The request id a message carries, when it carries an acceptable one (B15). */
export function messageRequestId(body: unknown): string | undefined {
  if (body === null || typeof body !== "object") return undefined;
  const id = (body as Record<string, unknown>).requestId;
  return isAcceptableRequestId(id) ? id : undefined;
}
