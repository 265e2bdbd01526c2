/**
 * The return path of sign-in (N16), as a pure function: only a same-origin path under
 * /app/ (the HTTP-level spellings are in test/worker/nocode/console/console-tokens.test.ts).
 */
import { describe, expect, it } from "vitest";
import { consoleReturnPath, DEFAULT_RETURN } from "../../../../src/nocode/console/return-path";

describe("consoleReturnPath", () => {
  it("keeps console paths with their query", () => {
    for (const path of [
      "/app",
      "/app/",
      "/app/acme",
      "/app/settings/tokens?source=terraform-login",
      "/app/a/b?x=%41&y=z+w",
    ])
      expect(consoleReturnPath(path)).toBe(path);
  });

  it("falls back to /app for everything else", () => {
    expect(DEFAULT_RETURN).toBe("/app");
    for (const raw of [
      undefined,
      null,
      "",
      "https://evil.example/app",
      "//evil.example/app",
      "/\\evil.example",
      "/app\\x",
      "/app/../x",
      "/app/./x",
      "/app/...",
      "/app/%2e%2e/x",
      "/app/%2F/x",
      "/app/%5C/x",
      "/app//x",
      "/app/x?%zz",
      "/app/x?a#b",
      "/app/x?a b",
      "/app/x\n",
      "/appx",
      "/app/~/sign-in",
      "/app/~",
      `/app/${"a".repeat(1020)}`,
    ])
      expect(consoleReturnPath(raw), JSON.stringify(raw)).toBe("/app");
  });
});
