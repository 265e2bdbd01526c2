/**
 * The engine-version resolver of decision N6, form by form, against a fixed release list
 * (pickEngineVersion), plus the constraint grammar itself and the seeded list
 * (resolveEngineVersion over D1). This file never changes the stored list.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDb } from "../../../../src/db/client";
import { NocodeError } from "../../../../src/nocode/errors";
import {
  engineVersionError,
  pickEngineVersion,
  type ReleaseCandidate,
  requireEngineVersion,
  resolveEngineVersion,
} from "../../../../src/nocode/releases/resolve";
import {
  compareVersions,
  parseConstraint,
  parseVersion,
  satisfies,
} from "../../../../src/nocode/releases/version-constraints";

const release = (version: string, flags: Partial<ReleaseCandidate> = {}): ReleaseCandidate => ({
  version,
  enabled: true,
  beta: false,
  deprecated: false,
  ...flags,
});

const RELEASES: ReleaseCandidate[] = [
  release("1.2.9"),
  release("1.3.0"),
  release("1.3.9"),
  release("1.5.0"),
  release("1.5.6", { deprecated: true }),
  release("1.5.7", { enabled: false }),
  release("1.6.0"),
  release("1.6.6"),
  release("1.10.0", { beta: true }),
  release("1.7.0-rc1", { beta: true }),
  release("2.0.0", { enabled: false }),
];

const resolved = (input: string | null | undefined, list = RELEASES) => {
  const r = pickEngineVersion(list, input);
  if (!r.ok) throw new Error(`expected ${input} to resolve, got ${r.reason}: ${r.detail}`);
  return r;
};
const failure = (input: string | null | undefined, list = RELEASES) => {
  const r = pickEngineVersion(list, input);
  if (r.ok) throw new Error(`expected ${input} to fail, got ${r.version}`);
  return r;
};

describe("pickEngineVersion (N6)", () => {
  it("omitted → the newest enabled non-beta release (beta 1.10.0 and disabled 2.0.0 never)", () => {
    for (const input of [undefined, null, "latest"]) {
      expect(resolved(input)).toEqual({ ok: true, version: "1.6.6", requested: "1.6.6", kind: "default" });
    }
  });

  it("exact → echoed, deprecated included; beta may be named exactly", () => {
    expect(resolved("1.3.0")).toEqual({ ok: true, version: "1.3.0", requested: "1.3.0", kind: "exact" });
    expect(resolved("1.5.6")).toMatchObject({ version: "1.5.6", kind: "exact" });
    expect(resolved("1.10.0")).toMatchObject({ version: "1.10.0", kind: "exact" });
    expect(resolved("1.7.0-rc1")).toMatchObject({ version: "1.7.0-rc1", kind: "exact" });
  });

  it("exact but disabled or unlisted → typed failures", () => {
    expect(failure("1.5.7")).toMatchObject({ reason: "unavailable" });
    expect(failure("1.4.0")).toMatchObject({ reason: "unknown" });
    expect(failure("2.0.0")).toMatchObject({ reason: "unavailable" });
  });

  it("~> X.Y → newest within X, at least X.Y", () => {
    expect(resolved("~> 1.5")).toEqual({ ok: true, version: "1.6.6", requested: "~> 1.5", kind: "constraint" });
    expect(resolved("~> 1.3")).toMatchObject({ version: "1.6.6" });
  });

  it("~> X.Y.Z → newest within X.Y (disabled skipped, deprecated kept)", () => {
    expect(resolved("~> 1.5.0")).toMatchObject({ version: "1.5.6", kind: "constraint" });
    expect(resolved("~> 1.3.0")).toMatchObject({ version: "1.3.9" });
    expect(failure("~> 1.5.7")).toMatchObject({ reason: "unsatisfiable" });
  });

  it("~> X has no upper bound (go-version), so it reaches 2.x when that is enabled", () => {
    expect(resolved("~> 1")).toMatchObject({ version: "1.6.6" });
    expect(resolved("~> 1", [...RELEASES, release("2.1.0")])).toMatchObject({ version: "2.1.0" });
    expect(resolved("~> 1.5", [...RELEASES, release("2.1.0")])).toMatchObject({ version: "1.6.6" });
  });

  it(">= and < together (comma is AND)", () => {
    expect(resolved(">= 1.3, < 1.6")).toMatchObject({ version: "1.5.6", requested: ">= 1.3, < 1.6" });
    expect(resolved(">1.3.0,<=1.3.9")).toMatchObject({ version: "1.3.9" });
    expect(resolved("> 1.2.9, < 1.3.9")).toMatchObject({ version: "1.3.0" });
  });

  it("= X.Y.Z, a bare partial version, and v-prefixes", () => {
    expect(resolved("= 1.3.0")).toMatchObject({ version: "1.3.0", kind: "constraint" });
    expect(resolved("=1.5.6")).toMatchObject({ version: "1.5.6" });
    expect(resolved("1.5")).toMatchObject({ version: "1.5.0", kind: "constraint" });
    expect(resolved("v1.3.9")).toMatchObject({ version: "1.3.9" });
    expect(resolved("  ~> 1.3.0  ")).toMatchObject({ version: "1.3.9", requested: "~> 1.3.0" });
  });

  it("!= excludes one release", () => {
    expect(resolved("!= 1.6.6")).toMatchObject({ version: "1.6.0" });
    expect(resolved(">= 1.5, != 1.6.6, != 1.6.0")).toMatchObject({ version: "1.5.6" });
  });

  it("disabled and beta releases never satisfy a constraint", () => {
    expect(failure("= 1.5.7")).toMatchObject({ reason: "unsatisfiable" });
    expect(failure("~> 1.10")).toMatchObject({ reason: "unsatisfiable" });
    expect(failure(">= 1.7.0-rc1")).toMatchObject({ reason: "unsatisfiable" });
    expect(failure(">= 2.0")).toMatchObject({ reason: "unsatisfiable" });
  });

  it("unsatisfiable constraints", () => {
    expect(failure("> 9.0")).toMatchObject({ reason: "unsatisfiable" });
    expect(failure("< 1.0")).toMatchObject({ reason: "unsatisfiable" });
    expect(failure(">= 1.6, < 1.5")).toMatchObject({ reason: "unsatisfiable" });
  });

  it.each([
    "abc",
    "~>",
    ">= 1.3,",
    "=> 1.0",
    "1.x",
    "~> 1.5 || 1.6",
    "",
    "  ",
    ">== 1.0",
    "1.2.3.4.5.6.7.8.9",
    "~> -1",
  ])("%j is invalid", (input) => {
    const f = failure(input);
    expect(f.reason).toBe("invalid");
    expect(f.detail).toContain("not a valid engine version");
  });

  it("an empty list cannot resolve anything", () => {
    expect(failure(undefined, [])).toMatchObject({ reason: "no-releases" });
    expect(failure("~> 1.5", [])).toMatchObject({ reason: "unsatisfiable" });
    expect(failure("1.5.0", [])).toMatchObject({ reason: "unknown" });
  });
});

describe("version grammar (go-version semantics)", () => {
  const v = (s: string) => parseVersion(s)!;
  it("orders versions numerically, releases after their pre-releases", () => {
    expect(compareVersions(v("1.10.0"), v("1.9.0"))).toBeGreaterThan(0);
    expect(compareVersions(v("1.7.0"), v("1.7.0-rc1"))).toBeGreaterThan(0);
    expect(compareVersions(v("1.7.0-rc1"), v("1.7.0-rc2"))).toBeLessThan(0);
    expect(compareVersions(v("1.0.0-alpha.1"), v("1.0.0-alpha.beta"))).toBeLessThan(0);
    expect(compareVersions(v("1.5"), v("1.5.0"))).toBe(0);
    expect(compareVersions(v("1.5.0+build"), v("1.5.0"))).toBe(0);
  });

  it("pre-releases only match constraints naming a pre-release of the same X.Y.Z", () => {
    const c = (s: string) => parseConstraint(s)!;
    expect(satisfies(v("1.7.0-rc1"), c(">= 1.6"))).toBe(false);
    expect(satisfies(v("1.7.0-rc2"), c(">= 1.7.0-rc1"))).toBe(true);
    expect(satisfies(v("1.8.0-rc1"), c(">= 1.7.0-rc1"))).toBe(false);
    expect(satisfies(v("1.7.0"), c(">= 1.7.0-rc1"))).toBe(true);
    expect(satisfies(v("1.7.0"), c("~> 1.7.0-rc1"))).toBe(false);
    expect(satisfies(v("1.7.0-rc1"), c("1.7.0-rc1"))).toBe(true);
  });

  it("parses every operator", () => {
    expect(parseConstraint(">= 1.3, < 1.6")!.map((t) => t.operator)).toEqual([">=", "<"]);
    expect(parseConstraint("~>1.5")![0]!.operator).toBe("~>");
    expect(parseConstraint("1.5.7")![0]!.operator).toBe("=");
    for (const op of ["=", "!=", ">", ">=", "<", "<=", "~>"])
      expect(parseConstraint(`${op} 1.0`)![0]!.operator).toBe(op);
  });
});

describe("resolveEngineVersion over the seeded release list (migration 0003)", () => {
  const db = () => createDb(env.DB);

  it("holds every stable 1.x release, all enabled, none beta", async () => {
    const rows = await env.DB.prepare("SELECT version, enabled, beta, deprecated FROM terraform_versions").all<{
      version: string;
      enabled: number;
      beta: number;
    }>();
    const versions = rows.results.map((r) => r.version);
    expect(versions).toHaveLength(132);
    expect(versions).toContain("1.0.0");
    expect(versions).toContain("1.0.11");
    expect(versions).toContain("1.5.7");
    expect(versions).toContain("1.14.9");
    for (let minor = 0; minor <= 16; minor++) expect(versions).toContain(`1.${minor}.0`);
    expect(rows.results.every((r) => r.enabled === 1 && r.beta === 0)).toBe(true);
    expect(versions.every((x) => /^1\.\d+\.\d+$/.test(x))).toBe(true);
  });

  it("resolves each form", async () => {
    expect(await resolveEngineVersion(db(), undefined)).toMatchObject({ ok: true, version: "1.16.5", kind: "default" });
    expect(await resolveEngineVersion(db(), "1.5.7")).toMatchObject({
      ok: true,
      version: "1.5.7",
      requested: "1.5.7",
      kind: "exact",
    });
    expect(await resolveEngineVersion(db(), "~> 1.5")).toMatchObject({
      ok: true,
      version: "1.16.5",
      requested: "~> 1.5",
    });
    expect(await resolveEngineVersion(db(), "~> 1.5.0")).toMatchObject({ ok: true, version: "1.5.7" });
    expect(await resolveEngineVersion(db(), ">= 1.3, < 1.6")).toMatchObject({ ok: true, version: "1.5.7" });
    expect(await resolveEngineVersion(db(), "= 1.5.7")).toMatchObject({ ok: true, version: "1.5.7" });
    expect(await resolveEngineVersion(db(), "!= 1.16.5")).toMatchObject({ ok: true, version: "1.16.4" });
    expect(await resolveEngineVersion(db(), "0.15.5")).toMatchObject({ ok: false, reason: "unknown" });
    expect(await resolveEngineVersion(db(), "~> 0.15")).toMatchObject({ ok: false, reason: "unsatisfiable" });
    expect(await resolveEngineVersion(db(), "soon")).toMatchObject({ ok: false, reason: "invalid" });
  });

  it("failures become 422 invalid attribute on engine-version (or the given attribute)", async () => {
    const err = await requireEngineVersion(db(), "~> 0.12").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NocodeError);
    expect((err as NocodeError).toObjects()).toEqual([
      {
        status: "422",
        title: "invalid attribute",
        detail: 'No available engine release satisfies the constraint "~> 0.12"',
        source: { pointer: "/data/attributes/engine-version" },
      },
    ]);
    expect(engineVersionError({ detail: "x" }, "terraform-version").toObjects()[0]!.source).toEqual({
      pointer: "/data/attributes/terraform-version",
    });
    await expect(requireEngineVersion(db(), "~> 1.2.0")).resolves.toMatchObject({ version: "1.2.9" });
  });
});
