/**
 * N17: an agent token reaches only the agent protocol. Every route of /api/v2 (read from
 * Hono's route table, so a new route is covered), of the registry protocol, and the pages
 * under /app answer it 401 — except the routes that carry their own credential or none
 * (UNAUTHENTICATED_ROUTES), where the agent token is simply not a credential.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { unauthenticatedRouteOf } from "../../../../src/nocode/access/unauthenticated";
import { AGENT_PROTOCOL_PREFIX } from "../../../../src/nocode/agents/protocol-routes";
import { nocodeApp } from "../../../../src/nocode/app";
import { REGISTRY_PROTOCOL_PREFIX, registryProtocolApp } from "../../../../src/nocode/registry/protocol-routes";
import { createAgentToken, createPool } from "../../../helpers/agents";
import { bootstrapOrg } from "../../../helpers/nocode";
import { workerRequest } from "../../../helpers/worker-request";

let poolToken: string;
beforeAll(async () => {
  const org = await bootstrapOrg();
  const poolId = await createPool({ org: org.org, ownerToken: org.ownerToken });
  poolToken = (await createAgentToken(poolId, org.ownerToken)).token;
});

/** Every concrete route of an app under `prefix`, each `:param` filled with a placeholder. */
function routes(prefix: string, table: readonly { method: string; path: string }[]) {
  const out = new Map<string, { method: string; path: string }>();
  for (const r of table) {
    if (r.method === "ALL") continue;
    const path = `${prefix}${r.path === "/" ? "" : r.path}`.replace(/:[A-Za-z_]+/g, "x-placeholder");
    out.set(`${r.method} ${path}`, { method: r.method, path });
  }
  return [...out.values()];
}

describe("an agent token outside the agent protocol (N17)", () => {
  it("gets 401 from every /api/v2 and registry route that needs a credential", async () => {
    const all = [
      ...routes("/api/v2", nocodeApp.routes),
      ...routes(REGISTRY_PROTOCOL_PREFIX, registryProtocolApp.routes),
    ];
    expect(all.length).toBeGreaterThan(50);
    let checked = 0;
    for (const { method, path } of all) {
      if (path.startsWith(AGENT_PROTOCOL_PREFIX)) continue;
      const exempt = unauthenticatedRouteOf(method, path);
      if (exempt && !exempt.checksTokenWhenSent) continue;
      if (path.endsWith("/archive")) continue; // the signed download link is its own credential (B13)
      const res = await workerRequest(
        `http://keyway.test${path}`,
        {
          method,
          headers: { Authorization: `Bearer ${poolToken}`, "Content-Type": "application/vnd.api+json" },
          body: method === "GET" || method === "HEAD" ? undefined : "{}",
        },
        { outsideContract: "every route with a placeholder path, to check the credential only" },
      );
      expect(res.status, `${method} ${path}`).toBe(401);
      checked++;
    }
    expect(checked).toBeGreaterThan(50);
  });

  it("gets 401 from the console and the plan page", async () => {
    for (const path of ["/app/", "/app/x-org/workspaces/x-ws/runs/run-AAAAAAAAAAAAAAAA"]) {
      const res = await workerRequest(
        `http://keyway.test${path}`,
        {
          headers: { Authorization: `Bearer ${poolToken}` },
        },
        { outsideContract: "HTML pages" },
      );
      // The console answers a caller it does not know with its sign-in page (a redirect); the plan page with 401.
      expect([401, 302, 303], `${path}: ${res.status}`).toContain(res.status);
      expect(res.text).not.toContain("x-org");
    }
  });
});
