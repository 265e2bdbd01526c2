import { describe, expect, it } from "vitest";
import { jsonNestingExceeds, MAX_JSON_DEPTH } from "../../../../src/lib/http/body";

describe("jsonNestingExceeds (B9)", () => {
  const deep = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;

  it("counts arrays and objects, a top-level value being depth 1", () => {
    expect(jsonNestingExceeds(deep(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBe(false);
    expect(jsonNestingExceeds(deep(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)).toBe(true);
    expect(jsonNestingExceeds('{"a":{"b":[1,{"c":2}]}}', 4)).toBe(false);
    expect(jsonNestingExceeds('{"a":{"b":[1,{"c":2}]}}', 3)).toBe(true);
    expect(jsonNestingExceeds("[[],[],[],[]]", 2)).toBe(false);
  });

  it("ignores brackets inside strings, escaped quotes included", () => {
    expect(jsonNestingExceeds(JSON.stringify({ a: "[[[[{{{{" }), 1)).toBe(false);
    expect(jsonNestingExceeds(JSON.stringify({ a: '\\"[[[[', b: '"{{{' }), 1)).toBe(false);
  });

  it("handles a million levels without recursion", () => {
    expect(jsonNestingExceeds(deep(1_000_000), MAX_JSON_DEPTH)).toBe(true);
  });
});
