/**
 * The console's two static assets (N14): one plain stylesheet and one small script,
 * served from `/app/~/` with long caching. No build step: they are kept here as text. The
 * script only refreshes the runs of a page while a run is in progress; every page works
 * without it.
 *
 * Each asset's URL carries a hash of its bytes (`/app/~/console.<hash>.css`), computed
 * once per isolate, so a changed asset always has a new URL and a cached copy is never
 * stale. Only the current URLs are served: any other `console.*` name (an older hash, the
 * unhashed name) is 404 and never cached, so a browser holding a page of another version
 * of the Worker retries later instead of caching these bytes under a URL that names others.
 */
import { toHex, utf8 } from "../../lib/bytes";
import { PLAN_CHANGES_CSS } from "../plan-page/render-changes";

const CONSOLE_CSS = `
:root {
  --ink: #1b1f24; --muted: #4f5863; --line: #d5dae0; --bg: #f6f7f9; --card: #ffffff;
  --accent: #1d4ed8; --accent-ink: #ffffff; --danger: #b42318; --ok: #067647; --warn-bg: #fff6d6; --warn-line: #c9a227;
  --radius: 6px;
}
* { box-sizing: border-box; }
html { font-size: 16px; }
body {
  margin: 0; color: var(--ink); background: var(--bg);
  font: 1rem/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible {
  outline: 3px solid #93b4f5; outline-offset: 2px;
}
.skip { position: absolute; left: -999px; }
.skip:focus { left: 1rem; top: 1rem; background: var(--card); padding: .5rem; z-index: 2; }
header.top {
  background: #111827; color: #f9fafb; padding: .6rem 1rem;
  display: flex; align-items: center; justify-content: space-between; gap: 1rem; flex-wrap: wrap;
}
header.top a { color: #f9fafb; text-decoration: none; font-weight: 600; }
header.top .who { font-size: .9rem; color: #d1d5db; display: flex; gap: .75rem; align-items: center; flex-wrap: wrap; }
header.top form { margin: 0; }
header.top button { background: transparent; color: #f9fafb; border: 1px solid #6b7280; padding: .25rem .7rem; }
main { max-width: 60rem; margin: 0 auto; padding: 1.25rem 1rem 3rem; }
h1 { font-size: 1.6rem; line-height: 1.25; margin: .5rem 0 1rem; }
h2 { font-size: 1.2rem; margin: 2rem 0 .75rem; }
h3 { font-size: 1.05rem; margin: 0 0 .25rem; }
p { margin: .5rem 0; }
.crumbs { font-size: .9rem; color: var(--muted); margin: 0; }
.crumbs a { color: var(--muted); }
.muted { color: var(--muted); }
.card { background: var(--card); border: 1px solid var(--line); border-radius: var(--radius); padding: 1rem; margin: 0 0 1rem; }
.grid { display: grid; gap: 1rem; grid-template-columns: repeat(auto-fill, minmax(17rem, 1fr)); }
.grid .card { margin: 0; display: flex; flex-direction: column; gap: .4rem; }
.card .actions { margin-top: auto; padding-top: .5rem; display: flex; gap: .5rem; flex-wrap: wrap; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: .25rem 0; font-size: .95rem; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.button, button {
  display: inline-block; font: inherit; font-weight: 600; cursor: pointer; text-decoration: none;
  border-radius: var(--radius); border: 1px solid var(--accent); padding: .45rem 1rem;
  background: var(--accent); color: var(--accent-ink);
}
.button.secondary, button.secondary { background: var(--card); color: var(--accent); }
button.danger { background: var(--card); color: var(--danger); border-color: var(--danger); }
form.inline { display: inline; }
.field { margin: 0 0 1.1rem; }
.field label { display: block; font-weight: 600; }
.field .hint { display: block; font-size: .9rem; color: var(--muted); margin: .1rem 0 .3rem; }
.field input, .field select, .field textarea {
  width: 100%; max-width: 32rem; font: inherit; padding: .45rem .55rem;
  border: 1px solid #8a949e; border-radius: var(--radius); background: #fff; color: var(--ink);
}
.field input.secret { max-width: none; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9rem; }
.field input[type=checkbox] { width: auto; max-width: none; margin: 0 .5rem 0 0; vertical-align: middle; }
.field .type { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .85rem; background: #eef1f4; padding: 0 .3rem; border-radius: 3px; }
.required { color: var(--danger); font-weight: 600; }
.field.invalid input, .field.invalid select { border-color: var(--danger); border-width: 2px; }
.field .error { display: block; color: var(--danger); font-weight: 600; margin-top: .3rem; }
.alert { border-left: 4px solid var(--danger); background: #fdecea; padding: .75rem 1rem; border-radius: var(--radius); margin: 0 0 1rem; }
.notice { border-left: 4px solid var(--ok); background: #e7f6ee; padding: .75rem 1rem; border-radius: var(--radius); margin: 0 0 1rem; }
.banner { border: 1px solid var(--warn-line); background: var(--warn-bg); padding: .75rem 1rem; border-radius: var(--radius); margin: 0 0 1rem;
  display: flex; gap: 1rem; align-items: center; justify-content: space-between; flex-wrap: wrap; }
.banner form { margin: 0; }
table { width: 100%; border-collapse: collapse; background: var(--card); border: 1px solid var(--line); border-radius: var(--radius); }
th, td { text-align: left; padding: .5rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; overflow-wrap: anywhere; }
th { font-size: .85rem; color: var(--muted); font-weight: 600; background: #fafbfc; }
.table-wrap { overflow-x: auto; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9rem; }
.status { display: inline-block; padding: .05rem .5rem; border-radius: 999px; font-size: .85rem; font-weight: 600; background: #eef1f4; color: var(--ink); white-space: nowrap; }
.status.applied, .status.planned_and_finished { background: #dcfae6; color: #05603a; }
.status.errored, .status.discarded, .status.canceled { background: #fee4e2; color: #912018; }
.status.planned { background: #fef0c7; color: #7a2e0e; }
.status.active { background: #dbe7fe; color: #1e3a8a; }
.plan-summary { font-weight: 600; }
td.change { white-space: nowrap; width: 11rem; }
.change.create { color: var(--ok); }
.change.delete { color: var(--danger); }
.change.update, .change.replace { color: #93370d; }
ul.plain { list-style: none; padding: 0; margin: 0; }
ul.plain li { padding: .35rem 0; border-bottom: 1px solid var(--line); }
@media (max-width: 40rem) {
  main { padding: 1rem .75rem 2rem; }
  h1 { font-size: 1.35rem; }
  dl.facts { grid-template-columns: 1fr; }
  dl.facts dd { margin-bottom: .4rem; }
  th.optional, td.optional { display: none; }
}
${PLAN_CHANGES_CSS}`;

/**
 * Progressive refresh of run status: while the page shows a run in progress
 * (`[data-live]` on the runs section), fetch the same page every 2 s and swap in the new
 * `main`. Stops as soon as no run is in progress, when the tab is hidden, or on any error.
 */
const CONSOLE_JS = `
(function () {
  "use strict";
  var busy = false;
  function live() { return document.querySelector("[data-live]"); }
  function tick() {
    if (busy || document.hidden || !live()) return;
    busy = true;
    fetch(location.href, { credentials: "same-origin", headers: { "X-Console-Refresh": "1" } })
      .then(function (r) { if (!r.ok) throw new Error(String(r.status)); return r.text(); })
      .then(function (text) {
        var doc = new DOMParser().parseFromString(text, "text/html");
        var next = doc.querySelector("main");
        var main = document.querySelector("main");
        if (next && main && !main.contains(document.activeElement)) main.replaceWith(next);
        else if (next && main) { var a = next.querySelector("#runs"), b = main.querySelector("#runs"); if (a && b) b.replaceWith(a); }
      })
      .catch(function () { clearInterval(timer); })
      .then(function () { busy = false; if (!live()) clearInterval(timer); });
  }
  var timer = setInterval(tick, 2000);
})();
`;

/** A served asset: its file name under `/app/~/` (with the hash of its bytes), bytes and type. */
export interface ConsoleAsset {
  file: string;
  body: string;
  contentType: string;
}

/** How many hex digits of the SHA-256 a URL carries (64 bits: no two versions meet). */
const HASH_DIGITS = 16;

async function hashed(ext: "css" | "js", body: string, contentType: string): Promise<ConsoleAsset> {
  const digest = toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", utf8(body))));
  return { file: `console.${digest.slice(0, HASH_DIGITS)}.${ext}`, body, contentType };
}

/** The hashed assets, once an isolate's first request computed them (a value, never a pending load). */
let hashedAssets: { css: ConsoleAsset; js: ConsoleAsset } | undefined;

/**
 * The stylesheet and the script with their file names: hashed by the isolate's first
 * request (two SHA-256 digests of a few kilobytes), then read from `hashedAssets`.
 */
export async function consoleAssets(): Promise<{ css: ConsoleAsset; js: ConsoleAsset }> {
  if (hashedAssets) return hashedAssets;
  const [css, js] = await Promise.all([
    hashed("css", CONSOLE_CSS, "text/css; charset=utf-8"),
    hashed("js", CONSOLE_JS, "text/javascript; charset=utf-8"),
  ]);
  hashedAssets ??= { css, js };
  return hashedAssets;
}

/** The asset served as `file` (a current file name), or undefined. */
export async function consoleAsset(file: string): Promise<ConsoleAsset | undefined> {
  const { css, js } = await consoleAssets();
  return [css, js].find((asset) => asset.file === file);
}
