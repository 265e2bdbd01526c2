/**
 * Semantic versions of module versions and decision N3's "latest": the highest
 * non-pre-release semver (precedence per semver 2.0.0 §11, build metadata ignored).
 */
import { describe, expect, it } from "vitest";
import {
  compareSemver,
  compareVersionStrings,
  parseSemver,
  pickLatestRelease,
} from "../../../../src/nocode/registry/semver";

describe("parseSemver", () => {
  it.each([
    "0.0.0",
    "1.2.3",
    "10.20.30",
    "1.0.0-alpha",
    "1.0.0-alpha.1",
    "1.0.0-0.3.7",
    "1.0.0-x.7.z.92",
    "1.0.0+20130313144700",
    "1.0.0-beta+exp.sha.5114f85",
    "1.0.0-x-y-z.--",
    "99999999999999999999.0.0",
  ])("accepts %s", (v) => {
    expect(parseSemver(v)).not.toBeNull();
  });

  it.each([
    "",
    "1",
    "1.2",
    "v1.2.3",
    "01.2.3",
    "1.02.3",
    "1.2.03",
    "1.2.3-01",
    "1.2.3-",
    "1.2.3+",
    "1.2.3-a..b",
    "1.2.3 ",
    " 1.2.3",
    "1.2.3.4",
    `1.2.3-${"a".repeat(130)}`,
  ])("refuses %j", (v) => {
    expect(parseSemver(v)).toBeNull();
  });

  it("splits the parts", () => {
    expect(parseSemver("1.2.3-rc.1+build.5")).toEqual({
      major: "1",
      minor: "2",
      patch: "3",
      prerelease: ["rc", "1"],
      build: ["build", "5"],
    });
  });
});

describe("precedence", () => {
  it("orders the semver 2.0.0 §11 example chain", () => {
    const chain = [
      "1.0.0-alpha",
      "1.0.0-alpha.1",
      "1.0.0-alpha.beta",
      "1.0.0-beta",
      "1.0.0-beta.2",
      "1.0.0-beta.11",
      "1.0.0-rc.1",
      "1.0.0",
    ];
    for (let i = 1; i < chain.length; i++) {
      expect(
        compareSemver(parseSemver(chain[i - 1]!)!, parseSemver(chain[i]!)!),
        `${chain[i - 1]} < ${chain[i]}`,
      ).toBeLessThan(0);
    }
    const shuffled = [...chain].reverse();
    expect(shuffled.sort(compareVersionStrings)).toEqual(chain);
  });

  it("compares numbers numerically, even past 2^53", () => {
    expect(compareVersionStrings("1.10.0", "1.9.0")).toBeGreaterThan(0);
    expect(compareVersionStrings("9007199254740993.0.0", "9007199254740992.0.0")).toBeGreaterThan(0);
  });

  it("ignores build metadata for precedence but orders deterministically", () => {
    expect(compareSemver(parseSemver("1.0.0+a")!, parseSemver("1.0.0+b")!)).toBe(0);
    expect(compareVersionStrings("1.0.0+a", "1.0.0+b")).toBeLessThan(0);
  });
});

describe("pickLatestRelease (N3)", () => {
  const v = (...versions: string[]) => versions.map((version) => ({ version }));

  it("picks the highest release and skips pre-releases", () => {
    expect(pickLatestRelease(v("1.0.0", "1.10.0", "1.9.9", "2.0.0-rc.1"))?.version).toBe("1.10.0");
    expect(pickLatestRelease(v("0.1.0+build"))?.version).toBe("0.1.0+build");
  });

  it("is null when there is no release", () => {
    expect(pickLatestRelease([])).toBeNull();
    expect(pickLatestRelease(v("1.0.0-alpha", "2.0.0-beta"))).toBeNull();
  });
});
