import { describe, expect, it } from "vitest";
import { goFormat } from "../../../src/ssh/fields";

describe("goFormat (Go's %v of a JSON value)", () => {
  it("renders scalars, lists and maps as Vault prints them", () => {
    expect(goFormat(null)).toBe("<nil>");
    expect(goFormat("a b")).toBe("a b");
    expect(goFormat(1.5)).toBe("1.5");
    expect(goFormat([1, "x", [true, null]])).toBe("[1 x [true <nil>]]");
    expect(goFormat({ b: [1, 2], a: { z: "y" } })).toBe("map[a:map[z:y] b:[1 2]]");
    expect(goFormat([])).toBe("[]");
    expect(goFormat({})).toBe("map[]");
  });

  it("does not recurse: 100,000 levels render without overflowing the stack (B9)", () => {
    let value: unknown = "x";
    for (let i = 0; i < 100_000; i++) value = [value];
    const text = goFormat(value);
    expect(text).toBe(`${"[".repeat(100_000)}x${"]".repeat(100_000)}`);
  });
});
