/**
 * The doctype and `<head>` every HTML page of the wing shares (the console of N14 and the
 * plan page of N8): UTF-8, a mobile viewport, never indexed, the page's title, then what
 * the page brings itself (the console its stylesheet and script, the plan page its inline
 * style and no-referrer). Hono's `html` escapes the title.
 */
import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";

/** Markup built with Hono's `html` helper. */
export type Markup = HtmlEscapedString | Promise<HtmlEscapedString>;

/** `<!doctype html><html lang="en"><head>…</head>` with `title` and the page's own `headTail` (meta, style, script) last. */
export function pageHead(title: string, headTail: Markup): Markup {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex,nofollow">
<title>${title}</title>
${headTail}
</head>
`;
}
