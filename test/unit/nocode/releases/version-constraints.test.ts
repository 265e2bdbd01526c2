/**
 * Decision B9: constraint parsing is linear and capped at 256
 * characters. `^\s*(op)?\s*…\s*$` backtracked quadratically over a run of spaces: the
 * inputs below took minutes before (no timing is asserted; the old code never finished
 * within the test timeout).
 */
import { describe, expect, it } from "vitest";
import { MAX_CONSTRAINT_LENGTH, parseConstraint } from "../../../../src/nocode/releases/version-constraints";

describe("parseConstraint (B9)", () => {
  it("refuses `1.0,` + a million spaces + `x`, and anything over 256 characters", () => {
    expect(parseConstraint(`1.0,${" ".repeat(1_000_000)}x`)).toBeNull();
    expect(parseConstraint(`>= 1.0${" ".repeat(MAX_CONSTRAINT_LENGTH)}`)).toBeNull();
    expect(MAX_CONSTRAINT_LENGTH).toBe(256);
  });

  it("stays linear on long runs of spaces within the cap, and keeps go-version's spacing rules", () => {
    // 250 spaces between every piece: fine, and no quadratic blow-up per term.
    expect(parseConstraint(`${" ".repeat(120)}>=${" ".repeat(120)}1.0`)?.[0]).toMatchObject({ operator: ">=" });
    expect(parseConstraint(`1.0,${" ".repeat(250)}x`)).toBeNull();
    expect(parseConstraint(" ~> 1.5 , != 1.5.3 ")?.map((t) => t.operator)).toEqual(["~>", "!="]);
    expect(parseConstraint("1.5.7")?.[0]).toMatchObject({ operator: "=" });
    expect(parseConstraint(">= ")).toBeNull();
    expect(parseConstraint("")).toBeNull();
  });
});
