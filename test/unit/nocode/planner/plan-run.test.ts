/**
 * The N7 planner on summaries read by the real Terraform reader from the upgrade
 * fixtures; every expectation below is written by hand from the fixture sources.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { TerraformParser } from "../../../../src/lib/terraform/parser";
import { summarizeModule } from "../../../../src/lib/terraform/summarize-module";
import type { ModuleSummary } from "../../../../src/lib/terraform/types";
import {
  changedVariables,
  type EffectiveValue,
  type PlannedConfiguration,
  planRun,
} from "../../../../src/nocode/planner";
import { type UpgradeFixture, upgradeFixtureFiles, V1_ADDRESSES } from "../../../fixtures/terraform-upgrade";
import { nodeTerraformParser } from "../../lib/terraform/node-parser";

let parser: TerraformParser;
const summaries = new Map<UpgradeFixture, ModuleSummary>();
beforeAll(async () => {
  parser = await nodeTerraformParser();
  for (const v of ["upgrade-v1", "upgrade-v2"] as const) {
    summaries.set(v, summarizeModule(new Map(Object.entries(upgradeFixtureFiles(v))), parser));
  }
});

const defaults: Record<string, EffectiveValue> = {
  prefix: { value: "app", isDefault: true },
  length: { value: 8, isDefault: true },
  region: { value: "eu-west-1", isDefault: true },
  db_password: { sensitiveHash: "hash-of-secret-1", isDefault: false },
};

function config(version: UpgradeFixture, overrides: Record<string, EffectiveValue> = {}): PlannedConfiguration {
  return { summary: summaries.get(version)!, values: { ...defaults, ...overrides } };
}

const actionsOf = (plan: ReturnType<typeof planRun>) =>
  Object.fromEntries(plan.resourceChanges.map((c) => [c.address, c.actions.join(",")]));

describe("planRun (N7)", () => {
  it("creates every node of a first run, expanding local modules and skipping data sources", () => {
    const plan = planRun({ baseline: null, proposed: config("upgrade-v1") });
    expect(plan.resourceChanges.map((c) => c.address)).toEqual(V1_ADDRESSES);
    expect(plan.resourceChanges.every((c) => c.actions[0] === "create")).toBe(true);
    expect(plan).toMatchObject({ hasChanges: true, additions: 7, changes: 0, destructions: 0 });
    expect(plan.addresses).toEqual(V1_ADDRESSES);
  });

  it("plans nothing for the same version and values", () => {
    const plan = planRun({ baseline: config("upgrade-v1"), proposed: config("upgrade-v1") });
    expect(plan).toMatchObject({ hasChanges: false, additions: 0, changes: 0, destructions: 0 });
    expect(plan.resourceChanges.every((c) => c.actions[0] === "no-op")).toBe(true);
  });

  it("v1 → v2: an added resource, a removed resource, a changed body; comments alone change nothing", () => {
    const plan = planRun({ baseline: config("upgrade-v1"), proposed: config("upgrade-v2") });
    expect(actionsOf(plan)).toEqual({
      "module.labels.random_integer.n": "no-op",
      "module.labels.random_pet.label": "no-op",
      "module.remote": "no-op",
      "random_id.legacy": "delete",
      "random_password.db": "no-op",
      "random_pet.name": "no-op",
      "random_string.suffix": "update",
      "random_uuid.added": "create",
    });
    expect(plan.resourceChanges.find((c) => c.address === "random_string.suffix")?.reasons).toEqual([
      "configuration changed",
    ]);
    expect(plan).toMatchObject({ hasChanges: true, additions: 1, changes: 1, destructions: 1 });
    expect(plan.addresses).not.toContain("random_id.legacy");
    expect(plan.addresses).toContain("random_uuid.added");
  });

  it("a changed variable reaches a resource through a chain of locals", () => {
    const plan = planRun({
      baseline: config("upgrade-v1"),
      proposed: config("upgrade-v1", { region: { value: "us-east-1", isDefault: false } }),
    });
    const updates = plan.resourceChanges.filter((c) => c.actions[0] === "update");
    expect(updates).toEqual([
      { address: "random_pet.name", actions: ["update"], reasons: ['variable "region" changed'] },
    ]);
  });

  it("a variable in a local module call's arguments updates every node inside that module", () => {
    const plan = planRun({
      baseline: config("upgrade-v1"),
      proposed: config("upgrade-v1", { prefix: { value: "web", isDefault: false } }),
    });
    expect(actionsOf(plan)).toMatchObject({
      "module.labels.random_integer.n": "update",
      "module.labels.random_pet.label": "update",
      "random_pet.name": "update",
      "random_string.suffix": "no-op",
      "module.remote": "no-op",
    });
    // data.random_seed.unused also references var.prefix, but data sources are not planned
    expect(plan.resourceChanges.some((c) => c.address.startsWith("data."))).toBe(false);
  });

  it("a remote module call is one node that updates when its arguments reach a changed variable", () => {
    const plan = planRun({
      baseline: config("upgrade-v1"),
      proposed: config("upgrade-v1", { length: { value: 12, isDefault: false } }),
    });
    expect(actionsOf(plan)).toMatchObject({
      "module.remote": "update",
      "random_string.suffix": "update",
      "random_pet.name": "no-op",
    });
  });

  it("compares sensitive values by keyed hash and never names the value", () => {
    const plan = planRun({
      baseline: config("upgrade-v1"),
      proposed: config("upgrade-v1", { db_password: { sensitiveHash: "hash-of-secret-2", isDefault: false } }),
    });
    const db = plan.resourceChanges.find((c) => c.address === "random_password.db");
    expect(db).toEqual({
      address: "random_password.db",
      actions: ["update"],
      reasons: ['variable "db_password" changed'],
    });
    expect(JSON.stringify(plan)).not.toContain("hash-of-secret");
  });

  it("treats a value equal to the default as unchanged, deeply", () => {
    const a = {
      summary: summaries.get("upgrade-v1")!,
      values: { x: { value: { b: [1, 2], a: "z" }, isDefault: true } },
    };
    const b = {
      summary: summaries.get("upgrade-v1")!,
      values: { x: { value: { a: "z", b: [1, 2] }, isDefault: false } },
    };
    expect(changedVariables(a, b)).toEqual([]);
    expect(changedVariables(a, { ...b, values: { x: { value: { a: "z", b: [2, 1] }, isDefault: false } } })).toEqual([
      "x",
    ]);
  });
});
