/**
 * The plan page of decision N8 (HTML and JSON) for the v1 → v2 upgrade fixtures, planned
 * by the real N7 planner on summaries read by the real Terraform reader. Expectations are
 * written by hand from test/fixtures/terraform-upgrade.
 */

import type { HtmlEscapedString } from "hono/utils/html";
import { beforeAll, describe, expect, it } from "vitest";
import { summarizeModule } from "../../../../src/lib/terraform/summarize-module";
import type { ModuleSummary } from "../../../../src/lib/terraform/types";
import { messageMarkup } from "../../../../src/nocode/browser/message-page";
import { addressParts, planJson } from "../../../../src/nocode/plan-page/json";
import {
  changedVariablesFromReasons,
  describeChangedVariables,
  type PlanPageModel,
} from "../../../../src/nocode/plan-page/model";
import {
  formatValue,
  planMessageFrame,
  planSummaryLine,
  renderPlanPage,
} from "../../../../src/nocode/plan-page/render";
import { type EffectiveValue, planRun } from "../../../../src/nocode/planner";
import { upgradeFixtureFiles } from "../../../fixtures/terraform-upgrade";
import { nodeTerraformParser } from "../../lib/terraform/node-parser";

let v1: ModuleSummary;
let v2: ModuleSummary;
beforeAll(async () => {
  const parser = await nodeTerraformParser();
  v1 = summarizeModule(new Map(Object.entries(upgradeFixtureFiles("upgrade-v1"))), parser);
  v2 = summarizeModule(new Map(Object.entries(upgradeFixtureFiles("upgrade-v2"))), parser);
});

const SECRET_HASH_1 = "4f1c0ffee0000000000000000000000000000000000000000000000000000001";
const SECRET_HASH_2 = "4f1c0ffee0000000000000000000000000000000000000000000000000000002";

const baselineValues: Record<string, EffectiveValue> = {
  prefix: { value: "app", isDefault: true },
  length: { value: 8, isDefault: true },
  region: { value: "eu-west-1", isDefault: true },
  db_password: { sensitiveHash: SECRET_HASH_1, isDefault: false },
};
/** v2 with region set to us-east-1 and a new db_password. */
const proposedValues: Record<string, EffectiveValue> = {
  ...baselineValues,
  region: { value: "us-east-1", isDefault: false },
  db_password: { sensitiveHash: SECRET_HASH_2, isDefault: false },
};

function upgradeModel(overrides: Partial<PlanPageModel> = {}): PlanPageModel {
  const plan = planRun({
    baseline: { summary: v1, values: baselineValues },
    proposed: { summary: v2, values: proposedValues },
  });
  return {
    runId: "run-AbCdEfGhIjKlMnOp",
    kind: "upgrade",
    status: "planned",
    organization: "acme",
    workspace: "payments-dev",
    module: "private/acme/upgrade/random",
    fromVersion: "1.0.0",
    toVersion: "1.1.0",
    createdAt: Date.UTC(2026, 4, 1, 12, 0, 0),
    additions: plan.additions,
    changes: plan.changes,
    destructions: plan.destructions,
    resourceChanges: plan.resourceChanges,
    changedVariables: describeChangedVariables(
      { values: baselineValues, summary: v1 },
      { values: proposedValues, summary: v2 },
    ),
    jsonHref: "?view=123.abc&format=json",
    ...overrides,
  };
}

describe("describeChangedVariables", () => {
  it("names the changed variables; sensitive ones carry no value at all", () => {
    const vars = describeChangedVariables(
      { values: baselineValues, summary: v1 },
      { values: proposedValues, summary: v2 },
    );
    expect(vars).toEqual([
      { name: "db_password", sensitive: true },
      {
        name: "region",
        sensitive: false,
        before: { set: true, value: "eu-west-1", isDefault: true },
        after: { set: true, value: "us-east-1", isDefault: false },
      },
    ]);
  });

  it("treats a variable the version declares sensitive as sensitive even when given in plain", () => {
    const plainBefore = { ...baselineValues, db_password: { value: "hunter2", isDefault: false } };
    const plainAfter = { ...baselineValues, db_password: { value: "hunter3", isDefault: false } };
    const vars = describeChangedVariables({ values: plainBefore, summary: v1 }, { values: plainAfter, summary: v2 });
    expect(vars).toEqual([{ name: "db_password", sensitive: true }]);
    expect(JSON.stringify(vars)).not.toContain("hunter");
  });

  it("a first plan (no baseline) lists every variable with a value as changed from (not set)", () => {
    const vars = describeChangedVariables(null, { values: { prefix: { value: "app", isDefault: true } } });
    expect(vars).toEqual([
      {
        name: "prefix",
        sensitive: false,
        before: { set: false, isDefault: false },
        after: { set: true, value: "app", isDefault: true },
      },
    ]);
  });

  it("falls back to the names in the planner's reasons", () => {
    const plan = planRun({
      baseline: { summary: v1, values: baselineValues },
      proposed: { summary: v2, values: proposedValues },
    });
    expect(changedVariablesFromReasons(plan.resourceChanges)).toEqual([
      { name: "db_password", sensitive: false },
      { name: "region", sensitive: false },
    ]);
  });
});

describe("renderPlanPage (N8)", () => {
  it("shows title, workspace, organization, module, versions from → to and the counts", () => {
    const page = renderPlanPage(upgradeModel());
    expect(page.startsWith("<!doctype html>")).toBe(true);
    expect(page).toContain("<title>Upgrade plan run-AbCdEfGhIjKlMnOp · payments-dev · acme</title>");
    expect(page).toContain("<h1>Upgrade plan for workspace payments-dev</h1>");
    expect(page).toContain("<dt>Organization</dt><dd>acme</dd>");
    expect(page).toContain("<dt>Workspace</dt><dd>payments-dev</dd>");
    expect(page).toContain("<code>private/acme/upgrade/random</code>");
    expect(page).toContain("<dt>Version</dt><dd>1.0.0 → 1.1.0</dd>");
    expect(page).toContain("<dt>Status</dt><dd>planned</dd>");
    // v1 → v2: random_uuid.added; random_id.legacy removed; random_string.suffix body,
    // random_pet.name through local.suffix ← var.region, random_password.db by its hash.
    expect(page).toContain("Plan: 1 to add, 3 to change, 1 to destroy.");
  });

  it("lists each resource change with its action and reasons, unchanged ones folded away", () => {
    const page = renderPlanPage(upgradeModel());
    const row = (address: string) => {
      const m = new RegExp(
        `<tr class="(\\w+)"><td class="sym"[^>]*>[^<]*</td><td class="action">([^<]+)</td><td><code>${address.replaceAll(".", "\\.")}</code>(.*?)</td></tr>`,
      ).exec(page);
      return m ? { css: m[1], action: m[2], rest: m[3] } : null;
    };
    expect(row("random_uuid.added")).toMatchObject({ css: "create", action: "create" });
    expect(row("random_id.legacy")).toMatchObject({ css: "delete", action: "destroy" });
    expect(row("random_string.suffix")).toMatchObject({
      css: "update",
      action: "update in-place",
      rest: '<ul class="reasons"><li>configuration changed</li></ul>',
    });
    expect(row("random_pet.name")).toMatchObject({
      css: "update",
      rest: '<ul class="reasons"><li>variable &quot;region&quot; changed</li></ul>',
    });
    expect(row("random_password.db")).toMatchObject({
      css: "update",
      rest: '<ul class="reasons"><li>variable &quot;db_password&quot; changed</li></ul>',
    });
    expect(row("module.labels.random_pet.label")).toMatchObject({ css: "noop", action: "no changes" });
    expect(page).toContain("<summary>3 resources unchanged</summary>");
  });

  it("shows changed variables by name, sensitive ones as (sensitive) and never their values or hashes", () => {
    const page = renderPlanPage(upgradeModel());
    expect(page).toContain(
      '<tr><td><code>db_password</code></td><td class="sensitive" colspan="2">(sensitive)</td></tr>',
    );
    expect(page).toContain(
      "<tr><td><code>region</code></td><td><code>&quot;eu-west-1&quot; (default)</code></td><td><code>&quot;us-east-1&quot;</code></td></tr>",
    );
    expect(page).not.toContain(SECRET_HASH_1);
    expect(page).not.toContain(SECRET_HASH_2);
    expect(page).not.toContain("4f1c0ffee");
  });

  it("escapes every dynamic string (names, reasons, values, links)", () => {
    const evil = `<script>alert("x")</script>&'`;
    const page = renderPlanPage(
      upgradeModel({
        organization: evil,
        workspace: evil,
        module: evil,
        fromVersion: evil,
        toVersion: evil,
        status: evil,
        kind: evil,
        runId: evil,
        resourceChanges: [{ address: evil, actions: ["update"], reasons: [evil] }],
        changedVariables: [
          {
            name: evil,
            sensitive: false,
            before: { set: true, value: evil, isDefault: false },
            after: { set: true, value: { expression: evil }, isDefault: true },
          },
          { name: `${evil}2`, sensitive: true },
        ],
        jsonHref: `"><script>x</script>`,
      }),
    );
    expect(page).not.toContain("<script");
    expect(page).not.toMatch(/"><script/);
    expect(page).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;");
    expect(page).toContain('<a href="&quot;&gt;&lt;script&gt;x&lt;/script&gt;">JSON</a>');
    // the only tags are ours: count a few
    expect(page.match(/<table>/g)).toHaveLength(2);
  });

  it("is self-contained: inline CSS only, no scripts, no external assets or links", () => {
    const page = renderPlanPage(upgradeModel({ jsonHref: undefined }));
    expect(page).toContain("<style>");
    expect(page).not.toMatch(/<script|<link|<img|<iframe|src=|@import|url\(|https?:\/\//i);
    expect(page).toContain('<meta name="referrer" content="no-referrer">');
  });

  it("an empty plan says so and still renders", () => {
    const page = renderPlanPage(
      upgradeModel({
        additions: 0,
        changes: 0,
        destructions: 0,
        resourceChanges: [{ address: "random_pet.name", actions: ["no-op"] }],
        changedVariables: [],
      }),
    );
    expect(page).toContain("No changes. The infrastructure matches the configuration.");
    expect(page).toContain("<p>No resource changes.</p>");
    expect(page).toContain("<p>No variable changed.</p>");
    expect(page).toContain("<summary>1 resource unchanged</summary>");
  });

  it("a first plan shows (nothing applied) as the from version; unrecorded variables say so", () => {
    const page = renderPlanPage(upgradeModel({ kind: "plan-and-apply", fromVersion: null, changedVariables: null }));
    expect(page).toContain("<dt>Version</dt><dd>(nothing applied) → 1.1.0</dd>");
    expect(page).toContain("<h1>Plan for workspace payments-dev</h1>");
    expect(page).toContain("<p>Not recorded for this run.</p>");
  });
});

describe("helpers", () => {
  it("pages escape the five characters and nothing else (Hono's html helper)", () => {
    const page = (messageMarkup(planMessageFrame, `t<i>`, `a&b<c>d"e'f → g`) as HtmlEscapedString).toString();
    expect(page).toContain("<title>t&lt;i&gt;</title>");
    expect(page).toContain("<p>a&amp;b&lt;c&gt;d&quot;e&#39;f → g</p>");
  });

  it("formatValue quotes strings, shows expression defaults as source, marks defaults, truncates", () => {
    expect(formatValue({ set: true, value: "x", isDefault: false })).toBe('"x"');
    expect(formatValue({ set: true, value: 8, isDefault: true })).toBe("8 (default)");
    expect(formatValue({ set: true, value: { expression: 'upper("a")' }, isDefault: true })).toBe(
      'upper("a") (default)',
    );
    expect(formatValue({ set: true, value: { a: [1, 2] }, isDefault: false })).toBe('{"a":[1,2]}');
    expect(formatValue({ set: false, isDefault: false })).toBe("(not set)");
    expect(formatValue({ set: true, value: "y".repeat(500), isDefault: false })).toHaveLength(200);
  });

  it("planSummaryLine reads like Terraform's", () => {
    expect(planSummaryLine({ additions: 2, changes: 0, destructions: 1 })).toBe(
      "Plan: 2 to add, 0 to change, 1 to destroy.",
    );
  });
});

describe("planJson (N7 json-output shape)", () => {
  it("lists resource_changes with address and change.actions for the v1 → v2 upgrade", () => {
    const json = planJson(upgradeModel());
    expect(json.resource_changes.map((c) => [c.address, c.change.actions.join(",")])).toEqual([
      ["module.labels.random_integer.n", "no-op"],
      ["module.labels.random_pet.label", "no-op"],
      ["module.remote", "no-op"],
      ["random_id.legacy", "delete"],
      ["random_password.db", "update"],
      ["random_pet.name", "update"],
      ["random_string.suffix", "update"],
      ["random_uuid.added", "create"],
    ]);
    expect(json.resource_changes.find((c) => c.address === "random_pet.name")).toEqual({
      address: "random_pet.name",
      mode: "managed",
      type: "random_pet",
      name: "name",
      change: { actions: ["update"], reasons: ['variable "region" changed'] },
    });
    expect(json).toMatchObject({
      format_version: "1.2",
      run_id: "run-AbCdEfGhIjKlMnOp",
      kind: "upgrade",
      status: "planned",
      from_version: "1.0.0",
      to_version: "1.1.0",
      summary: { add: 1, change: 3, destroy: 1 },
    });
    expect(json.changed_variables).toEqual([
      { name: "db_password", sensitive: true },
      {
        name: "region",
        sensitive: false,
        before: { set: true, value: "eu-west-1", is_default: true },
        after: { set: true, value: "us-east-1", is_default: false },
      },
    ]);
    expect(JSON.stringify(json)).not.toContain("4f1c0ffee");
  });

  it("splits addresses into module path, type and name", () => {
    expect(addressParts("random_pet.name")).toEqual({
      address: "random_pet.name",
      mode: "managed",
      type: "random_pet",
      name: "name",
    });
    expect(addressParts("module.labels.random_pet.label")).toEqual({
      address: "module.labels.random_pet.label",
      module_address: "module.labels",
      mode: "managed",
      type: "random_pet",
      name: "label",
    });
    expect(addressParts("module.a.module.b.x_y.z")).toMatchObject({
      module_address: "module.a.module.b",
      type: "x_y",
      name: "z",
    });
    expect(addressParts("module.remote")).toEqual({ address: "module.remote", module_address: "module.remote" });
  });
});
