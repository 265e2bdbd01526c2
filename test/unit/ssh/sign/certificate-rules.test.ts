/** The certificate pipeline's pure decisions (Vault's path_issue_sign.go; S7, S8). */
import { describe, expect, it } from "vitest";
import { defaultRole, type Role } from "../../../../src/ssh/roles/model";
import { mergeRolePatch } from "../../../../src/ssh/roles/patch";
import {
  compareGoStrings,
  criticalOptionsFor,
  extensionsFor,
  keyIdFor,
  parsePrincipalList,
  principalsFor,
  ttlFor,
  validityFor,
} from "../../../../src/ssh/sign/certificate-rules";

function caRole(overrides: Partial<Role> = {}): Role {
  return { ...defaultRole("r", "ca"), allowUserCertificates: true, ...overrides };
}

describe("principal lists", () => {
  it("sort in byte order like Go, not localeCompare", () => {
    expect(parsePrincipalList("b,B,a,é,Z, a")).toEqual(["B", "Z", "a", "b", "é"]);
    expect(["\u{1F600}", "\uFF5E"].sort(compareGoStrings)).toEqual(["\uFF5E", "\u{1F600}"]);
  });
});

describe("keyIdFor (S7)", () => {
  it("defaults to the display name and splits around {{public_key_hash}}", () => {
    expect(keyIdFor(caRole(), "role", "", "root")).toEqual(["root"]);
    expect(
      keyIdFor(caRole({ keyIdFormat: "{{role_name}}-{{public_key_hash}}-{{token_display_name}}" }), "web", "", "root"),
    ).toEqual(["web-", "-root"]);
    // A display name holding a variable stays literal.
    expect(keyIdFor(caRole({ keyIdFormat: "{{token_display_name}}" }), "web", "", "{{role_name}}")).toEqual([
      "{{role_name}}",
    ]);
  });
});

describe("principalsFor (S8)", () => {
  const base = { certType: 1 as const, entity: null, now: 0 };
  it("falls back to default_user with commas splitting it", () => {
    const role = caRole({ allowedUsers: "*", defaultUser: "b,a" });
    expect(principalsFor(role, { ...base, validPrincipals: undefined })).toEqual(["a", "b"]);
    expect(principalsFor(role, { ...base, validPrincipals: "," })).toEqual(["a", "b"]);
  });
  it("renders templated allowed users from the entity", () => {
    const role = caRole({ allowedUsers: "{{identity.entity.name}}", allowedUsersTemplate: true });
    const entity = { id: "1", name: "ann", metadata: {}, aliases: [] };
    expect(principalsFor(role, { ...base, validPrincipals: "ann", entity })).toEqual(["ann"]);
    expect(() => principalsFor(role, { ...base, validPrincipals: "bob", entity })).toThrow(
      "bob is not a valid value for valid_principals",
    );
  });
});

describe("ttlFor and validityFor", () => {
  const system = { defaultLeaseTtl: 100, maxLeaseTtl: 1000 };
  it("falls back and clamps as Vault does", () => {
    expect(ttlFor(caRole(), undefined, system)).toBe(100);
    expect(ttlFor(caRole({ ttl: 5000 }), undefined, system)).toBe(1000);
    expect(() => ttlFor(caRole(), 5000, system)).toThrow("ttl is larger than maximum allowed 1000");
    expect(ttlFor(caRole({ ttl: 50 }), 0, system)).toBe(100);
  });
  it("never backdates before the epoch", () => {
    const w = validityFor(caRole({ notBeforeDuration: 9_000_000_000 }), 60, 1_000_000);
    expect(w.validAfter).toBe(0n);
    expect(w.validBefore).toBe(1060n);
  });
});

describe("options and extensions", () => {
  it("lists every refused option, sorted", () => {
    expect(() => criticalOptionsFor(caRole({ allowedCriticalOptions: "a" }), { z: "", b: "", a: "" })).toThrow(
      "critical options not on allowed list: [b z]",
    );
  });
  it("does not trim allowed lists (Vault splits on ',' only)", () => {
    expect(() => extensionsFor(caRole({ allowedExtensions: "a, b" }), { b: "" }, null, 0)).toThrow(
      "extensions [b] are not on allowed list",
    );
  });
  it("copies templated defaults literally when templating is off", () => {
    const role = caRole({ defaultExtensions: { x: "{{identity.entity.name}}" } });
    expect(extensionsFor(role, {}, null, 0)).toEqual({ extensions: { x: "{{identity.entity.name}}" }, skipped: false });
  });
});

describe("mergeRolePatch (S12, RFC 7396)", () => {
  it("merges object fields, removes null keys, resets null fields, replaces the rest", () => {
    const current = {
      ttl: "1h",
      default_extensions: { a: "", b: "" },
      allowed_users: "x",
      default_critical_options: {},
    };
    expect(
      mergeRolePatch(current, {
        ttl: null,
        default_extensions: { b: null, c: "1" },
        allowed_users: "y",
        default_critical_options: [{ f: "1" }],
      }),
    ).toEqual({ default_extensions: { a: "", c: "1" }, allowed_users: "y", default_critical_options: [{ f: "1" }] });
  });
});
