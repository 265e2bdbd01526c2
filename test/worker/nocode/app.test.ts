import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

const call = (path: string, init: RequestInit = {}) => exports.default.fetch(`http://keyway.test${path}`, init);

describe("no-code API order of checks (N2a)", () => {
  it("answers any request without a valid token with 401, unknown paths included", async () => {
    for (const path of ["/api/v2/nope", "/api/v2/organizations/x", "/api/v2/ping"]) {
      const res = await call(path);
      expect(res.status).toBe(401);
      expect(res.headers.get("Content-Type")).toBe("application/vnd.api+json");
      expect(await res.json()).toEqual({ errors: [{ status: "401", title: "unauthorized" }] });
    }
    const wrong = await call("/api/v2/nope", { headers: { Authorization: "Bearer nope" } });
    expect(wrong.status).toBe(401);
    await wrong.body?.cancel();
  });

  it("answers an unknown path with a valid token with 404 in JSON:API format", async () => {
    const res = await call("/api/v2/nope", { headers: { Authorization: `Bearer ${env.ADMIN_TOKEN}` } });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ errors: [{ status: "404", title: "not found" }] });
  });

  it("does not accept a secrets-service token (B1: separate token stores)", async () => {
    const res = await call("/api/v2/ping", { headers: { Authorization: `Bearer ${env.ROOT_TOKEN}` } });
    expect(res.status).toBe(401);
    await res.body?.cancel();
  });

  it("answers paths outside both APIs with 404", async () => {
    const res = await call("/elsewhere");
    expect(res.status).toBe(404);
    await res.body?.cancel();
  });
});
