/**
 * The engine's changes as HTML (src/nocode/plan-page/render-changes.ts, decision N19): every
 * string from the JSON plan is escaped (a plan is written by modules and providers, not by
 * Keyway), the masks read as Terraform's words, the bounds are announced, and the notes say
 * why attribute changes are missing.
 */
import { describe, expect, it } from "vitest";
import { describePlanChanges, PLAN_VIEW_LIMITS } from "../../../../src/lib/terraform/plan-changes";
import type { PlanPageModel } from "../../../../src/nocode/plan-page/model";
import { renderPlanPage } from "../../../../src/nocode/plan-page/render";
import { enginePlanNote, planChangesMarkup } from "../../../../src/nocode/plan-page/render-changes";

const html = (markup: ReturnType<typeof planChangesMarkup>) => String(markup);

describe("planChangesMarkup", () => {
  it("escapes addresses, paths and values, and shows the masks", () => {
    const changes = describePlanChanges({
      resource_changes: [
        {
          address: 'terraform_data.x["<img src=x>"]',
          change: {
            actions: ["create"],
            before: null,
            after: { "<b>key</b>": "</td><script>alert(1)</script>", secret: "s3cr3t-value" },
            after_unknown: { id: true },
            after_sensitive: { secret: true },
          },
        },
      ],
      output_changes: { "o<u>": { actions: ["create"], after: "<i>" } },
    });
    const text = html(planChangesMarkup(changes, "h2"));
    expect(text).not.toContain("<img");
    expect(text).not.toContain("<script>");
    expect(text).not.toContain("<b>key");
    expect(text).not.toContain("s3cr3t-value");
    expect(text).toContain("&lt;script&gt;");
    expect(text).toContain('<span class="sensitive">(sensitive value)</span>');
    expect(text).toContain('<span class="unknown">(known after apply)</span>');
    expect(text).toContain("will be created");
    expect(text).toContain("<h2>Output changes</h2>");
  });

  it("announces what the bounds left out", () => {
    const many = Array.from({ length: PLAN_VIEW_LIMITS.resources + 2 }, (_, i) => ({
      address: `terraform_data.r${i}`,
      change: { actions: ["delete"], before: {} },
    }));
    const text = html(planChangesMarkup(describePlanChanges({ resource_changes: many }), "h3"));
    expect(text).toContain("…and 2 more resource changes not shown");
    expect(text).toContain("<h3>Resource changes</h3>");
    expect(text).toContain("No output changes.");
  });

  it("says why attribute changes are missing", () => {
    expect(enginePlanNote({ kind: "too-large", size: 5 * 1024 * 1024 })).toContain("5.0 MiB, too large");
    expect(enginePlanNote({ kind: "unavailable" })).toContain("cannot be shown attribute by attribute");
    expect(enginePlanNote({ kind: "changes", changes: describePlanChanges({}) })).toBeNull();
  });
});

describe("renderPlanPage of an agent run", () => {
  const model: PlanPageModel = {
    runId: "run-agent",
    kind: "plan-and-apply",
    status: "planned",
    organization: "acme",
    workspace: "web",
    module: "private/acme/data/terraform",
    fromVersion: null,
    toVersion: "1.0.0",
    createdAt: 0,
    additions: 1,
    changes: 0,
    destructions: 0,
    resourceChanges: [{ address: "terraform_data.a", actions: ["create"] }],
    changedVariables: [],
    execution: {
      mode: "agent",
      agentName: "build-1",
      poolName: "prod",
      engineName: "terraform",
      engineVersion: "1.11.4",
    },
  };

  it("shows the engine's changes and names the agent, its pool and engine", () => {
    const changes = describePlanChanges({
      resource_changes: [{ address: "terraform_data.a", change: { actions: ["create"], after: { input: "hello" } } }],
    });
    const page = renderPlanPage({ ...model, engine: { kind: "changes", changes } });
    expect(page).toContain("<code>input</code>");
    expect(page).toContain("<code>&quot;hello&quot;</code>");
    expect(page).toContain("Planned by agent build-1 of pool prod with terraform 1.11.4.");
  });

  it("falls back to addresses and actions with the reason", () => {
    const page = renderPlanPage({ ...model, engine: { kind: "too-large", size: 8 * 1024 * 1024 } });
    expect(page).toContain("8.0 MiB, too large");
    expect(page).toContain("<code>terraform_data.a</code>");
  });

  it("a remote run keeps the structural footer", () => {
    const page = renderPlanPage({ ...model, execution: { mode: "remote" } });
    expect(page).toContain("source; it never runs providers.");
  });
});
