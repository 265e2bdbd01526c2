/**
 * The `rollout-step` message of N15 on the provisioning queue: ids only, validated like
 * every other kind (a malformed one is poison, acknowledged and logged by the consumer).
 */
import { describe, expect, it } from "vitest";
import { parseProvisionMessage, rolloutStepMessage } from "../../../../src/nocode/messages/provision";

describe("rollout-step messages (N15)", () => {
  it("round-trips a rollout id", () => {
    const message = rolloutStepMessage("rollout-AbCdEfGh12345678");
    expect(message).toEqual({ v: 1, kind: "rollout-step", rolloutId: "rollout-AbCdEfGh12345678" });
    expect(parseProvisionMessage(JSON.parse(JSON.stringify(message)))).toEqual({ ok: true, message });
  });

  it("refuses anything but a rollout- id", () => {
    for (const rolloutId of [undefined, 42, "run-AbCdEfGh12345678", "rollout-short", "rollout-AbCdEfGh12345678x"]) {
      const parsed = parseProvisionMessage({ v: 1, kind: "rollout-step", rolloutId });
      expect(parsed.ok, String(rolloutId)).toBe(false);
    }
  });
});
