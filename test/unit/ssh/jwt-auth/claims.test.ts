import { describe, expect, it } from "vitest";
import {
  ClaimError,
  extractMetadata,
  getClaim,
  globMatch,
  groupNames,
  validateBoundClaims,
  validateRegisteredClaims,
} from "../../../../src/ssh/jwt-auth/claims";

describe("Vault's claim rules (S25)", () => {
  it("globs: `*` only, anchored like ryanuber/go-glob", () => {
    expect(globMatch("*", "anything")).toBe(true);
    expect(globMatch("repo:acme/*:ref:refs/heads/main", "repo:acme/web:ref:refs/heads/main")).toBe(true);
    expect(globMatch("repo:acme/*:ref:refs/heads/main", "repo:acme/web:ref:refs/heads/dev")).toBe(false);
    expect(globMatch("a*b*c", "aXXbYYc")).toBe(true);
    expect(globMatch("a*b*c", "aXXcYYb")).toBe(false);
    expect(globMatch("*.example.com", "evil.com")).toBe(false);
    expect(globMatch("exact", "exact")).toBe(true);
    expect(globMatch("exact", "exactly")).toBe(false);
    expect(globMatch("a?c", "abc")).toBe(false);
  });

  it("JSON pointers for names starting with /", () => {
    const claims = { a: { "b/c": [1, { d: "x" }], "t~": 2 }, plain: "p" };
    expect(getClaim(claims, "/a/b~1c/1/d")).toBe("x");
    expect(getClaim(claims, "/a/t~0")).toBe(2);
    expect(getClaim(claims, "/a/missing")).toBeUndefined();
    expect(getClaim(claims, "plain")).toBe("p");
    expect(getClaim(claims, "__proto__")).toBeUndefined();
  });

  it("bound claims compare by kind and value", () => {
    const claims = { n: 5, s: "5", b: true, list: ["x", "y"] };
    expect(() => validateBoundClaims("string", { n: 5, s: "5", b: true, list: "y" }, claims)).not.toThrow();
    expect(() => validateBoundClaims("string", { n: "5" }, claims)).toThrow(ClaimError);
    expect(() => validateBoundClaims("glob", { list: "x*" }, claims)).not.toThrow();
    expect(() => validateBoundClaims("string", { gone: "x" }, claims)).toThrow('claim "gone" is missing');
  });

  it("metadata and groups", () => {
    expect(extractMetadata({ a: 1, b: true, c: "x" }, { a: "A", b: "B", c: "C", d: "D" })).toEqual({
      A: "1",
      B: "true",
      C: "x",
    });
    expect(groupNames({ g: ["a", "", "a", "b"] }, "g")).toEqual(["a", "b"]);
    expect(() => groupNames({}, "g")).toThrow('"g" claim not found in token');
  });

  it("time claims follow hashicorp/cap's leeways", () => {
    const base = { issuer: "", subject: "", audiences: [], leeways: { expiration: 0, notBefore: 0, clockSkew: 0 } };
    const now = 1_000_000;
    expect(() => validateRegisteredClaims({ exp: now - 59 }, { ...base, now })).not.toThrow();
    expect(() => validateRegisteredClaims({ exp: now - 61 }, { ...base, now })).toThrow("token is expired");
    expect(() => validateRegisteredClaims({ iat: now - 200 }, { ...base, now })).not.toThrow();
    expect(() => validateRegisteredClaims({ iat: now - 211 }, { ...base, now })).toThrow("token is expired");
    const custom = { ...base, leeways: { expiration: 600, notBefore: 0, clockSkew: -1 } };
    expect(() => validateRegisteredClaims({ iat: now - 500 }, { ...custom, now })).not.toThrow();
    expect(() => validateRegisteredClaims({ exp: now - 1 }, { ...custom, now })).toThrow("token is expired");
  });
});
