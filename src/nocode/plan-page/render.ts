/**
 * The plan page of decision N8, as HTML a person can review: what the run plans to add,
 * change and destroy, why each resource changes, and which variables changed. One
 * self-contained document: inline CSS only, no scripts, no external assets (so the view
 * token in the page's URL never leaks through a Referer). Built with Hono's `html`
 * helper, which escapes every interpolated string (as the console's pages are).
 * Sensitive values never reach this module (see ChangedVariable in ./model.ts).
 */
import { html, raw } from "hono/html";
import type { MessageFrame } from "../browser/message-page";
import { type Markup, pageHead } from "../browser/page-head";
import type { ChangedVariable, PlanPageModel, ShownResourceChange, ShownValue } from "./model";
import { enginePlanNote, PLAN_CHANGES_CSS, planChangesMarkup } from "./render-changes";

/**
 * The text of markup built here. Nothing interpolated on these pages is a Promise, so
 * Hono's `html` returns the escaped string itself; a Promise here is a programming error.
 */
function textOf(markup: Markup): string {
  if (markup instanceof Promise) throw new Error("plan page markup must not interpolate a Promise");
  return markup.toString();
}

/** How an action reads, and its CSS class. Terraform's own words and symbols. */
function actionLabel(actions: readonly string[]): { label: string; symbol: string; css: string } {
  const key = actions.join(",");
  switch (key) {
    case "create":
      return { label: "create", symbol: "+", css: "create" };
    case "delete":
      return { label: "destroy", symbol: "-", css: "delete" };
    case "update":
      return { label: "update in-place", symbol: "~", css: "update" };
    case "delete,create":
    case "create,delete":
      return { label: "replace", symbol: "-/+", css: "replace" };
    case "no-op":
      return { label: "no changes", symbol: " ", css: "noop" };
    default:
      return { label: key, symbol: "?", css: "update" };
  }
}

/** A value as a reader sees it: strings quoted, expression defaults as their source. */
export function formatValue(value: ShownValue): string {
  if (!value.set) return "(not set)";
  const v = value.value;
  let text: string;
  if (
    v !== null &&
    typeof v === "object" &&
    !Array.isArray(v) &&
    Object.keys(v).length === 1 &&
    typeof (v as { expression?: unknown }).expression === "string"
  ) {
    text = (v as { expression: string }).expression;
  } else {
    text = v === undefined ? "null" : JSON.stringify(v);
  }
  if (text.length > 200) text = `${text.slice(0, 197)}...`;
  return value.isDefault ? `${text} (default)` : text;
}

/** Terraform's summary line: `Plan: 1 to add, 1 to change, 1 to destroy.` */
export function planSummaryLine(model: Pick<PlanPageModel, "additions" | "changes" | "destructions">): string {
  if (model.additions + model.changes + model.destructions === 0) {
    return "No changes. The infrastructure matches the configuration.";
  }
  return `Plan: ${model.additions} to add, ${model.changes} to change, ${model.destructions} to destroy.`;
}

function changeRow(change: ShownResourceChange): Markup {
  const { label, symbol, css } = actionLabel(change.actions);
  const reasons = change.reasons?.length
    ? html`<ul class="reasons">${change.reasons.map((r) => html`<li>${r}</li>`)}</ul>`
    : "";
  return html`<tr class="${css}"><td class="sym" aria-hidden="true">${symbol}</td><td class="action">${label}</td><td><code>${change.address}</code>${reasons}</td></tr>`;
}

function variableRow(variable: ChangedVariable): Markup {
  if (variable.sensitive) {
    return html`<tr><td><code>${variable.name}</code></td><td class="sensitive" colspan="2">(sensitive)</td></tr>`;
  }
  if (!variable.before || !variable.after) {
    return html`<tr><td><code>${variable.name}</code></td><td colspan="2">changed</td></tr>`;
  }
  return html`<tr><td><code>${variable.name}</code></td><td><code>${formatValue(variable.before)}</code></td><td><code>${formatValue(variable.after)}</code></td></tr>`;
}

const STYLE = `
:root{color-scheme:light dark;--fg:#1f2328;--muted:#59636e;--bg:#fff;--line:#d1d9e0;--add:#1a7f37;--del:#cf222e;--upd:#9a6700}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9198a1;--bg:#0d1117;--line:#3d444d;--add:#3fb950;--del:#f85149;--upd:#d29922}}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif}
main{max-width:60rem;margin:0 auto;padding:1.5rem}
h1{font-size:1.5rem;margin:0 0 1rem}h2{font-size:1.15rem;margin:2rem 0 .5rem}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0}dt{color:var(--muted)}dd{margin:0}
code{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere}
.summary{font-weight:600;padding:.75rem 1rem;border:1px solid var(--line);border-radius:6px;margin:1.5rem 0}
.counts span{margin-right:1rem}.counts .create{color:var(--add)}.counts .update{color:var(--upd)}.counts .delete{color:var(--del)}
table{border-collapse:collapse;width:100%}th,td{text-align:left;vertical-align:top;padding:.4rem .5rem;border-bottom:1px solid var(--line)}
th{color:var(--muted);font-weight:600}
td.sym{font:600 14px ui-monospace,monospace;width:2.5rem;white-space:pre}td.action{white-space:nowrap;width:9rem}
tr.create td.sym,tr.create td.action{color:var(--add)}tr.delete td.sym,tr.delete td.action{color:var(--del)}
tr.update td.sym,tr.update td.action,tr.replace td.sym,tr.replace td.action{color:var(--upd)}tr.noop{color:var(--muted)}
ul.reasons{margin:.25rem 0 0;padding-left:1.25rem;color:var(--muted)}.sensitive{color:var(--muted);font-style:italic}
details{margin-top:.75rem}footer{margin-top:2rem;color:var(--muted);font-size:13px}
${PLAN_CHANGES_CSS}`;

/** The page title: `Upgrade plan run-… · <workspace> · <organization>`. */
export function planPageTitle(model: Pick<PlanPageModel, "kind" | "runId" | "workspace" | "organization">): string {
  const what = model.kind === "upgrade" ? "Upgrade plan" : "Plan";
  return `${what} ${model.runId} · ${model.workspace} · ${model.organization}`;
}

/**
 * The plan page as a complete HTML document.
 *
 * @example
 * return c.html(renderPlanPage(model));
 */
export function renderPlanPage(model: PlanPageModel): string {
  const changed = model.resourceChanges.filter((c) => !(c.actions.length === 1 && c.actions[0] === "no-op"));
  const unchanged = model.resourceChanges.filter((c) => c.actions.length === 1 && c.actions[0] === "no-op");
  const versions =
    model.fromVersion === null
      ? html`(nothing applied) → ${model.toVersion}`
      : html`${model.fromVersion} → ${model.toVersion}`;
  const heading =
    model.kind === "upgrade"
      ? `Upgrade plan for workspace ${model.workspace}`
      : `Plan for workspace ${model.workspace}`;

  const structuralSection = changed.length
    ? html`<table><thead><tr><th></th><th>Action</th><th>Resource</th></tr></thead><tbody>${changed.map(changeRow)}</tbody></table>`
    : html`<p>No resource changes.</p>`;
  const unchangedSection = unchanged.length
    ? html`<details><summary>${unchanged.length} ${unchanged.length === 1 ? "resource" : "resources"} unchanged</summary><table><tbody>${unchanged.map(changeRow)}</tbody></table></details>`
    : "";

  let variableSection: Markup;
  if (model.changedVariables === null) variableSection = html`<p>Not recorded for this run.</p>`;
  else if (model.changedVariables.length === 0) variableSection = html`<p>No variable changed.</p>`;
  else {
    variableSection = html`<table><thead><tr><th>Variable</th><th>Before</th><th>After</th></tr></thead><tbody>${model.changedVariables.map(variableRow)}</tbody></table>`;
  }

  const json = model.jsonHref ? html` · <a href="${model.jsonHref}">JSON</a>` : "";
  const doc = html`${planPageHead(planPageTitle(model))}<body>
<main>
<h1>${heading}</h1>
<dl>
<dt>Organization</dt><dd>${model.organization}</dd>
<dt>Workspace</dt><dd>${model.workspace}</dd>
<dt>Module</dt><dd><code>${model.module}</code></dd>
<dt>Version</dt><dd>${versions}</dd>
<dt>Run</dt><dd><code>${model.runId}</code> (${model.kind})</dd>
<dt>Status</dt><dd>${model.status}</dd>
<dt>Created</dt><dd>${new Date(model.createdAt).toISOString()}</dd>
</dl>
<p class="summary">${planSummaryLine(model)}<br><span class="counts"><span class="create">+ ${model.additions} to add</span><span class="update">~ ${model.changes} to change</span><span class="delete">- ${model.destructions} to destroy</span></span></p>
${changesSection(model, structuralSection, unchangedSection)}
<h2>Variables that changed</h2>
${variableSection}
<footer>${plannerNote(model)} Sensitive values are never shown${json}.</footer>
</main>
</body>
</html>
`;
  return textOf(doc);
}

/**
 * N19: an agent run shows the engine's changes attribute by attribute (or, when its JSON plan
 * cannot be shown, why, then the addresses and actions); a remote run N7's structural plan.
 */
function changesSection(model: PlanPageModel, structural: Markup, unchanged: Markup | ""): Markup {
  if (model.engine?.kind === "changes") return planChangesMarkup(model.engine.changes, "h2");
  const note = model.engine ? enginePlanNote(model.engine) : null;
  return html`<h2>Resource changes</h2>
${note ? html`<p>${note}</p>` : ""}${structural}
${unchanged}`;
}

/** Who made the plan (N19's `execution-details`). */
function plannerNote(model: PlanPageModel): string {
  const execution = model.execution ?? { mode: "remote" };
  if (execution.mode === "remote") return "Keyway plans from the module's source; it never runs providers.";
  const engine = [execution.engineName, execution.engineVersion].filter(Boolean).join(" ");
  if (!execution.agentName) return "An agent of the workspace's pool plans this run with its engine.";
  return `Planned by agent ${execution.agentName}${execution.poolName ? ` of pool ${execution.poolName}` : ""}${engine ? ` with ${engine}` : ""}.`;
}

/** The shared `<head>` with this page's own: no referrer (the view token is in the URL), the one inline style sheet. */
function planPageHead(title: string): Markup {
  return pageHead(
    title,
    html`<meta name="referrer" content="no-referrer">
<style>${raw(STYLE)}</style>`,
  );
}

/**
 * The plan page's frame of a message page (../message-page.ts): a refusal or a plan that is
 * not ready, in the same self-contained document (inline style, no referrer).
 */
export const planMessageFrame: MessageFrame = (title, message) => html`${planPageHead(title)}<body>
<main>
${message}
</main>
</body>
</html>
`;
