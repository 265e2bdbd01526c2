/**
 * What the control plane reads from an engine's JSON plan and state (src/lib/terraform/json-plan.ts):
 * HCP's counts (a replacement is one addition and one destruction; reads and no-ops count
 * nothing), output-only changes, and a state's serial, lineage, addresses and outputs.
 */
import { describe, expect, it } from "vitest";
import {
  EngineDocumentError,
  JsonPlanSummaryScanner,
  StateSummaryScanner,
} from "../../../../src/lib/terraform/json-plan";

/** A JSON plan's summary, its text written to the scanner in one piece. */
function summarizeJsonPlan(plan: unknown) {
  const scanner = new JsonPlanSummaryScanner();
  scanner.write(JSON.stringify(plan));
  return scanner.end();
}

/** A state's summary, its text written to the scanner in one piece. */
function summarizeState(state: unknown) {
  const scanner = new StateSummaryScanner();
  scanner.write(JSON.stringify(state));
  return scanner.end();
}

const change = (address: string, actions: string[], extra: Record<string, unknown> = {}) => ({
  address,
  mode: address.startsWith("data.") ? "data" : "managed",
  type: "terraform_data",
  name: "x",
  change: { actions, ...extra },
});

describe("JsonPlanSummaryScanner", () => {
  it("counts creates, updates, deletes, replacements and imports as HCP does", () => {
    const s = summarizeJsonPlan({
      format_version: "1.2",
      resource_changes: [
        change("terraform_data.new", ["create"]),
        change("terraform_data.changed", ["update"]),
        change("terraform_data.gone", ["delete"]),
        change("terraform_data.replaced", ["delete", "create"]),
        change("terraform_data.same", ["no-op"]),
        change("terraform_data.imported", ["no-op"], { importing: { id: "abc" } }),
        change("data.terraform_remote_state.r", ["read"]),
      ],
    });
    expect(s).toMatchObject({ additions: 2, changes: 1, destructions: 2, imports: 1, hasChanges: true });
    expect(s.addresses).toEqual([
      "terraform_data.changed",
      "terraform_data.imported",
      "terraform_data.new",
      "terraform_data.replaced",
      "terraform_data.same",
    ]);
  });

  it("has no changes when everything is a no-op, and changes when only an output changes", () => {
    expect(summarizeJsonPlan({ resource_changes: [change("terraform_data.a", ["no-op"])] }).hasChanges).toBe(false);
    expect(summarizeJsonPlan({}).hasChanges).toBe(false);
    expect(summarizeJsonPlan({ output_changes: { name: { actions: ["update"] } } }).hasChanges).toBe(true);
  });

  it("refuses what is not a JSON plan", () => {
    expect(() => summarizeJsonPlan([])).toThrow(EngineDocumentError);
    expect(() => summarizeJsonPlan({ resource_changes: {} })).toThrow(EngineDocumentError);
    expect(() => summarizeJsonPlan({ resource_changes: [{ address: "a" }] })).toThrow(EngineDocumentError);
  });
});

describe("StateSummaryScanner", () => {
  it("reads serial, lineage, managed resource addresses and outputs", () => {
    const s = summarizeState({
      version: 4,
      serial: 7,
      lineage: "l-1",
      outputs: { name: { value: "x", type: "string" }, secret: { value: "y", type: "string", sensitive: true } },
      resources: [
        { mode: "managed", type: "terraform_data", name: "b", instances: [] },
        { module: "module.child", mode: "managed", type: "terraform_data", name: "a", instances: [] },
        { mode: "data", type: "terraform_remote_state", name: "r", instances: [] },
      ],
    });
    expect(s).toEqual({
      serial: 7,
      lineage: "l-1",
      resources: ["module.child.terraform_data.a", "terraform_data.b"],
      outputs: [
        { name: "name", sensitive: false },
        { name: "secret", sensitive: true },
      ],
    });
  });

  it("refuses a state without a serial or lineage", () => {
    expect(() => summarizeState({ lineage: "l" })).toThrow(EngineDocumentError);
    expect(() => summarizeState({ serial: -1, lineage: "l" })).toThrow(EngineDocumentError);
    expect(() => summarizeState({ serial: 1, lineage: "" })).toThrow(EngineDocumentError);
  });
});
