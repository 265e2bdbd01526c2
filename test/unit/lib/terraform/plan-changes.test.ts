/**
 * The changes a person reviews in an engine's JSON plan (src/lib/terraform/plan-changes.ts),
 * on JSON plans Terraform 1.11.4 wrote for test/fixtures/agent/modules/plan-changes
 * (test/fixtures/terraform-plan/record.sh): creations with values known after apply, an
 * update in place, a replacement forced by `triggers_replace`, a sensitive attribute inside an
 * object, plain and sensitive outputs, a destruction — and hand-made plans for the bounds and
 * refusals. No sensitive value may appear anywhere in the result.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  changeAction,
  describePlanChanges,
  PLAN_VIEW_LIMITS,
  PlanChangesError,
} from "../../../../src/lib/terraform/plan-changes";

const recorded = (name: string): Record<string, unknown> =>
  JSON.parse(
    readFileSync(
      path.join(import.meta.dirname, "../../../fixtures/terraform-plan/terraform-1.11.4", `${name}.json`),
      "utf8",
    ),
  );

/** The passwords the recordings were made with (record.sh). */
const SECRETS = ["first-recorded-password", "second-recorded-password"];

function expectNoSecret(value: unknown): void {
  const text = JSON.stringify(value);
  for (const secret of SECRETS) expect(text).not.toContain(secret);
}

describe("describePlanChanges on recorded plans", () => {
  it("the first plan: every attribute set, ids and outputs known after apply, the password masked", () => {
    const plan = recorded("create");
    // The recording does carry the secret; the result must not.
    expect(JSON.stringify(plan)).toContain(SECRETS[0]);
    const changes = describePlanChanges(plan);
    expectNoSecret(changes);
    expect(changes.resources.map((r) => [r.address, r.action])).toEqual([
      ["terraform_data.credentials", "create"],
      ["terraform_data.generation", "create"],
      ["terraform_data.server", "create"],
    ]);
    const credentials = changes.resources[0]!;
    expect(credentials.attributes).toEqual([
      { path: "id", before: { kind: "absent" }, after: { kind: "unknown" }, forcesReplacement: false },
      {
        path: "input.password",
        before: { kind: "absent" },
        after: { kind: "sensitive" },
        forcesReplacement: false,
      },
      {
        path: "input.user",
        before: { kind: "absent" },
        after: { kind: "value", text: '"admin"' },
        forcesReplacement: false,
      },
      { path: "output", before: { kind: "absent" }, after: { kind: "unknown" }, forcesReplacement: false },
    ]);
    const server = changes.resources[2]!;
    expect(server.attributes.map((a) => a.path)).toEqual([
      "id",
      "input.name",
      "input.size",
      "input.tags.team",
      "input.tags.tier",
      "output",
    ]);
    expect(server.attributes[2]!.after).toEqual({ kind: "value", text: "1" });
    expect(changes.outputs).toEqual([
      {
        name: "address",
        action: "create",
        before: { kind: "absent" },
        after: { kind: "value", text: '"alpha.example.test"' },
      },
      { name: "password", action: "create", before: { kind: "absent" }, after: { kind: "sensitive" } },
      { name: "server_id", action: "create", before: { kind: "absent" }, after: { kind: "unknown" } },
    ]);
    expect(changes.unchanged).toEqual([]);
  });

  it("a change: updates in place name their attributes, the replacement names what forces it, secrets stay masked", () => {
    const changes = describePlanChanges(recorded("change"));
    expectNoSecret(changes);
    const byAddress = Object.fromEntries(changes.resources.map((r) => [r.address, r]));
    expect(byAddress["terraform_data.server"]).toMatchObject({ action: "update", omittedAttributes: 0 });
    expect(byAddress["terraform_data.server"]!.attributes).toEqual([
      {
        path: "input.name",
        before: { kind: "value", text: '"alpha"' },
        after: { kind: "value", text: '"beta"' },
        forcesReplacement: false,
      },
      {
        path: "input.size",
        before: { kind: "value", text: "1" },
        after: { kind: "value", text: "2" },
        forcesReplacement: false,
      },
      {
        path: "input.tags.tier",
        before: { kind: "value", text: '"small"' },
        after: { kind: "value", text: '"large"' },
        forcesReplacement: false,
      },
      {
        path: "output",
        before: { kind: "value", text: '{name = "alpha", size = 1, tags = {team = "platform", tier = "small"}}' },
        after: { kind: "unknown" },
        forcesReplacement: false,
      },
    ]);
    // The password changes: both sides masked. terraform_data's `output` carries no sensitive
    // mark before the change, yet its password is masked there too (the second line of defence).
    expect(byAddress["terraform_data.credentials"]!.attributes).toEqual([
      { path: "input.password", before: { kind: "sensitive" }, after: { kind: "sensitive" }, forcesReplacement: false },
      {
        path: "output",
        before: { kind: "value", text: '{password = (sensitive value), user = "admin"}' },
        after: { kind: "unknown" },
        forcesReplacement: false,
      },
    ]);
    expect(byAddress["terraform_data.generation"]).toMatchObject({
      action: "replace",
      reason: "replace because cannot update",
    });
    expect(byAddress["terraform_data.generation"]!.attributes).toEqual([
      {
        path: "id",
        before: { kind: "value", text: expect.stringMatching(/^"[0-9a-f-]{36}"$/) },
        after: { kind: "unknown" },
        forcesReplacement: false,
      },
      {
        path: "input",
        before: { kind: "value", text: '"generation-1"' },
        after: { kind: "value", text: '"generation-2"' },
        forcesReplacement: false,
      },
      {
        path: "output",
        before: { kind: "value", text: '"generation-1"' },
        after: { kind: "unknown" },
        forcesReplacement: false,
      },
      {
        path: "triggers_replace[0]",
        before: { kind: "value", text: "1" },
        after: { kind: "value", text: "2" },
        forcesReplacement: true,
      },
    ]);
    expect(changes.outputs).toEqual([
      {
        name: "address",
        action: "update",
        before: { kind: "value", text: '"alpha.example.test"' },
        after: { kind: "value", text: '"beta.example.test"' },
      },
      { name: "password", action: "update", before: { kind: "sensitive" }, after: { kind: "sensitive" } },
    ]);
    expect(changes.unchangedOutputs).toBe(1);
  });

  it("a destruction lists the resources without attributes", () => {
    const changes = describePlanChanges(recorded("destroy"));
    expectNoSecret(changes);
    expect(changes.resources.map((r) => [r.action, r.attributes.length])).toEqual([
      ["delete", 0],
      ["delete", 0],
      ["delete", 0],
    ]);
    expect(changes.outputs.map((o) => [o.name, o.action, o.after.kind])).toEqual([
      ["address", "delete", "absent"],
      ["password", "delete", "absent"],
      ["server_id", "delete", "absent"],
    ]);
  });
});

describe("describePlanChanges: bounds and refusals", () => {
  const resource = (address: string, actions: string[], change: Record<string, unknown> = {}) => ({
    address,
    mode: "managed",
    type: "terraform_data",
    name: address.split(".")[1],
    change: {
      actions,
      before: null,
      after: {},
      after_unknown: {},
      before_sensitive: false,
      after_sensitive: {},
      ...change,
    },
  });

  it("lists at most the limit of resources, attributes and outputs, and counts the rest", () => {
    const many = Array.from({ length: PLAN_VIEW_LIMITS.resources + 7 }, (_, i) =>
      resource(`terraform_data.r${i}`, ["create"], { after: { input: i } }),
    );
    const quiet = Array.from({ length: PLAN_VIEW_LIMITS.resources + 3 }, (_, i) =>
      resource(`terraform_data.q${i}`, ["no-op"]),
    );
    const wide = Object.fromEntries(
      Array.from({ length: PLAN_VIEW_LIMITS.attributesPerResource + 5 }, (_, i) => [`a${i}`, i]),
    );
    const outputs = Object.fromEntries(
      Array.from({ length: PLAN_VIEW_LIMITS.outputs + 2 }, (_, i) => [`o${i}`, { actions: ["create"], after: i }]),
    );
    const changes = describePlanChanges({
      resource_changes: [resource("terraform_data.wide", ["create"], { after: wide }), ...many, ...quiet],
      output_changes: outputs,
    });
    expect(changes.resources).toHaveLength(PLAN_VIEW_LIMITS.resources);
    expect(changes.omittedResources).toBe(8);
    expect(changes.resources[0]!.attributes).toHaveLength(PLAN_VIEW_LIMITS.attributesPerResource);
    expect(changes.resources[0]!.omittedAttributes).toBe(5);
    expect(changes.unchanged).toHaveLength(PLAN_VIEW_LIMITS.resources);
    expect(changes.omittedUnchanged).toBe(3);
    expect(changes.outputs).toHaveLength(PLAN_VIEW_LIMITS.outputs);
    expect(changes.omittedOutputs).toBe(2);
  });

  it("cuts long values and summarises deep nesting without recursing without end", () => {
    let deep: unknown = "bottom";
    for (let i = 0; i < 5000; i++) deep = { d: deep };
    const changes = describePlanChanges({
      resource_changes: [resource("terraform_data.a", ["create"], { after: { long: "x".repeat(10_000), deep } })],
    });
    const [deepChange, longChange] = changes.resources[0]!.attributes;
    expect(longChange!.after).toEqual({ kind: "value", text: expect.stringMatching(/^"x+…$/) });
    expect((longChange!.after as { text: string }).text).toHaveLength(PLAN_VIEW_LIMITS.valueChars);
    expect(deepChange!.path.startsWith("deep.d.d")).toBe(true);
    expect(deepChange!.after.kind).toBe("value");
  });

  it("masks a sensitive value everywhere: nested marks, whole-attribute marks, one side marked, other resources", () => {
    const changes = describePlanChanges({
      resource_changes: [
        resource("terraform_data.a", ["update"], {
          before: { list: ["pub", "hunter22"], whole: "old-secret-x" },
          after: { list: ["pub", "hunter23"], whole: "new-secret-y" },
          before_sensitive: { list: [false, true], whole: true },
          after_sensitive: { list: [false, true] },
        }),
        resource("terraform_data.b", ["create"], { after: { copy: "prefix-hunter23-suffix", plain: "fine" } }),
      ],
      output_changes: {
        o: { actions: ["update"], before: "x", after: "y", before_sensitive: false, after_sensitive: true },
      },
      variables: { db: { value: "declared-secret-value" }, other: { value: "declared-plain-value" } },
      configuration: { root_module: { variables: { db: { sensitive: true }, other: {} } } },
    });
    const text = JSON.stringify(changes);
    for (const secret of ["hunter22", "hunter23", "old-secret-x", "new-secret-y"]) expect(text).not.toContain(secret);
    expect(changes.resources[0]!.attributes).toEqual([
      { path: "list[1]", before: { kind: "sensitive" }, after: { kind: "sensitive" }, forcesReplacement: false },
      { path: "whole", before: { kind: "sensitive" }, after: { kind: "sensitive" }, forcesReplacement: false },
    ]);
    expect(changes.resources[1]!.attributes.map((a) => [a.path, a.after])).toEqual([
      ["copy", { kind: "sensitive" }],
      ["plain", { kind: "value", text: '"fine"' }],
    ]);
    expect(changes.outputs[0]).toMatchObject({ before: { kind: "sensitive" }, after: { kind: "sensitive" } });
  });

  it("names Terraform's actions and refuses what is not a JSON plan", () => {
    expect(changeAction(["delete", "create"])).toBe("replace");
    expect(changeAction(["create", "delete"])).toBe("replace");
    expect(changeAction(["read"])).toBe("read");
    expect(changeAction(["update", "create"])).toBeNull();
    expect(() => describePlanChanges([])).toThrow(PlanChangesError);
    expect(() => describePlanChanges({ resource_changes: {} })).toThrow(PlanChangesError);
    expect(() => describePlanChanges({ resource_changes: [{ address: "a.b" }] })).toThrow(PlanChangesError);
    expect(() =>
      describePlanChanges({ resource_changes: [{ address: "a.b", change: { actions: ["explode"] } }] }),
    ).toThrow(PlanChangesError);
    expect(describePlanChanges({})).toEqual({
      resources: [],
      omittedResources: 0,
      unchanged: [],
      omittedUnchanged: 0,
      outputs: [],
      omittedOutputs: 0,
      unchangedOutputs: 0,
    });
  });
});
