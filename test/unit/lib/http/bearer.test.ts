/** bearerCredential: the `Authorization: Bearer` parser of both wings and the agent protocol. */
import { describe, expect, it } from "vitest";
import { bearerCredential } from "../../../../src/lib/http/bearer";

describe("bearerCredential", () => {
  it("reads the credential after the scheme, case-insensitively and trimmed", () => {
    expect(bearerCredential("Bearer abc")).toBe("abc");
    expect(bearerCredential("bearer abc")).toBe("abc");
    expect(bearerCredential("BEARER \t abc  ")).toBe("abc");
    expect(bearerCredential("Bearer a b")).toBe("a b");
  });

  it("answers null for no header, another scheme or no credential", () => {
    expect(bearerCredential(null)).toBeNull();
    expect(bearerCredential(undefined)).toBeNull();
    expect(bearerCredential("")).toBeNull();
    expect(bearerCredential("Basic abc")).toBeNull();
    expect(bearerCredential("Bearerabc")).toBeNull();
    expect(bearerCredential("Bearer")).toBeNull();
    expect(bearerCredential("Bearer    ")).toBeNull();
    expect(bearerCredential(" Bearer abc")).toBeNull();
  });
});
