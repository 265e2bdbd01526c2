/**
 * N18's budget: an idle agent costs at most 2 D1 queries a minute. Ten agents ping every
 * 10 s and keep a long poll open (six pings and a poll per simulated minute); every D1 round trip is counted by the D1 guard
 * (recordD1Statements, which sees the pool's Durable Object too: it runs in this isolate and
 * its D1 binding is guarded). The minute is compressed: after each "minute" of calls the
 * object's last sync is moved back a minute and its alarm run, as the clock would.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { recordD1Statements } from "../../../../src/db/d1-guard";
import type { AgentPool } from "../../../../src/nocode/agents/pool-object";
import { poolStub } from "../../../../src/nocode/agents/pool-stub";
import { agentCall, createAgentToken, createPool, registerAgent } from "../../../helpers/agents";
import { type NoCodeOrg, noCodeOrg } from "../../../helpers/nocode-modules";

let ctx: NoCodeOrg;
beforeAll(async () => {
  ctx = await noCodeOrg();
});

describe("D1 per idle agent (N18)", () => {
  it("ten idle agents cost at most 2 D1 round trips per agent-minute, with a sync each minute", async () => {
    const poolId = await createPool(ctx);
    const { token } = await createAgentToken(poolId, ctx.ownerToken);
    const agents = await Promise.all(Array.from({ length: 10 }, () => registerAgent(token, "1.11.4")));
    const minutes = 3;
    const recording = recordD1Statements();
    try {
      for (let minute = 0; minute < minutes; minute++) {
        // A minute of an idle agent: a long poll open, six pings meanwhile.
        const polls = agents.map((session) => agentCall("GET", "jobs/next?wait=1", { session }));
        for (let ping = 0; ping < 6; ping++) {
          for (const session of agents) {
            expect((await agentCall("POST", "ping", { session, body: { status: "idle" } })).status).toBe(200);
          }
        }
        for (const poll of await Promise.all(polls)) expect(poll.status).toBe(204);
        await runInDurableObject(poolStub(env, poolId), (instance: AgentPool) => {
          // The minute passes: the object's last D1 sync is a minute old.
          (instance as unknown as { lastSyncAt: number }).lastSyncAt -= 61_000;
        });
        await runDurableObjectAlarm(poolStub(env, poolId));
      }
    } finally {
      recording.stop();
    }
    const perAgentMinute = recording.calls.length / (agents.length * minutes);
    expect(recording.calls.length).toBeGreaterThan(0); // the syncs ran (and were counted)
    expect(perAgentMinute).toBeLessThanOrEqual(2);
  }, 60_000);
});
