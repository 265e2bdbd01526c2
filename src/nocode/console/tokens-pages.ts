/**
 * The personal tokens pages of the console (N16): `/app/settings/tokens` lists the
 * signed-in user's tokens (never a secret: only the create answer carries one), offers
 * the create form and a revoke button per token; the page after a create shows the new
 * token once. With `source=terraform-login` (the query `terraform login` opens, see
 * https://developer.hashicorp.com/terraform/cli/commands/login) the pages say to paste
 * the token into the terminal.
 */

import { html } from "hono/html";
import type { Page } from "../../db/page";
import type { Markup } from "../browser/page-head";
import type { TokenRow } from "../tokens/api-tokens";
import { layout, type Viewer } from "./pages";
import type { ExpiryChoice } from "./tokens";

export const TOKENS_PATH = "/app/settings/tokens";

/** The description the form suggests when `terraform login` opened it. */
export const TERRAFORM_LOGIN_DESCRIPTION = "terraform login";

/** What the list shows: one page of the user's tokens, newest first, and which page it is. */
interface TokenListing extends Page<TokenRow> {
  page: number;
  pageSize: number;
}

/** The create form: what the person sent back (after a refusal), and the choices the session allows. */
interface CreateForm {
  choices: readonly ExpiryChoice[];
  /** False: the form is replaced by "sign in again" (an SSO sign-in 10 minutes old or older). */
  mayCreate: boolean;
  description: string;
  expiry: string;
  error: string | null;
}

/** Fixed notices a redirect may ask the page to show (never text from the query string). */
export const TOKEN_NOTICES: Record<string, string> = {
  revoked: "Token revoked. It no longer works anywhere.",
};

const crumbs = html`<a href="/app">Organizations</a> / Settings / Tokens`;

function when(ms: number | null, none: string): string {
  return ms === null ? none : `${new Date(ms).toISOString().replace("T", " ").slice(0, 16)} UTC`;
}

function csrfField(viewer: Viewer): Markup {
  return html`<input type="hidden" name="csrf" value="${viewer.session.csrf}">`;
}

/** The button that ends the session and goes to sign-in, coming back to `returnTo` afterwards. */
function signInAgainForm(viewer: Viewer, returnTo: string, label: string): Markup {
  return html`<form method="post" action="/app/~/sign-out?return=${encodeURIComponent(returnTo)}">${csrfField(viewer)}<button type="submit">${label}</button></form>`;
}

function tokenTable(viewer: Viewer, listing: TokenListing, now: number): Markup {
  if (listing.total === 0) return html`<p class="card">You have no API tokens yet.</p>`;
  const pages = Math.max(1, Math.ceil(listing.total / listing.pageSize));
  const pager =
    pages > 1
      ? html`<nav aria-label="Token pages"><p>${listing.page > 1 ? html`<a href="${TOKENS_PATH}?page=${listing.page - 1}">Newer tokens</a> ` : ""}Page ${listing.page} of ${pages}${listing.page < pages ? html` <a href="${TOKENS_PATH}?page=${listing.page + 1}">Older tokens</a>` : ""}</p></nav>`
      : "";
  return html`<div class="table-wrap"><table><caption class="skip">Your API tokens, newest first</caption><thead><tr><th>Description</th><th class="optional">Created</th><th class="optional">Last used</th><th>Expires</th><th>Actions</th></tr></thead><tbody>${listing.rows.map(
    (row) => {
      const name = row.description ?? row.id;
      const expired = row.expiredAt !== null && row.expiredAt <= now;
      return html`<tr><td>${row.description ?? html`<span class="muted">(no description)</span>`}<br><code class="muted">${row.id}</code></td><td class="optional">${when(row.createdAt, "")}</td><td class="optional">${when(row.lastUsedAt, "never")}</td><td>${expired ? html`<strong>expired</strong> ` : ""}${when(row.expiredAt, "never")}</td>
<td><form class="inline" method="post" action="${TOKENS_PATH}/${encodeURIComponent(row.id)}/revoke">${csrfField(viewer)}<button type="submit" class="danger">Revoke<span class="skip"> ${name}</span></button></form></td></tr>`;
    },
  )}</tbody></table></div>${pager}`;
}

function createSection(viewer: Viewer, form: CreateForm, source: string | null): Markup {
  if (!form.mayCreate) {
    return html`<div class="card"><p>To create a token, sign in again with your organization's identity provider: a new token needs a sign-in less than 10 minutes old.</p>
${signInAgainForm(viewer, `${TOKENS_PATH}${source ? `?source=${encodeURIComponent(source)}` : ""}`, "Sign in again")}</div>`;
  }
  const invalid = form.error !== null;
  return html`<form method="post" action="${TOKENS_PATH}" class="card">
${csrfField(viewer)}
${source ? html`<input type="hidden" name="source" value="${source}">` : ""}
<div class="field${invalid ? " invalid" : ""}">
<label for="description">Description <span class="required">(required)</span></label>
<span class="hint" id="description-hint">What the token is for, so you recognize it in this list (at most 256 characters).</span>
<input id="description" name="description" type="text" maxlength="256" value="${form.description}" required aria-required="true" aria-describedby="description-hint${invalid ? " description-error" : ""}"${invalid ? html` aria-invalid="true"` : ""}>
${invalid ? html`<span class="error" id="description-error">${form.error}</span>` : ""}
</div>
<div class="field">
<label for="expiry">Expiration</label>
<span class="hint" id="expiry-hint">After this the token stops working. You can revoke it sooner here.</span>
<select id="expiry" name="expiry" aria-describedby="expiry-hint">${form.choices.map(
    (c) => html`<option value="${c.value}"${c.value === form.expiry ? html` selected` : ""}>${c.label}</option>`,
  )}</select>
</div>
<button type="submit">Create API token</button>
</form>`;
}

/** `/app/settings/tokens`: the user's tokens and the create form. */
export function tokensPage(
  viewer: Viewer,
  listing: TokenListing,
  form: CreateForm,
  context: { source: string | null; notice: string | null; now: number },
): Markup {
  const terraformLogin = context.source === "terraform-login";
  return layout(
    "API tokens",
    html`<h1>API tokens</h1>
${context.notice ? html`<p class="notice" role="status">${context.notice}</p>` : ""}
${terraformLogin ? html`<div class="banner" role="region" aria-label="terraform login"><p><strong>terraform login</strong> is waiting in your terminal. Create a token here, then paste it into the terminal at the prompt.</p></div>` : ""}
<p>User API tokens act as you on the API (<code>/api/v2</code>), in Terraform and in the <code>tfe</code> provider, with your rights in every organization you belong to. A token is shown only once, when it is created.</p>
<h2>Create an API token</h2>
${createSection(viewer, form, context.source)}
<h2>Your tokens</h2>
${tokenTable(viewer, listing, context.now)}`,
    viewer,
    crumbs,
  );
}

/** The page after a create: the token, once. */
export function tokenCreatedPage(
  viewer: Viewer,
  token: string,
  row: TokenRow,
  source: string | null,
  host: string,
): Markup {
  const terraformLogin = source === "terraform-login";
  const instructions = terraformLogin
    ? html`<p><strong>Copy this token and paste it into your terminal</strong>, where <code>terraform login</code> asks for the token for <code>${host}</code>. Terraform stores it for you.</p>`
    : html`<p>Copy this token now and keep it somewhere safe, such as a password manager or your CI system's secret store.</p>`;
  return layout(
    "Token created",
    html`<h1>Token created</h1>
<div class="card">
${instructions}
<div class="field">
<label for="new-token">Your new API token</label>
<span class="hint" id="new-token-hint">It will not be shown again. If you lose it, revoke it and create another.</span>
<input id="new-token" class="secret" type="text" readonly value="${token}" autocomplete="off" spellcheck="false" aria-describedby="new-token-hint">
</div>
<dl class="facts">
<dt>Description</dt><dd>${row.description ?? ""}</dd>
<dt>Expires</dt><dd>${when(row.expiredAt, "never")}</dd>
</dl>
<p><a href="${TOKENS_PATH}">Back to your tokens</a></p>
</div>`,
    viewer,
    crumbs,
  );
}

/** A team-token session has no user, so no personal tokens. */
export function teamSessionPage(viewer: Viewer, returnTo: string): Markup {
  return layout(
    "Sign in as a user",
    html`<h1>Sign in as a user</h1>
<div class="card">
<p>You are signed in with a team token. API tokens on this page belong to a user, so sign in as yourself (with your user token or your organization's identity provider) to list, create or revoke them.</p>
${signInAgainForm(viewer, returnTo, "Sign out and sign in as a user")}
</div>`,
    viewer,
    crumbs,
  );
}

/** An SSO sign-in 10 minutes old or older may not create a token. */
export function signInAgainPage(viewer: Viewer, returnTo: string): Markup {
  return layout(
    "Sign in again",
    html`<h1>Sign in again</h1>
<div class="card">
<p>Creating a token needs a sign-in with your organization's identity provider less than 10 minutes old. Sign in again, then create the token.</p>
${signInAgainForm(viewer, returnTo, "Sign in again")}
</div>`,
    viewer,
    crumbs,
  );
}
