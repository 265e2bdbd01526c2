/**
 * The console's pages (N14) as HTML from Hono's `html` helper: every interpolation is
 * escaped, no inline script or style (the CSP forbids both), one stylesheet and one
 * small script from `/app/~/`. Every page works without the script. Sensitive values
 * never reach this module: variables arrive with `value: null` when sensitive.
 */
import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import type { ConsoleSession } from "../browser/console-session";
import type { MessageFrame } from "../browser/message-page";
import { type Markup, pageHead } from "../browser/page-head";
import type { EnginePlanView, PlanPageModel } from "../plan-page/model";
import { formatValue, planSummaryLine } from "../plan-page/render";
import { enginePlanNote, planChangesMarkup } from "../plan-page/render-changes";
import type { VersionStatus } from "../registry/repo";
import type { RolloutItemRow, RolloutRow } from "../rollouts/repo";
import { CANCELABLE_RUN_STATUSES, type RunRow } from "../runs/repo";
import { planOf } from "../runs/serialize";
import type { WorkspaceRow, WorkspaceVarRow } from "../workspaces/repo";
import { consoleAssets } from "./assets";
import type { FormErrors, FormField, FormValues } from "./form";
import { type CatalogEntry, moduleAddress } from "./repo";

/** What the header shows about the signed-in caller. */
export interface Viewer {
  session: ConsoleSession;
  /** `alice`, or `team owners of acme`. */
  label: string;
}

const enc = encodeURIComponent;
export const orgPath = (org: string) => `/app/${enc(org)}`;
export const workspacePath = (org: string, name: string) => `/app/${enc(org)}/workspaces/${enc(name)}`;
export const modulePath = (org: string, id: string) => `/app/${enc(org)}/modules/${enc(id)}`;
export const planPagePath = (org: string, name: string, runId: string) =>
  `${workspacePath(org, name)}/runs/${enc(runId)}`;
export const rolloutPath = (org: string, id: string) => `/app/${enc(org)}/rollouts/${enc(id)}`;
export const reviewPath = (org: string, name: string, runId: string) =>
  `${workspacePath(org, name)}/upgrade/${enc(runId)}`;

/**
 * The stylesheet's `<link>` and, with `script`, the script's `<script>`, at their current
 * URLs (./assets.ts; their hashes are ready after the isolate's first page, so the markup
 * is a Promise, which Hono's `html` and `c.html` resolve).
 */
export function assetTags(options: { script: boolean }): Promise<HtmlEscapedString> {
  return consoleAssets().then(
    ({ css, js }) =>
      html`<link rel="stylesheet" href="/app/~/${css.file}">${
        options.script
          ? html`
<script src="/app/~/${js.file}" defer></script>`
          : ""
      }`,
  );
}

/** The page around `body`. */
export function layout(title: string, body: Markup, viewer: Viewer | null, crumbs: Markup | "" = ""): Markup {
  const who = viewer
    ? html`<div class="who"><span>Signed in as <strong>${viewer.label}</strong></span>${viewer.session.caller.kind === "user" ? html`<a href="/app/settings/tokens">API tokens</a>` : ""}
<form method="post" action="/app/~/sign-out"><input type="hidden" name="csrf" value="${viewer.session.csrf}"><button type="submit">Sign out</button></form></div>`
    : "";
  return html`${pageHead(`${title} · Keyway`, assetTags({ script: true }))}<body>
<a class="skip" href="#content">Skip to content</a>
<header class="top"><a href="/app">Keyway</a>${who}</header>
<main id="content">
${crumbs ? html`<nav aria-label="Breadcrumb"><p class="crumbs">${crumbs}</p></nav>` : ""}
${body}
</main>
</body>
</html>`;
}

/** The console's frame of a message page (../message-page.ts): the layout, and a way back. */
export function consoleFrame(viewer: Viewer | null): MessageFrame {
  return (title, message) =>
    layout(title, html`${message}<p><a href="/app">Back to your organizations</a></p>`, viewer);
}

/** Sign in with a user or team token (or the organization's single sign-on), then go to `returnTo` (already checked: a console path). */
export function signInPage(
  csrf: string,
  error: string | null,
  returnTo: string,
  sso: { organization: string; provider: string } | null = null,
): Markup {
  const invalid = error !== null;
  const terraformLogin = new URLSearchParams(returnTo.split("?")[1] ?? "").get("source") === "terraform-login";
  // N16: an organization with single sign-on offers it first; the form carries the same CSRF token.
  // Both SSO forms carry the (already checked) return path to the start, which keeps it with the state.
  const returnQuery = returnTo === "/app" ? "" : `?return=${enc(returnTo)}`;
  const ssoCard = sso
    ? html`<div class="card">
<h2>Sign in to ${sso.organization} with single sign-on</h2>
<form method="post" action="/app/~/sso/${enc(sso.organization)}/start${returnQuery}">
<input type="hidden" name="csrf" value="${csrf}">
<button type="submit">Sign in with ${sso.provider}</button>
</form>
</div>`
    : "";
  // N16: otherwise single sign-on by organization name, as HCP Terraform's "Sign in with SSO" asks.
  const ssoByName = sso
    ? ""
    : html`<div class="card">
<h2>Sign in with your organization's SSO</h2>
<form method="post" action="/app/~/sso/start${returnQuery}">
<input type="hidden" name="csrf" value="${csrf}">
<div class="field">
<label for="sso-organization">Organization name <span class="required" aria-hidden="true">*</span></label>
<span class="hint" id="sso-organization-hint">The organization must have single sign-on turned on.</span>
<input id="sso-organization" name="organization" type="text" autocomplete="off" maxlength="64" required aria-required="true" aria-describedby="sso-organization-hint">
</div>
<button type="submit">Continue with SSO</button>
</form>
</div>`;
  return layout(
    "Sign in",
    html`<h1>Sign in</h1>
${terraformLogin ? html`<p class="notice" role="status"><strong>terraform login</strong> is waiting in your terminal. Sign in, create a token on the next page, then paste it into the terminal.</p>` : ""}
${ssoCard}
<div class="card">
<p>Sign in with a user or team API token. The token is checked and kept only as a keyed hash; your session ends when you sign out, after 12 hours, or when the token is revoked.</p>
<form method="post" action="/app/~/sign-in${returnQuery}">
<input type="hidden" name="csrf" value="${csrf}">
<div class="field${invalid ? " invalid" : ""}">
<label for="token">API token <span class="required" aria-hidden="true">*</span></label>
<span class="hint" id="token-hint">A user token or a team token (organization tokens cannot sign in).</span>
<input id="token" name="token" type="password" autocomplete="off" required aria-required="true" aria-describedby="token-hint${invalid ? " token-error" : ""}"${invalid ? html` aria-invalid="true"` : ""}>
${invalid ? html`<span class="error" id="token-error">${error}</span>` : ""}
</div>
<button type="submit">Sign in</button>
</form>
</div>
${ssoByName}`,
    null,
  );
}

/** The organizations the caller belongs to. */
export function organizationsPage(viewer: Viewer, organizations: readonly string[]): Markup {
  const list = organizations.length
    ? html`<ul class="plain">${organizations.map((o) => html`<li><a href="${orgPath(o)}">${o}</a></li>`)}</ul>`
    : html`<p>You do not belong to any organization yet. Ask an owner to add you to a team.</p>`;
  return layout("Organizations", html`<h1>Your organizations</h1><div class="card">${list}</div>`, viewer);
}

function moduleFacts(entry: CatalogEntry): Markup {
  const f = entry.facts;
  return html`<dl class="facts">
<dt>Version</dt><dd>${entry.module.versionPin ?? "none pinned"}</dd>
<dt>Providers</dt><dd>${f ? f.providers.join(", ") || "none" : "unknown"}</dd>
<dt>Resources</dt><dd>${f ? f.resources : "unknown"}</dd>
</dl>`;
}

/** A module's description: registry modules carry none, so say what it is from its source. */
export function moduleDescription(entry: CatalogEntry): string {
  const f = entry.facts;
  if (!f)
    return `Module ${entry.registryModule.name} for ${entry.registryModule.provider}; its pinned version is not ready to provision.`;
  return `Provisions ${f.resources} ${f.resources === 1 ? "resource" : "resources"} with ${f.providers.join(", ") || "no provider"}; ${f.variables} ${f.variables === 1 ? "setting" : "settings"} to choose.`;
}

/** An organization: its no-code catalog and its workspaces. */
export function organizationPage(
  viewer: Viewer,
  org: string,
  entries: readonly CatalogEntry[],
  workspaces: readonly WorkspaceRow[] | null,
  rights: { provision: boolean },
): Markup {
  const cards = entries.length
    ? html`<div class="grid">${entries.map(
        (e) => html`<section class="card" aria-labelledby="mod-${e.module.id}">
<h3 id="mod-${e.module.id}">${e.registryModule.name}</h3>
<p class="muted">${moduleDescription(e)}</p>
${moduleFacts(e)}
<div class="actions">
${rights.provision && e.facts ? html`<a class="button" href="${modulePath(org, e.module.id)}/provision">Provision workspace<span class="skip"> from ${e.registryModule.name}</span></a>` : ""}
${rights.provision ? html`<a class="button secondary" href="${modulePath(org, e.module.id)}">Workspaces<span class="skip"> of ${e.registryModule.name}</span></a>` : ""}
</div>
</section>`,
      )}</div>`
    : html`<p class="card">No no-code module is enabled in this organization yet.</p>`;
  const wsSection =
    workspaces === null
      ? ""
      : html`<h2>Workspaces</h2>${
          workspaces.length
            ? html`<div class="table-wrap"><table><thead><tr><th>Name</th><th>Version</th><th class="optional">Resources</th></tr></thead><tbody>${workspaces.map(
                (w) =>
                  html`<tr><td><a href="${workspacePath(org, w.name)}">${w.name}</a></td><td>${w.noCodeVersion ?? "—"}</td><td class="optional">${w.resourceCount}</td></tr>`,
              )}</tbody></table></div>`
            : html`<p class="card">No workspace yet.</p>`
        }`;
  return layout(
    org,
    html`<h1>${org}</h1><h2>No-code modules</h2>${cards}${wsSection}`,
    viewer,
    html`<a href="/app">Organizations</a> / ${org}`,
  );
}

function fieldControl(f: FormField, value: string, error: string | undefined): Markup {
  const hintId = `${f.name}-hint`;
  const errorId = `${f.name}-error`;
  const describedBy = error ? `${hintId} ${errorId}` : hintId;
  const common = html`id="${f.name}" name="${f.name}" aria-describedby="${describedBy}"${f.required ? html` required aria-required="true"` : ""}${error ? html` aria-invalid="true"` : ""}`;
  let control: Markup;
  if (f.options.length > 0) {
    const selected = value !== "" ? value : f.defaultText;
    control = html`<select ${common}>${f.required && selected === "" ? html`<option value="">Choose…</option>` : ""}${f.options.map(
      (o) => html`<option value="${o}"${o === selected ? html` selected` : ""}>${o}</option>`,
    )}</select>`;
  } else if (f.sensitive) {
    control = html`<input type="password" autocomplete="new-password" ${common}>`;
  } else {
    control = html`<input type="text" value="${value}" ${common}>`;
  }
  const hint = [
    f.description ?? "",
    f.sensitive ? "Sensitive: stored encrypted and never shown again." : "",
    f.sensitive && !f.required ? "Leave empty to use the module's default." : "",
  ]
    .filter(Boolean)
    .join(" ");
  return html`<div class="field${error ? " invalid" : ""}">
<label for="${f.name}">${f.label}${f.required ? html` <span class="required">(required)</span>` : ""}</label>
<span class="hint" id="${hintId}"><span class="type">${f.type}</span> ${hint}${f.defaultText && !f.sensitive ? ` Default: ${f.defaultText}.` : ""}</span>
${control}
${error ? html`<span class="error" id="${errorId}">${error}</span>` : ""}
</div>`;
}

/** The provision form of a no-code module. */
export function provisionPage(
  viewer: Viewer,
  org: string,
  entry: CatalogEntry,
  fields: readonly FormField[],
  values: FormValues,
  errors: FormErrors | null,
): Markup {
  const fieldErrors = errors?.fields ?? {};
  const count = errors ? Object.keys(errors.fields).length + errors.general.length : 0;
  const summary = errors
    ? html`<div class="alert" role="alert"><strong>The workspace was not created: ${count} ${count === 1 ? "problem" : "problems"} to fix.</strong>${
        errors.general.length ? html`<ul>${errors.general.map((g) => html`<li>${g}</li>`)}</ul>` : ""
      }</div>`
    : "";
  const nameError = fieldErrors.name;
  return layout(
    `Provision ${entry.registryModule.name}`,
    html`<h1>Provision a workspace from ${entry.registryModule.name}</h1>
<p class="muted">${moduleAddress(entry.registryModule)} version ${entry.module.versionPin ?? ""}. ${moduleDescription(entry)}</p>
${summary}
<form method="post" action="${modulePath(org, entry.module.id)}/provision" class="card" novalidate>
<input type="hidden" name="csrf" value="${viewer.session.csrf}">
<div class="field${nameError ? " invalid" : ""}">
<label for="name">Workspace name <span class="required">(required)</span></label>
<span class="hint" id="name-hint">Letters, numbers, dashes and underscores; unique in ${org}.</span>
<input id="name" name="name" type="text" value="${values.name ?? ""}" required aria-required="true" aria-describedby="name-hint${nameError ? " name-error" : ""}"${nameError ? html` aria-invalid="true"` : ""}>
${nameError ? html`<span class="error" id="name-error">${nameError}</span>` : ""}
</div>
<h2>Settings</h2>
${fields.length ? fields.map((f) => fieldControl(f, f.sensitive ? "" : (values[f.name] ?? f.defaultText), fieldErrors[f.name])) : html`<p>This module has no settings.</p>`}
<div class="field"><label><input type="checkbox" name="auto-apply" value="on"${errors === null || values["auto-apply"] === "on" ? html` checked` : ""}> Apply automatically</label>
<span class="hint">Apply the first run, and later runs, as soon as they are planned. Upgrades always wait for your confirmation.</span></div>
<button type="submit">Create workspace</button>
</form>`,
    viewer,
    html`<a href="/app">Organizations</a> / <a href="${orgPath(org)}">${org}</a> / Provision`,
  );
}

const ACTIVE = new Set(["pending", "plan_queued", "planning", "confirmed", "apply_queued", "applying"]);

function statusBadge(status: string): Markup {
  const css = ACTIVE.has(status) ? "active" : status;
  return html`<span class="status ${css}">${status.replaceAll("_", " ")}</span>`;
}

/** N19a: the statuses a run may be canceled in. */
const CANCELABLE: ReadonlySet<string> = new Set(CANCELABLE_RUN_STATUSES);

/** N19a: the cancel form of a run (a running agent job is interrupted by its agent). */
function cancelForm(viewer: Viewer, org: string, ws: WorkspaceRow, run: RunRow): Markup {
  return html`<form class="inline" method="post" action="${planPagePath(org, ws.name, run.id)}/actions/cancel"><input type="hidden" name="csrf" value="${viewer.session.csrf}"><button type="submit" class="danger">Cancel run<span class="skip"> ${run.id}</span></button></form>`;
}

function runActions(viewer: Viewer, org: string, ws: WorkspaceRow, run: RunRow, canManage: boolean): Markup | "" {
  if (!canManage) return "";
  if (CANCELABLE.has(run.status)) return cancelForm(viewer, org, ws, run);
  if (run.status !== "planned") return "";
  const csrf = html`<input type="hidden" name="csrf" value="${viewer.session.csrf}">`;
  if (run.kind === "upgrade") {
    return html`<a class="button" href="${reviewPath(org, ws.name, run.id)}">Review upgrade</a>`;
  }
  const base = `${planPagePath(org, ws.name, run.id)}/actions`;
  return html`<form class="inline" method="post" action="${base}/apply">${csrf}<button type="submit">Apply</button></form>
<form class="inline" method="post" action="${base}/discard">${csrf}<button type="submit" class="danger">Discard</button></form>`;
}

/** N19: why a queued run waits (`waiting for an agent of pool <name>`), as the run records it. */
function waitingReason(run: RunRow): Markup | "" {
  if (!run.statusReason || !WAITING.has(run.status)) return "";
  return html`<br><span class="muted waiting">${run.statusReason}</span>`;
}

const WAITING = new Set(["pending", "plan_queued", "apply_queued"]);

/** The latest plan of an agent workspace (N19): the engine's changes from its JSON plan. */
export interface LatestEnginePlan {
  run: RunRow;
  view: EnginePlanView;
}

function latestPlanSection(org: string, ws: WorkspaceRow, latest: LatestEnginePlan): Markup {
  const plan = planOf(latest.run);
  const counts = plan ? planSummaryLine(plan) : "";
  let body: Markup;
  if (latest.view.kind === "changes") body = planChangesMarkup(latest.view.changes, "h3");
  else {
    const changed = (plan?.resourceChanges ?? []).filter((c) => !(c.actions.length === 1 && c.actions[0] === "no-op"));
    body = html`<p>${enginePlanNote(latest.view)}</p>${
      changed.length
        ? html`<ul>${changed.map((c) => html`<li>${changeLabel(c.actions).label} <code>${c.address}</code></li>`)}</ul>`
        : ""
    }`;
  }
  return html`<section id="plan" aria-labelledby="plan-title">
<h2 id="plan-title">Latest plan</h2>
<p>Run <code>${latest.run.id}</code> ${statusBadge(latest.run.status)} · ${counts} <a href="${planPagePath(org, ws.name, latest.run.id)}">Open the plan page<span class="skip"> of ${latest.run.id}</span></a></p>
${body}
</section>`;
}

/** A workspace: facts, the upgrade banner, variables (sensitive masked), runs, and an agent workspace's latest plan. */
export function workspacePage(
  viewer: Viewer,
  org: string,
  ws: WorkspaceRow,
  context: {
    vars: readonly WorkspaceVarRow[];
    runs: readonly RunRow[];
    moduleName: string | null;
    pin: string | null;
    upgradeAvailable: boolean;
    canManage: boolean;
    notice: string | null;
    /** N19: the latest plan of an agent workspace with its engine's changes; absent otherwise. */
    latestPlan?: LatestEnginePlan;
  },
): Markup {
  const live = context.runs.some((r) => ACTIVE.has(r.status));
  const banner =
    context.upgradeAvailable && context.canManage && ws.noCodeModuleId
      ? html`<div class="banner" role="region" aria-label="Upgrade available"><p><strong>Upgrade available.</strong> ${
          context.pin && context.pin !== ws.noCodeVersion
            ? `Version ${context.pin} of ${context.moduleName ?? "the module"} is available (this workspace runs ${ws.noCodeVersion ?? "no version"}).`
            : "The module's variable options changed since this workspace was provisioned."
        }</p><form method="post" action="${workspacePath(org, ws.name)}/upgrade"><input type="hidden" name="csrf" value="${viewer.session.csrf}"><button type="submit">Plan the upgrade</button></form></div>`
      : context.upgradeAvailable
        ? html`<div class="banner" role="region" aria-label="Upgrade available"><p><strong>Upgrade available.</strong> Someone with workspace management rights can upgrade it.</p></div>`
        : "";
  const vars = context.vars.length
    ? html`<div class="table-wrap"><table><thead><tr><th>Key</th><th>Value</th><th class="optional">Category</th></tr></thead><tbody>${context.vars.map(
        (v) =>
          html`<tr><td><code>${v.key}</code></td><td>${v.sensitive ? html`<span class="muted">Sensitive (hidden)</span>` : html`<code>${v.value ?? ""}</code>`}</td><td class="optional">${v.category}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p class="card">No variables: the module's defaults apply.</p>`;
  const runs = context.runs.length
    ? html`<div class="table-wrap"><table><thead><tr><th>Run</th><th>Status</th><th class="optional">Plan</th><th>Actions</th></tr></thead><tbody>${context.runs.map(
        (
          r,
        ) => html`<tr><td><code>${r.id}</code><br><span class="muted">${r.kind === "upgrade" ? "Upgrade" : "Run"} to ${r.moduleVersion} · ${new Date(r.createdAt).toISOString().replace("T", " ").slice(0, 19)} UTC</span></td>
<td>${statusBadge(r.status)}${r.error ? html`<br><span class="muted">${r.error}</span>` : ""}${waitingReason(r)}</td>
<td class="optional">${r.plan ? html`<a href="${planPagePath(org, ws.name, r.id)}">View plan<span class="skip"> of ${r.id}</span></a>` : html`<span class="muted">not planned yet</span>`}</td>
<td>${runActions(viewer, org, ws, r, context.canManage)}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p class="card">No runs yet.</p>`;
  return layout(
    ws.name,
    html`<h1>Workspace ${ws.name}</h1>
${context.notice ? html`<p class="notice" role="status">${context.notice}</p>` : ""}
${banner}
<div class="card"><dl class="facts">
<dt>Module</dt><dd>${context.moduleName ?? "—"}</dd>
<dt>Version</dt><dd>${ws.noCodeVersion ?? "—"}</dd>
<dt>Resources</dt><dd>${ws.resourceCount}</dd>
<dt>Auto-apply</dt><dd>${ws.autoApply ? "on" : "off"}</dd>
</dl></div>
<h2>Variables</h2>
${vars}
<section id="runs" aria-labelledby="runs-title"${live ? html` data-live="1"` : ""}>
<h2 id="runs-title">Runs</h2>
${live ? html`<p class="muted" role="status">A run is in progress. This page refreshes by itself; reload it if it does not.</p>` : ""}
${runs}
</section>
${context.latestPlan ? latestPlanSection(org, ws, context.latestPlan) : ""}`,
    viewer,
    html`<a href="/app">Organizations</a> / <a href="${orgPath(org)}">${org}</a> / ${ws.name}`,
  );
}

const ACTION_LABELS: Record<string, string> = {
  create: "+ create",
  delete: "- destroy",
  update: "~ update in-place",
  "no-op": "no changes",
};

function changeLabel(actions: readonly string[]): { label: string; css: string } {
  if (actions.includes("create") && actions.includes("delete")) return { label: "-/+ replace", css: "replace" };
  const a = actions[0] ?? "no-op";
  return { label: ACTION_LABELS[a] ?? a, css: a };
}

/**
 * The review page of an upgrade run that has no plan yet (N19: an agent workspace's E5 answers
 * `pending` and an agent plans it): its status and why it waits; the page refreshes by itself
 * until the plan is there.
 */
export function upgradePendingPage(
  viewer: Viewer,
  org: string,
  ws: WorkspaceRow,
  run: RunRow,
  canManage: boolean,
): Markup {
  const live = ACTIVE.has(run.status);
  const cancel = canManage && CANCELABLE.has(run.status) ? cancelForm(viewer, org, ws, run) : "";
  return layout(
    `Review upgrade of ${ws.name}`,
    html`<h1>Review the upgrade of ${ws.name}</h1>
<section id="runs" aria-labelledby="pending-title"${live ? html` data-live="1"` : ""}>
<h2 id="pending-title">The upgrade is not planned yet</h2>
<div class="card"><dl class="facts">
<dt>Version</dt><dd>${ws.noCodeVersion ?? "(nothing applied)"} → ${run.moduleVersion}</dd>
<dt>Run</dt><dd><code>${run.id}</code> ${statusBadge(run.status)}${waitingReason(run)}${run.error ? html`<br><span class="muted">${run.error}</span>` : ""}</dd>
</dl>
${live ? html`<p class="muted" role="status">This page refreshes by itself until the plan is ready; reload it if it does not.</p>` : ""}${cancel}</div>
</section>`,
    viewer,
    html`<a href="/app">Organizations</a> / <a href="${orgPath(org)}">${org}</a> / <a href="${workspacePath(org, ws.name)}">${ws.name}</a> / Upgrade`,
  );
}

/** The review of an upgrade plan: what changes, the variables that change, confirm or discard. */
export function upgradeReviewPage(
  viewer: Viewer,
  org: string,
  ws: WorkspaceRow,
  model: PlanPageModel,
  canManage: boolean,
): Markup {
  const changed = model.resourceChanges.filter((c) => !(c.actions.length === 1 && c.actions[0] === "no-op"));
  const variables = model.changedVariables;
  const csrf = html`<input type="hidden" name="csrf" value="${viewer.session.csrf}">`;
  const actions =
    model.status === "planned" && canManage
      ? html`<div class="card"><p>Confirming switches the workspace to version ${model.toVersion} and applies this plan.</p>
<form class="inline" method="post" action="${reviewPath(org, ws.name, model.runId)}/confirm">${csrf}<button type="submit">Confirm upgrade</button></form>
<form class="inline" method="post" action="${planPagePath(org, ws.name, model.runId)}/actions/discard">${csrf}<button type="submit" class="danger">Discard</button></form></div>`
      : html`<p class="card">This upgrade run is ${model.status.replaceAll("_", " ")}; there is nothing to confirm.</p>`;
  return layout(
    `Review upgrade of ${ws.name}`,
    html`<h1>Review the upgrade of ${ws.name}</h1>
<div class="card"><dl class="facts">
<dt>Module</dt><dd><code>${model.module}</code></dd>
<dt>Version</dt><dd>${model.fromVersion ?? "(nothing applied)"} → ${model.toVersion}</dd>
<dt>Run</dt><dd><code>${model.runId}</code> ${statusBadge(model.status)}</dd>
</dl>
<p class="plan-summary">${planSummaryLine(model)}</p>
<p><a href="${planPagePath(org, ws.name, model.runId)}">Open the full plan page</a></p></div>
${
  model.engine?.kind === "changes"
    ? planChangesMarkup(model.engine.changes, "h2")
    : html`<h2>Resource changes</h2>${model.engine ? html`<p>${enginePlanNote(model.engine)}</p>` : ""}`
}
${
  model.engine?.kind === "changes"
    ? ""
    : changed.length
      ? html`<div class="table-wrap"><table><thead><tr><th>Action</th><th>Resource</th></tr></thead><tbody>${changed.map(
          (c) => {
            const { label, css } = changeLabel(c.actions);
            return html`<tr><td class="change ${css}">${label}</td><td><code>${c.address}</code>${c.reasons?.length ? html`<br><span class="muted">${c.reasons.join("; ")}</span>` : ""}</td></tr>`;
          },
        )}</tbody></table></div>`
      : html`<p class="card">No resource changes.</p>`
}
<h2>Variables that change</h2>
${
  variables === null || variables.length === 0
    ? html`<p class="card">No variable changes.</p>`
    : html`<div class="table-wrap"><table><thead><tr><th>Variable</th><th>Before</th><th>After</th></tr></thead><tbody>${variables.map(
        (v) =>
          v.sensitive
            ? html`<tr><td><code>${v.name}</code></td><td colspan="2" class="muted">Sensitive (hidden)</td></tr>`
            : html`<tr><td><code>${v.name}</code></td><td><code>${v.before ? formatValue(v.before) : "changed"}</code></td><td><code>${v.after ? formatValue(v.after) : "changed"}</code></td></tr>`,
      )}</tbody></table></div>`
}
${actions}`,
    viewer,
    html`<a href="/app">Organizations</a> / <a href="${orgPath(org)}">${org}</a> / <a href="${workspacePath(org, ws.name)}">${ws.name}</a> / Upgrade`,
  );
}

/** A module page for `manage-workspaces` callers: its versions and its workspaces with theirs. */
export function modulePage(
  viewer: Viewer,
  org: string,
  entry: CatalogEntry,
  versions: readonly VersionStatus[],
  workspaces: readonly WorkspaceRow[],
  rollouts: readonly RolloutRow[] = [],
): Markup {
  const pin = entry.module.versionPin;
  return layout(
    entry.registryModule.name,
    html`<h1>Module ${entry.registryModule.name}</h1>
<p class="muted">${moduleAddress(entry.registryModule)} · ${entry.module.enabled ? "enabled" : "disabled"} for no-code provisioning</p>
<div class="card">${moduleFacts(entry)}${entry.module.enabled && entry.facts ? html`<div class="actions"><a class="button" href="${modulePath(org, entry.module.id)}/provision">Provision workspace</a></div>` : ""}</div>
<h2>Workspaces</h2>
${
  workspaces.length
    ? html`<div class="table-wrap"><table><thead><tr><th>Workspace</th><th>Version</th><th>Up to date</th></tr></thead><tbody>${workspaces.map(
        (w) =>
          html`<tr><td><a href="${workspacePath(org, w.name)}">${w.name}</a></td><td>${w.noCodeVersion ?? "—"}</td><td>${w.noCodeVersion === pin ? "yes" : html`<strong>no</strong> (pin is ${pin ?? "none"})`}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p class="card">No workspace was provisioned from this module yet.</p>`
}
${rolloutSection(viewer, org, entry, workspaces, rollouts)}
<h2>Versions</h2>
<div class="table-wrap"><table><thead><tr><th>Version</th><th>Status</th><th class="optional">Workspaces</th></tr></thead><tbody>${versions.map(
      (v) =>
        html`<tr><td>${v.version}${v.version === pin ? html` <strong>(pinned)</strong>` : ""}</td><td>${v.status}${v.error ? html`<br><span class="muted">${v.error}</span>` : ""}</td><td class="optional">${workspaces.filter((w) => w.noCodeVersion === v.version).length}</td></tr>`,
    )}</tbody></table></div>`,
    viewer,
    html`<a href="/app">Organizations</a> / <a href="${orgPath(org)}">${org}</a> / ${entry.registryModule.name}`,
  );
}

const ACTIVE_ROLLOUT = new Set(["pending", "running", "waiting-confirmation", "paused"]);

/** N15 on the module page: the rollouts (newest first) and, when none is active, the form that starts one. */
function rolloutSection(
  viewer: Viewer,
  org: string,
  entry: CatalogEntry,
  workspaces: readonly WorkspaceRow[],
  rollouts: readonly RolloutRow[],
): Markup {
  const pin = entry.module.versionPin;
  const behind = workspaces.filter((w) => w.noCodeVersion !== pin).length;
  const active = rollouts.some((r) => ACTIVE_ROLLOUT.has(r.status));
  const list = rollouts.length
    ? html`<div class="table-wrap"><table><thead><tr><th>Rollout</th><th>Status</th><th>Target</th><th class="optional">Started</th></tr></thead><tbody>${rollouts.map(
        (r) =>
          html`<tr><td><a href="${rolloutPath(org, r.id)}">${r.id}</a></td><td>${statusBadge(r.status)}</td><td>${r.targetVersion}</td><td class="optional">${new Date(r.createdAt).toISOString()}</td></tr>`,
      )}</tbody></table></div>`
    : "";
  const form =
    entry.module.enabled && pin && !active
      ? html`<form method="post" action="${modulePath(org, entry.module.id)}/rollouts" class="card">
<input type="hidden" name="csrf" value="${viewer.session.csrf}">
<p>Upgrade every workspace with an upgrade available (${behind} not on ${pin}) to version ${pin}, in batches.</p>
<label for="batch-size">Workspaces per batch</label>
<input id="batch-size" name="batch-size" type="number" min="1" max="100" value="1" required>
<label for="auto-confirm">Confirm plans by themselves</label>
<select id="auto-confirm" name="auto-confirm"><option value="never">never: every plan waits for me</option><option value="no-destructions">when nothing is destroyed</option><option value="no-changes">only when nothing changes</option></select>
<label for="max-failures">Failures allowed before stopping</label>
<input id="max-failures" name="max-failures" type="number" min="0" value="0" required>
<div class="actions"><button type="submit">Start rollout</button></div>
</form>`
      : active
        ? html`<p class="muted">A rollout is in progress; a new one can start once it ends.</p>`
        : "";
  return html`<h2>Rollouts</h2>${list}${form}`;
}

/** One rollout (N15): its items, and the actions its status allows. */
export function rolloutPage(
  viewer: Viewer,
  org: string,
  rollout: RolloutRow,
  items: readonly RolloutItemRow[],
  names: ReadonlyMap<string, string>,
  moduleName: string,
): Markup {
  const csrf = html`<input type="hidden" name="csrf" value="${viewer.session.csrf}">`;
  const button = (action: string, label: string, css = "") =>
    html`<form class="inline" method="post" action="${rolloutPath(org, rollout.id)}/actions/${action}">${csrf}<button type="submit" class="${css}">${label}</button></form>`;
  const actions = [
    rollout.status === "waiting-confirmation" ? button("confirm", "Confirm waiting plans") : "",
    ["pending", "running", "waiting-confirmation"].includes(rollout.status)
      ? button("pause", "Pause", "secondary")
      : "",
    rollout.status === "paused" ? button("resume", "Resume") : "",
    ACTIVE_ROLLOUT.has(rollout.status) ? button("cancel", "Cancel rollout", "danger") : "",
  ];
  const batches = items.length ? Math.max(...items.map((i) => i.batch)) + 1 : 0;
  // N19: items whose run an agent has not planned yet wait like plans awaiting confirmation.
  const waitingForPlan = items.filter((i) => i.status === "planning" && i.runId !== null).length;
  return layout(
    `Rollout ${rollout.id}`,
    html`<h1>Rollout to version ${rollout.targetVersion}</h1>
<p>${statusBadge(rollout.status)} · batch ${Math.min(rollout.currentBatch + 1, batches)} of ${batches} · ${rollout.batchSize} per batch · confirms by itself: ${rollout.autoConfirm} · failures allowed: ${rollout.maxFailures}</p>
${rollout.reason ? html`<p class="card"><strong>Stopped:</strong> ${rollout.reason}</p>` : ""}
${waitingForPlan ? html`<p>Waiting for ${waitingForPlan} plan(s) by an agent; the batch goes on once they are planned.</p>` : ""}
<div class="actions">${actions}</div>
<div class="table-wrap"><table><thead><tr><th>Batch</th><th>Workspace</th><th>Status</th><th>Plan</th><th>Reason</th></tr></thead><tbody>${items.map(
      (i) => {
        const name = names.get(i.workspaceId);
        return html`<tr><td>${i.batch + 1}</td><td>${name ? html`<a href="${workspacePath(org, name)}">${name}</a>` : i.workspaceId}</td><td>${statusBadge(i.status)}</td><td>${
          i.additions === null ? "—" : `+${i.additions} ~${i.changes} −${i.destructions}`
        }${i.runId && name ? html` <a href="${planPagePath(org, name, i.runId)}">plan</a>` : ""}</td><td>${i.reason ?? ""}</td></tr>`;
      },
    )}</tbody></table></div>
<p class="muted">This page shows the state when it was loaded; reload it to follow the rollout.</p>`,
    viewer,
    html`<a href="/app">Organizations</a> / <a href="${orgPath(org)}">${org}</a> / <a href="${modulePath(org, rollout.noCodeModuleId)}">${moduleName}</a> / Rollout`,
  );
}
