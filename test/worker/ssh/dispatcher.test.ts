import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { vault } from "../../helpers/vault";

describe("secrets API order of checks (S2a)", () => {
  it("answers an unknown path without a token with 403 permission denied", async () => {
    const res = await vault("GET", "ssh/nope", { token: null });
    expect(res.status).toBe(403);
    expect(res.json).toEqual({ errors: ["permission denied"] });
  });

  it("answers an unknown path with a valid token with 404 unsupported path", async () => {
    const res = await vault("GET", "ssh/nope");
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ errors: ["unsupported path"] });
  });

  it("answers an unknown mount with 404 after auth", async () => {
    expect((await vault("GET", "nomount/roles/x")).status).toBe(404);
    expect((await vault("GET", "nomount/roles/x", { token: null })).status).toBe(403);
  });
});

describe("methods (S2)", () => {
  it("answers methods a path does not support with 405 after auth", async () => {
    expect((await vault("DELETE", "auth/token/lookup-self")).status).toBe(405);
    expect((await vault("DELETE", "auth/token/lookup-self")).json).toEqual({ errors: ["unsupported operation"] });
    expect((await vault("DELETE", "auth/token/lookup-self", { token: null })).status).toBe(403);
    expect((await vault("OPTIONS", "auth/token/lookup-self")).status).toBe(405);
  });

  it("treats PUT like POST", async () => {
    const res = await vault("PUT", "auth/token/create", { body: { policies: ["default"] } });
    expect(res.status).toBe(200);
  });
});

describe("the /v1 entrypoint (exports.default.fetch)", () => {
  const call = (path: string, init: RequestInit = {}) => exports.default.fetch(`http://keyway.test${path}`, init);

  it("gives every answer, errors included, its own X-Request-Id and a JSON content type", async () => {
    const denied = await call("/v1/ssh/roles/x");
    const ok = await call("/v1/auth/token/lookup-self", { headers: { "X-Vault-Token": env.ROOT_TOKEN } });
    expect(denied.status).toBe(403);
    expect(ok.status).toBe(200);
    expect(denied.headers.get("Content-Type")).toBe("application/json");
    const okBody = (await ok.json()) as { request_id: string };
    await denied.body?.cancel();
    const ids = [denied.headers.get("X-Request-Id"), ok.headers.get("X-Request-Id")];
    expect(ids[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(ids[1]).toBe(okBody.request_id);
    expect(ids[0]).not.toBe(ids[1]);
  });

  it("serves bare /v1 through the secrets dispatcher: 403 without a token, 404 with one", async () => {
    const denied = await call("/v1");
    expect(denied.status).toBe(403);
    expect(await denied.json()).toEqual({ errors: ["permission denied"] });
    const unknown = await call("/v1", { headers: { "X-Vault-Token": env.ROOT_TOKEN } });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ errors: ["unsupported path"] });
  });

  it("leaves paths that only start with the letters /v1 to the no-code app's 404", async () => {
    for (const path of ["/v10", "/v1x/ssh/verify"]) {
      const res = await call(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get("Content-Type"), path).toBe("application/vnd.api+json");
      await res.body?.cancel();
    }
    const query = await call("/v1?list=true");
    expect(query.status).toBe(403);
    expect(await query.json()).toEqual({ errors: ["permission denied"] });
  });

  it("refuses a malformed percent-escape in the path with 400, as Go's HTTP server does before Vault's checks", async () => {
    const res = await call("/v1/ssh/roles/%zz");
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ errors: ["malformed percent-encoding in the request path"] });
  });

  it("decodes percent-escapes before routing", async () => {
    // public_key is unauthenticated (S16): the escaped path must reach the same route, not 403.
    const plain = await call("/v1/ssh/public_key");
    const escaped = await call("/v1/ssh/public%5Fkey");
    expect(plain.status).not.toBe(403);
    expect(escaped.status).toBe(plain.status);
    expect(await escaped.text()).toBe(await plain.text());
  });
});
