import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

const call = (path: string, init: RequestInit = {}) => exports.default.fetch(`http://keyway.test${path}`, init);

describe("no-code API order of checks (N2a)", () => {
  it("answers any request without a valid token with 401, unknown paths included", async () => {
    for (const path of ["/api/v2/nope", "/api/v2/organizations/x"]) {
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

  it("answers GET /api/v2/ping without a token with 204 and TFP-API-Version (B12)", async () => {
    const res = await call("/api/v2/ping");
    expect(res.status).toBe(204);
    expect(res.headers.get("TFP-API-Version")).toBe("2.6");
    expect(await res.text()).toBe("");
    // Only GET is public: another method still needs a token.
    const post = await call("/api/v2/ping", { method: "POST" });
    expect(post.status).toBe(401);
    await post.body?.cancel();
  });

  it("checks a token sent with ping: valid → 204, bad → 401", async () => {
    const ok = await call("/api/v2/ping", { headers: { Authorization: `Bearer ${env.ADMIN_TOKEN}` } });
    expect(ok.status).toBe(204);
    expect(ok.headers.get("TFP-API-Version")).toBe("2.6");
    const bad = await call("/api/v2/ping", { headers: { Authorization: "Bearer nope.atlasv1.nope" } });
    expect(bad.status).toBe(401);
    await bad.body?.cancel();
  });

  it("serves Terraform's service discovery document at /.well-known/terraform.json (B12)", async () => {
    const res = await call("/.well-known/terraform.json");
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({
      "modules.v1": "/api/registry/v1/modules/",
      "tfe.v2": "/api/v2/",
      "tfe.v2.1": "/api/v2/",
      "tfe.v2.2": "/api/v2/",
    });
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
