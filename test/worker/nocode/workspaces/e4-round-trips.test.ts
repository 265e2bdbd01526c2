/**
 * E4's D1 round trips (docs/performance.md): with the caller, its rights, the
 * module with its options and the release list in the per-isolate cache (E4 keeps it,
 * `rights(…, { cache: "unchanged" })`), a create makes one D1 call — its batch of writes,
 * as the project and the pinned version are cached too — and its first run's plan step two:
 * the claim with the plan's inputs, then the planned status. Counted with the D1 guard's
 * recorder on the real binding, from the request until the queue consumer has planned the
 * run. Not a timed test: it fails when a change adds a round trip to the path.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { recordD1Statements } from "../../../../src/db/d1-guard";
import { createTeam, createTeamToken, uniqueName } from "../../../helpers/nocode";
import {
  type NoCodeOrg,
  noCodeOrg,
  provisionWorkspace,
  varEntry,
  waitForRun,
  workspaceDoc,
} from "../../../helpers/nocode-modules";

let ctx: NoCodeOrg;
let teamToken: string;
beforeAll(async () => {
  ctx = await noCodeOrg();
  teamToken = await createTeamToken(await createTeam(ctx.org, { "manage-workspaces": true }));
}, 60_000);

/** This test's own poll of the run's status (left out of the count). */
const STATUS_POLL = "SELECT status FROM runs WHERE id = ? -- e4-round-trips poll";

async function runStatus(runId: string): Promise<string | undefined> {
  return (await env.DB.prepare(STATUS_POLL).bind(runId).first<{ status: string }>())?.status;
}

const create = () =>
  provisionWorkspace(
    ctx.noCodeModuleId,
    teamToken,
    workspaceDoc({ name: uniqueName("ws") }, [varEntry("prefix", "pet")]),
  );

describe("E4 round trips with a warm cache (team token)", () => {
  it("the create: 1 D1 call (its writes); its first run's plan step: 2 (claim with its reads, planned)", async () => {
    // Warm: the token, its rights, the module, its pin, the project and the release list are cached; the token's
    // last use is recorded (N13 writes it at most once a minute).
    const first = await create();
    expect(first.status, first.text).toBe(200);
    await waitForRun(first.json.data.relationships["latest-run"].data.id, teamToken, ["planned"]);

    const recording = recordD1Statements();
    let calls: string[][];
    try {
      const res = await create();
      expect(res.status, res.text).toBe(200);
      const runId = res.json.data.relationships["latest-run"].data.id as string;
      await vi.waitFor(async () => expect(await runStatus(runId)).toBe("planned"), { timeout: 20_000, interval: 20 });
    } finally {
      recording.stop();
      calls = recording.calls.filter((c) => !(c.length === 1 && c[0] === STATUS_POLL));
    }
    const shape = calls.map((statements) => statements.map((sql) => sql.trim().split(/\s+/)[0]?.toLowerCase()));
    expect(shape, calls.map((c) => c.join("\n  ")).join("\n---\n")).toEqual([
      // E4: the workspace, its var, its first run. Nothing is read: the project, the pin's
      // registry module and version come from the cache, and the UNIQUE index checks the name.
      ["insert", "insert", "insert"],
      // Plan step: the claim (returning the run), the baseline; the proposed version's
      // summary comes from the cache (it is `ok`).
      ["update", "select"],
      // Plan step: planned, with the plan.
      ["update"],
    ]);
  });
});
