/** The clock and queue the upgrade steps use, injectable so tests can make them fail (N11). */
import type { ProvisionMessage } from "../messages/provision";

/** Injectable clock and queue of the upgrade steps (N11: tests inject failures). */
export interface UpgradeDeps {
  now: () => number;
  /** Send a message on the provisioning queue (ids only, N11). */
  send: (message: ProvisionMessage) => Promise<void>;
}

/** Production dependencies over `env.PROVISION_QUEUE`. */
export function defaultUpgradeDeps(env: Pick<Env, "PROVISION_QUEUE">): UpgradeDeps {
  return {
    now: Date.now,
    send: async (message) => {
      await env.PROVISION_QUEUE.send(message, { contentType: "json" });
    },
  };
}
