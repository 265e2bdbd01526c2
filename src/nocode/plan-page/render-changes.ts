/**
 * The engine's changes of an agent run (decision N19) as HTML, shared by the plan page and
 * the console's workspace page: per resource its address and action (Terraform's words and
 * symbols), a table of the attributes that change (before → after; `(sensitive value)`,
 * `(known after apply)`), what forces a replacement, then the output changes. Built with
 * Hono's `html` helper, which escapes every interpolated string; sensitive values never reach
 * this module (src/lib/terraform/plan-changes.ts drops them).
 *
 * Both pages style the classes used here (`.changes`, `.create`, `.update`, `.delete`,
 * `.replace`, `.sensitive`, `.unknown`, `.absent`, `.forces`) in their own style sheet.
 */
import { html } from "hono/html";
import type {
  AttributeChange,
  ChangeAction,
  OutputChangeView,
  PlanChanges,
  ResourceChangeView,
  ShownPlanValue,
} from "../../lib/terraform/plan-changes";
import type { Markup } from "../browser/page-head";
import type { EnginePlanView } from "./model";

/** Terraform's words for what happens to a resource, its symbol and CSS class. */
const ACTIONS: Record<ChangeAction, { verb: string; symbol: string; css: string }> = {
  create: { verb: "will be created", symbol: "+", css: "create" },
  update: { verb: "will be updated in-place", symbol: "~", css: "update" },
  delete: { verb: "will be destroyed", symbol: "-", css: "delete" },
  replace: { verb: "must be replaced", symbol: "-/+", css: "replace" },
  read: { verb: "will be read during apply", symbol: "<=", css: "read" },
  forget: { verb: "will be removed from the state (not destroyed)", symbol: ".", css: "delete" },
  "no-op": { verb: "has no changes", symbol: " ", css: "noop" },
};

/** Output actions in Terraform's words. */
const OUTPUT_VERBS: Record<ChangeAction, string> = {
  create: "added",
  update: "changed",
  delete: "removed",
  replace: "replaced",
  read: "read",
  forget: "forgotten",
  "no-op": "unchanged",
};

/** One side of a change. */
function shownValue(value: ShownPlanValue): Markup {
  switch (value.kind) {
    case "absent":
      return html`<span class="absent">(none)</span>`;
    case "sensitive":
      return html`<span class="sensitive">(sensitive value)</span>`;
    case "unknown":
      return html`<span class="unknown">(known after apply)</span>`;
    case "value":
      return html`<code>${value.text}</code>`;
  }
}

function attributeRow(attribute: AttributeChange): Markup {
  const forces = attribute.forcesReplacement ? html` <strong class="forces">forces replacement</strong>` : "";
  return html`<tr><th scope="row"><code>${attribute.path}</code>${forces}</th><td>${shownValue(attribute.before)}</td><td>${shownValue(attribute.after)}</td></tr>`;
}

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

function resourceBlock(resource: ResourceChangeView): Markup {
  const { verb, symbol, css } = ACTIONS[resource.action];
  const notes = [resource.reason, resource.importing ? "imported by this plan" : undefined].filter(Boolean);
  const attributes = resource.attributes.length
    ? html`<div class="table-wrap"><table class="attributes" aria-label="Attributes of ${resource.address} that change"><thead><tr><th scope="col">Attribute</th><th scope="col">Before</th><th scope="col">After</th></tr></thead><tbody>${resource.attributes.map(attributeRow)}</tbody></table></div>`
    : "";
  const omitted = resource.omittedAttributes
    ? html`<p class="muted">…and ${plural(resource.omittedAttributes, "more attribute", "more attributes")} not shown.</p>`
    : "";
  return html`<li class="resource ${css}"><p class="address"><span class="sym" aria-hidden="true">${symbol}</span> <code>${resource.address}</code> ${verb}${notes.length ? html` <span class="muted">(${notes.join("; ")})</span>` : ""}</p>${attributes}${omitted}</li>`;
}

function outputRow(output: OutputChangeView): Markup {
  const { css } = ACTIONS[output.action];
  return html`<tr class="${css}"><th scope="row"><code>${output.name}</code></th><td>${OUTPUT_VERBS[output.action]}</td><td>${shownValue(output.before)}</td><td>${shownValue(output.after)}</td></tr>`;
}

/**
 * The resource and output changes of a JSON plan. `headingLevel` is the level of the section
 * headings (`h2` on the plan page, `h3` inside the console's plan section).
 *
 * @example
 * html`<h1>Plan</h1>${planChangesMarkup(changes, "h2")}`;
 */
export function planChangesMarkup(changes: PlanChanges, headingLevel: "h2" | "h3"): Markup {
  const heading = (text: string) => (headingLevel === "h2" ? html`<h2>${text}</h2>` : html`<h3>${text}</h3>`);
  const resources = changes.resources.length
    ? html`<ul class="changes">${changes.resources.map(resourceBlock)}</ul>`
    : html`<p>No resource changes.</p>`;
  const omitted = changes.omittedResources
    ? html`<p class="muted">…and ${plural(changes.omittedResources, "more resource change", "more resource changes")} not shown; the plan's JSON output has them all.</p>`
    : "";
  const unchangedCount = changes.unchanged.length + changes.omittedUnchanged;
  const unchanged = unchangedCount
    ? html`<details><summary>${plural(unchangedCount, "resource", "resources")} unchanged</summary><ul>${changes.unchanged.map(
        (address) => html`<li><code>${address}</code></li>`,
      )}</ul>${changes.omittedUnchanged ? html`<p class="muted">…and ${changes.omittedUnchanged} more.</p>` : ""}</details>`
    : "";
  const outputs = changes.outputs.length
    ? html`<div class="table-wrap"><table class="outputs"><thead><tr><th scope="col">Output</th><th scope="col">Change</th><th scope="col">Before</th><th scope="col">After</th></tr></thead><tbody>${changes.outputs.map(outputRow)}</tbody></table></div>`
    : html`<p>No output changes.</p>`;
  const outputNotes = [
    changes.omittedOutputs
      ? `…and ${plural(changes.omittedOutputs, "more output change", "more output changes")} not shown.`
      : "",
    changes.unchangedOutputs ? `${plural(changes.unchangedOutputs, "output", "outputs")} unchanged.` : "",
  ].filter(Boolean);
  return html`${heading("Resource changes")}
${resources}${omitted}${unchanged}
${heading("Output changes")}
${outputs}${outputNotes.length ? html`<p class="muted">${outputNotes.join(" ")}</p>` : ""}`;
}

/** Why an agent run's attribute changes are not shown, or null when they are. */
export function enginePlanNote(view: EnginePlanView): string | null {
  switch (view.kind) {
    case "changes":
      return null;
    case "too-large":
      return `The engine's JSON plan is ${(view.size / (1024 * 1024)).toFixed(1)} MiB, too large to show attribute by attribute here; the resources and their actions are listed, and the plan's JSON output has everything.`;
    case "unavailable":
      return "The engine's JSON plan cannot be shown attribute by attribute; the resources and their actions are listed.";
  }
}

/** CSS of the classes above, for a page's own style sheet (colours from the page's variables). */
export const PLAN_CHANGES_CSS = `
ul.changes{list-style:none;margin:0;padding:0}
ul.changes li.resource{border:1px solid var(--line);border-radius:6px;padding:.5rem .75rem;margin:.5rem 0;background:var(--card,transparent)}
ul.changes p.address{margin:0 0 .25rem;font-weight:600}
ul.changes .sym{font:600 14px ui-monospace,monospace;display:inline-block;min-width:2.25rem}
li.create .sym{color:var(--add,#067647)}li.delete .sym{color:var(--del,#b42318)}li.update .sym,li.replace .sym{color:var(--upd,#8a5a00)}
table.attributes th[scope=row],table.outputs th[scope=row]{font-weight:400}
.sensitive,.unknown,.absent{color:var(--muted);font-style:italic}
.forces{color:var(--del,#b42318)}
`;
