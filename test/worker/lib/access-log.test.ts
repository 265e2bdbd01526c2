/**
 * Decision B15: one structured access line per request (method, route pattern,
 * status, duration, request id) with no secret in it, request ids kept from `X-Request-Id`
 * or `cf-ray` when B15 allows, and queue messages carrying the id the consumer logs.
 */
import { afterEach, beforeAll, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import { type NoCodeOrg, noCodeOrg, varEntry } from "../../helpers/nocode-modules";
import { uniqueName, vault } from "../../helpers/vault";
import { workerRequest } from "../../helpers/worker-request";
import { CA_KEYS, SUBJECT_KEYS } from "../ssh/ca-fixtures";
import { writeOtpRole } from "../ssh/otp/helpers";

let logSpy: MockInstance<typeof console.log>;
let errorSpy: MockInstance<typeof console.error>;

/** Everything logged so far, one string per console call. */
const logged = (): string[] => [...logSpy.mock.calls, ...errorSpy.mock.calls].map((args) => args.map(String).join(" "));

// biome-ignore lint/suspicious/noExplicitAny: log lines are arbitrary JSON
function accessLines(): any[] {
  return logged()
    .filter((text) => text.startsWith("{"))
    .map((text) => JSON.parse(text))
    .filter((line) => line.message === "access");
}

beforeEach(() => {
  logSpy = vi.spyOn(console, "log");
  errorSpy = vi.spyOn(console, "error");
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** The one access line of a request, checked for its fields and for absent secrets. */
function expectOneAccessLine(
  answer: { status: number; headers: Headers },
  method: string,
  route: string,
  secrets: string[],
) {
  const lines = accessLines();
  expect(lines).toHaveLength(1);
  const line = lines[0];
  expect(line).toEqual({
    level: "info",
    message: "access",
    method,
    route,
    status: answer.status,
    duration_ms: expect.any(Number),
    request_id: answer.headers.get("X-Request-Id"),
  });
  expect(line.duration_ms).toBeGreaterThanOrEqual(0);
  const everything = logged().join("\n");
  for (const secret of secrets) {
    expect(secret.length).toBeGreaterThan(0);
    expect(everything).not.toContain(secret);
  }
}

describe("access log (decision B15)", () => {
  beforeAll(async () => {
    const res = await vault("POST", "ssh/config/ca", {
      body: { private_key: CA_KEYS.ed25519.privateKey, public_key: CA_KEYS.ed25519.publicKey },
    });
    expect(res.status).toBe(204);
  });

  it("a sign request: route pattern, no token, no key", async () => {
    const role = uniqueName("sign");
    expect(
      (
        await vault("POST", `ssh/roles/${role}`, {
          body: { key_type: "ca", allow_user_certificates: true, allowed_users: "*" },
        })
      ).status,
    ).toBe(204);
    const token = await vault("POST", "auth/token/create", { body: { policies: ["root"] } });
    const clientToken = token.json.auth.client_token as string;
    logSpy.mockClear();
    errorSpy.mockClear();
    const res = await vault("POST", `ssh/sign/${role}`, {
      token: clientToken,
      body: { public_key: SUBJECT_KEYS.ed25519, valid_principals: "alice" },
    });
    expect(res.status).toBe(200);
    const keyBlob = SUBJECT_KEYS.ed25519.split(" ")[1]!;
    expectOneAccessLine(res, "POST", "/v1/ssh/sign/:name", [
      clientToken,
      keyBlob,
      res.json.data.signed_key.split(" ")[1],
      role,
    ]);
  });

  it("a creds request and the verify of its OTP: neither line holds the token or the OTP", async () => {
    const role = uniqueName("otp");
    await writeOtpRole(role);
    logSpy.mockClear();
    const creds = await vault("POST", `ssh/creds/${role}`, { body: { ip: "10.4.5.6", username: "ubuntu" } });
    expect(creds.status).toBe(200);
    const otp = creds.json.data.key as string;
    expectOneAccessLine(creds, "POST", "/v1/ssh/creds/:name", [otp, creds.json.lease_id, role]);

    logSpy.mockClear();
    const verified = await vault("POST", "ssh/verify", { token: null, body: { otp } });
    expect(verified.status).toBe(200);
    expectOneAccessLine(verified, "POST", "/v1/ssh/verify", [otp]);
    expect(logged().join("\n")).not.toContain("test-root-token");
  });

  it("a token lookup logs neither the caller's token nor the one looked up", async () => {
    const created = await vault("POST", "auth/token/create", { body: { policies: ["default"] } });
    const looked = created.json.auth.client_token as string;
    logSpy.mockClear();
    const res = await vault("POST", "auth/token/lookup", { body: { token: looked } });
    expect(res.status).toBe(200);
    expectOneAccessLine(res, "POST", "/v1/auth/token/lookup", [looked, created.json.auth.accessor, "test-root-token"]);
  });

  it("an unknown path logs no route and no path", async () => {
    logSpy.mockClear();
    const res = await vault("GET", "ssh/no-such/secret-looking-segment");
    expect(res.status).toBe(404);
    expectOneAccessLine(res, "GET", null as unknown as string, ["secret-looking-segment"]);
  });
});

describe("access log of the no-code API, request ids across the queue (decision B15)", () => {
  let ctx: NoCodeOrg;
  beforeAll(async () => {
    ctx = await noCodeOrg();
  }, 120_000);

  it("an E4 request logs its pattern without token or sensitive value, and the queued plan logs the request's id", async () => {
    logSpy.mockClear();
    errorSpy.mockClear();
    const sensitive = `s3cret-${crypto.randomUUID()}`;
    const requestId = `e4-${crypto.randomUUID()}`;
    const res = await workerRequest(`http://keyway.test/api/v2/no-code-modules/${ctx.noCodeModuleId}/workspaces`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${ctx.ownerToken}`,
        "Content-Type": "application/vnd.api+json",
        "X-Request-Id": requestId,
      },
      body: JSON.stringify({
        data: {
          type: "workspaces",
          attributes: { name: uniqueName("ws") },
          relationships: {
            vars: { data: [varEntry("prefix", "pet"), varEntry("greeting", sensitive, { sensitive: true })] },
          },
        },
      }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("X-Request-Id")).toBe(requestId);
    expectOneAccessLine(res, "POST", "/api/v2/no-code-modules/:id/workspaces", [ctx.ownerToken, sensitive]);
    // The consumer handles the plan the request queued and logs the same id.
    await vi.waitFor(
      () => {
        const handled = logged()
          .filter((text) => text.includes('"queue message handled"'))
          .map((text) => JSON.parse(text));
        expect(handled.some((line) => line.kind === "plan-run" && line.request_id === requestId)).toBe(true);
      },
      { timeout: 20_000, interval: 100 },
    );
    expect(logged().join("\n")).not.toContain(sensitive);
  });

  it("keeps an acceptable X-Request-Id or cf-ray and replaces anything else (B15)", async () => {
    const call = (headers: Record<string, string>) =>
      workerRequest("http://keyway.test/api/v2/ping", { method: "GET", headers });
    expect((await call({ "X-Request-Id": "abc.DEF_1:2-3" })).headers.get("X-Request-Id")).toBe("abc.DEF_1:2-3");
    expect((await call({ "cf-ray": "8a1b2c3d4e5f6789-AMS" })).headers.get("X-Request-Id")).toBe("8a1b2c3d4e5f6789-AMS");
    expect((await call({ "X-Request-Id": "ok-id", "cf-ray": "ray-id" })).headers.get("X-Request-Id")).toBe("ok-id");
    for (const bad of ["has space", 'quote"', "x".repeat(129), "a/b", "<script>"]) {
      const id = (await call({ "X-Request-Id": bad })).headers.get("X-Request-Id")!;
      expect(id).not.toBe(bad);
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect((await call({ "X-Request-Id": "x".repeat(128) })).headers.get("X-Request-Id")).toBe("x".repeat(128));
    // /v1 follows the same rule.
    const v1 = await vault("GET", "sys/health", { token: null, headers: { "X-Request-Id": "lb-probe-1" } });
    expect(v1.headers.get("X-Request-Id")).toBe("lb-probe-1");
    const bad = await vault("GET", "sys/health", { token: null, headers: { "X-Request-Id": "bad id" } });
    expect(bad.headers.get("X-Request-Id")).not.toBe("bad id");
  });

  it("an upload link's token is logged as the route's parameter name only", async () => {
    const other = await noCodeOrg({ org: ctx, version: "1.1.0" });
    expect(other.version).toBe("1.1.0");
    const lines = accessLines().filter((line) => line.route === "/api/v2/uploads/:token");
    expect(lines.length).toBeGreaterThan(0);
    expect(logged().join("\n")).not.toMatch(/\/api\/v2\/uploads\/[A-Za-z0-9_-]{43}/);
  });
});
