/**
 * The plan page of decision N8: `GET /app/:org/workspaces/:name/runs/:run_id`, an HTML
 * page a person can review (`?format=json` gives the same plan as JSON). It lives
 * outside /api/v2, so the API's token middleware does not apply (N2a); it carries its
 * own credential, either of:
 * - `?view=<token>`: the view token of that run (24 h, src/nocode/plan-page/view-token.ts);
 * - `Authorization: Bearer <token>`: a no-code token able to read the workspace
 *   (`read-workspaces`, N10; the organization token may read workspaces);
 * - the console's session cookie (N14), with the rights of the token it was opened with.
 *
 * Refusals follow N2's split between credentials and rights: no credential or an unknown
 * Bearer token → 401 (checked before anything is looked up, so a 401 never tells whether
 * the run exists); a view token that is invalid, expired or of another run → 404 (B23: a
 * signed link with a bad signature is 404, also decided before any lookup) unless a
 * Bearer token or session opens the page; a valid Bearer token without
 * `read-workspaces`, or an unknown organization, workspace or run → 404. Every answer is
 * `Cache-Control: no-store` and `Referrer-Policy: no-referrer` (B23). Sensitive values
 * are never shown.
 */
import { type Context, Hono } from "hono";
import { secureHeaders } from "hono/secure-headers";
import type { AppEnv } from "../../app-env";
import { createDb } from "../../db/client";
import { SIGNED_LINK_HEADERS } from "../../lib/crypto/signed-link";
import { logError } from "../../lib/log";
import { authenticateNocode, bearerToken, type NocodeCaller, waitUntilOf } from "../access/auth";
import { hasOrgPermission } from "../access/permissions";
import { currentSession } from "../browser/console-session";
import { messageAnswer } from "../browser/message-page";
import { planJson } from "./json";
import { findPlanPageTarget, loadPlanPageModel } from "./load";
import { planMessageFrame, renderPlanPage } from "./render";
import { verifyViewToken } from "./view-token";

/**
 * The security headers of every answer (Hono's secure-headers middleware): never framed,
 * sniffed or leaked through a Referer (the URL may carry a view token); the page may use
 * only its inline style. Hono's other defaults come along (COOP/CORP same-origin,
 * X-DNS-Prefetch-Control off, …); Strict-Transport-Security is left to the deployment,
 * since its includeSubDomains reaches beyond this Worker.
 */
const pageSecurityHeaders = secureHeaders({
  contentSecurityPolicy: {
    defaultSrc: ["'none'"],
    styleSrc: ["'unsafe-inline'"],
    baseUri: ["'none'"],
    formAction: ["'none'"],
    frameAncestors: ["'none'"],
  },
  referrerPolicy: "no-referrer",
  xContentTypeOptions: "nosniff",
  xFrameOptions: "DENY",
  strictTransportSecurity: false,
});

/** Never cached: a plan page shows a run's state of the moment and may carry a view token (B23). */
const NO_STORE = { "Cache-Control": SIGNED_LINK_HEADERS["Cache-Control"] };

type Format = "html" | "json";

function answer(
  c: Context<AppEnv>,
  format: Format,
  status: 200 | 401 | 404 | 409 | 500,
  title: string,
  text: string,
  extra: Record<string, string> = {},
): Response | Promise<Response> {
  if (format === "json") {
    const body =
      status === 200
        ? text
        : JSON.stringify({ errors: [{ status: String(status), title: title.toLowerCase(), detail: text }] });
    return new Response(body, {
      status,
      headers: { ...NO_STORE, "Content-Type": "application/json; charset=utf-8", ...extra },
    });
  }
  return messageAnswer(c, planMessageFrame, status, title, text, {
    ...NO_STORE,
    "Content-Type": "text/html; charset=utf-8",
    ...extra,
  });
}

const unauthorizedAnswer = (c: Context<AppEnv>, format: Format) =>
  answer(
    c,
    format,
    401,
    "Unauthorized",
    "This plan link is invalid or has expired. Ask for a new link, or sign in with an API token.",
    {
      "WWW-Authenticate": 'Bearer realm="keyway"',
    },
  );
const linkRefusedAnswer = (c: Context<AppEnv>, format: Format) =>
  answer(
    c,
    format,
    404,
    "Not found",
    "This plan link is invalid or has expired. Ask for a new link, or sign in with an API token.",
  );
const notFoundAnswer = (c: Context<AppEnv>, format: Format) =>
  answer(c, format, 404, "Not found", "There is no such run, or you may not read it.");

/** The plan page app, mounted at `/app` on the root app (src/index.ts). */
export const planPageApp = new Hono<AppEnv>();

// The middleware is on the route, not `use("*")`: this app shares /app with the console.
planPageApp.get("/:org/workspaces/:name/runs/:run_id", pageSecurityHeaders, async (c) => {
  const format: Format = c.req.query("format") === "json" ? "json" : "html";
  try {
    const runId = c.req.param("run_id");
    const view = c.req.query("view");
    // 1. Credentials, before any lookup.
    let viewValid = false;
    if (view !== undefined) viewValid = (await verifyViewToken(c.env.KEYWAY_HASH_KEY, runId, view, Date.now())).ok;
    let caller: NocodeCaller | null = null;
    if (!viewValid) {
      if (bearerToken(c.req.raw.headers) !== null)
        caller = await authenticateNocode(c.env, c.req.raw.headers, waitUntilOf(c));
      else caller = (await currentSession(c))?.caller ?? null; // N14: the console's session
      // B23: a signed link with a bad or expired signature is 404 (before any lookup, so
      // it tells nothing about the run); no credential at all is N2's 401.
      if (!caller) return view === undefined ? unauthorizedAnswer(c, format) : linkRefusedAnswer(c, format);
    }
    // 2. The run, and the Bearer caller's right to read it.
    const db = createDb(c.env.DB);
    const target = await findPlanPageTarget(db, c.req.param("org"), c.req.param("name"), runId);
    if (!target) return notFoundAnswer(c, format);
    if (caller && !(await hasOrgPermission(db, caller, target.workspace.organization, "read-workspaces")))
      return notFoundAnswer(c, format);
    // 3. The page.
    const model = await loadPlanPageModel(db, target, c.env);
    if (!model) {
      // N19: a run waiting for an agent says so (`waiting for an agent of pool <name>`).
      const waiting = target.run.statusReason ? ` (${target.run.statusReason})` : "";
      return answer(
        c,
        format,
        409,
        "Plan not ready",
        `The run is ${target.run.status.replaceAll("_", " ")}${waiting}; its plan is not ready yet. Reload this page in a moment.`,
      );
    }
    if (format === "json") return answer(c, "json", 200, "", JSON.stringify(planJson(model)));
    model.jsonHref = viewValid ? `?view=${encodeURIComponent(view ?? "")}&format=json` : "?format=json";
    return new Response(renderPlanPage(model), {
      status: 200,
      headers: { ...NO_STORE, "Content-Type": "text/html; charset=utf-8" },
    });
  } catch (err) {
    // B3: a generic body; the detail goes to the log with the request id.
    logError(String(c.var.requestId ?? ""), "internal error on the plan page", err);
    return answer(c, format, 500, "Internal error", "Something went wrong. Try again later.");
  }
});
