/**
 * Decision B9: a JSON body nested deeper than 64 levels is 400 in each API's
 * error format, refused by the shared body reader before anything walks the value. It
 * used to be a 500 on the unauthenticated `verify` (Vault's `%v` formatter recursed).
 */
import { describe, expect, it } from "vitest";
import { tfe } from "../../helpers/nocode";
import { vault } from "../../helpers/vault";

/** `{"<key>": <value nested `arrays` deep>}`: total depth arrays + 1. */
function nested(key: string, arrays: number, inner = '"x"'): string {
  return `{"${key}":${"[".repeat(arrays)}${inner}${"]".repeat(arrays)}}`;
}

describe("JSON nesting on /v1 (B9)", () => {
  it("answers 400 in Vault's format to the review's unauthenticated verify with 20,000 levels", async () => {
    const res = await vault("POST", "ssh/verify", {
      token: null,
      rawBody: nested("otp", 20_000),
      headers: { "Content-Type": "application/json" },
    });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({
      errors: ["failed to parse JSON input: JSON nesting is deeper than the limit of 64 levels"],
    });
  });

  it("accepts 64 levels (the handler then judges the value) and refuses 65", async () => {
    const at = await vault("POST", "ssh/verify", {
      token: null,
      rawBody: nested("otp", 63),
      headers: { "Content-Type": "application/json" },
    });
    expect(at.status).toBe(400);
    expect(at.json.errors[0]).toMatch(/^Field validation failed: error converting input \[\[/);
    const over = await vault("POST", "ssh/verify", {
      token: null,
      rawBody: nested("otp", 64),
      headers: { "Content-Type": "application/json" },
    });
    expect(over.status).toBe(400);
    expect(over.json.errors[0]).toContain("deeper than the limit of 64 levels");
  });

  it("does not count brackets inside strings", async () => {
    const res = await vault("POST", "ssh/verify", { token: null, body: { otp: `${"[".repeat(500)}\\"{` } });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ errors: ["OTP not found"] });
  });

  it("refuses deep bodies on authenticated writes too, and changes nothing", async () => {
    const res = await vault("POST", "ssh/roles/deep", {
      rawBody: nested("default_critical_options", 5_000),
      headers: { "Content-Type": "application/json" },
    });
    expect(res.status).toBe(400);
    expect((await vault("GET", "ssh/roles/deep")).status).toBe(404);
  });
});

describe("JSON nesting on /api/v2 (B9)", () => {
  it("answers 400 in JSON:API's format", async () => {
    const body = `{"data":{"type":"organizations","attributes":${nested("name", 20_000)}}}`;
    const res = await tfe("POST", "organizations", { rawBody: body });
    expect(res.status).toBe(400);
    expect(res.json.errors).toHaveLength(1);
    expect(res.json.errors[0].status).toBe("400");
    expect(JSON.stringify(res.json.errors[0])).toContain("JSON nesting is deeper than the limit of 64 levels");
  });
});
