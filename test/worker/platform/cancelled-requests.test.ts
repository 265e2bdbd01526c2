/**
 * Requests that miss the per-isolate caches at once must not wait on
 * another request's pending D1 read. In workerd a promise born in one request's I/O
 * context never settles for the others when that request is cancelled (its client went
 * away), so they would hang until the runtime kills them ("the script will never
 * generate a response" → 500s). This is as close as the test runtime allows: requests
 * through the Worker's real entrypoint (`exports.default.fetch`, each in its own I/O
 * context), all missing the same cold keys — the token cache of /api/v2, the token and
 * (mount, role) context of /v1 sign — while some are aborted mid-flight, the first (the
 * one that starts the load) among them. Every request that was not aborted must answer,
 * and correctly.
 *
 * Note: the local runtime did not strand the waiters with the old shared-promise caches
 * either (an aborted `exports.default.fetch` does not seem to cancel the callee's I/O
 * context here), so this is a liveness guard; the deterministic regression test of the
 * mechanism is test/unit/lib/isolate-cache.test.ts (a load that never settles, as a
 * cancelled request's, blocks no other caller), which fails with the old caches.
 */
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { bootstrapOrg, createTeam, createTeamToken } from "../../helpers/nocode";
import { uniqueName, vault } from "../../helpers/vault";
import { CA_KEYS, SUBJECT_KEYS } from "../ssh/ca-fixtures";

const ROUNDS = 10;
const PER_ROUND = 8;

/**
 * Fire `count` requests at once; abort every other one (the first of all: the one that
 * starts the load) after `delay` ms; the answers of the rest (or "hung").
 */
async function raceWithCancellations(
  count: number,
  request: () => Request,
  delay = 1,
): Promise<(number | "aborted" | "hung")[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const controller = new AbortController();
      const cancel = i % 2 === 0;
      if (cancel) setTimeout(() => controller.abort(), i === 0 ? delay : delay + (i % 3));
      const hung = new Promise<"hung">((resolve) => setTimeout(() => resolve("hung"), 20_000));
      try {
        const answer = await Promise.race([
          exports.default.fetch(request(), { signal: controller.signal }).then(async (res) => {
            await res.arrayBuffer();
            return res.status;
          }),
          hung,
        ]);
        return answer;
      } catch {
        if (cancel) return "aborted" as const;
        throw new Error("a request that was not aborted failed");
      }
    }),
  );
}

describe("a cancelled request never strands the others waiting on the same cache key", () => {
  it("/api/v2: concurrent first uses of a token, half of them cancelled, the rest all answer 200", {
    timeout: 120_000,
  }, async () => {
    const { org } = await bootstrapOrg();
    const teamId = await createTeam(org);
    for (let round = 0; round < ROUNDS; round++) {
      const token = await createTeamToken(teamId); // a new token: a cold cache key each round
      const answers = await raceWithCancellations(
        PER_ROUND,
        () =>
          new Request(`http://keyway.test/api/v2/organizations/${org}`, {
            headers: { Authorization: `Bearer ${token}` },
          }),
        round % 5,
      );
      const kept = answers.filter((_, i) => i % 2 === 1);
      expect(kept, `round ${round}`).toEqual(kept.map(() => 200));
      for (const a of answers) expect(a).not.toBe("hung");
    }
  });

  it("/v1 sign: concurrent first signs of a role, half of them cancelled, the rest all answer 200", {
    timeout: 120_000,
  }, async () => {
    expect(
      (
        await vault("POST", "ssh/config/ca", {
          body: { private_key: CA_KEYS.ed25519.privateKey, public_key: CA_KEYS.ed25519.publicKey },
        })
      ).status,
    ).toBe(204);
    for (let round = 0; round < ROUNDS; round++) {
      const role = uniqueName("cancel"); // a new role: a cold (mount, role) key each round
      await vault("POST", `ssh/roles/${role}`, {
        body: { key_type: "ca", allow_user_certificates: true, allowed_users: "*" },
      });
      const answers = await raceWithCancellations(
        PER_ROUND,
        () =>
          new Request(`http://keyway.test/v1/ssh/sign/${role}`, {
            method: "POST",
            headers: { "X-Vault-Token": env.ROOT_TOKEN, "Content-Type": "application/json" },
            body: JSON.stringify({ public_key: SUBJECT_KEYS.ed25519, valid_principals: "alice" }),
          }),
        round % 5,
      );
      const kept = answers.filter((_, i) => i % 2 === 1);
      expect(kept, `round ${round}`).toEqual(kept.map(() => 200));
      for (const a of answers) expect(a).not.toBe("hung");
    }
  });
});
