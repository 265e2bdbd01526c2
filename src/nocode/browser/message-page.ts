/**
 * The wing's one renderer of error and message pages: the short HTML answers that carry a
 * heading and a sentence instead of content (a refusal, a conflict, a missing page, an
 * internal error), for the console of N14 (its single sign-on included) and the plan page
 * of N8. The message is the same markup on both; each surface brings its own frame, since
 * their Content-Security-Policies differ: the console's layout with its header and
 * stylesheet, the plan page's self-contained document with its inline style. Such a page is
 * never stored. Hono's `html` escapes the title and the sentence.
 */
import type { Context } from "hono";
import { html } from "hono/html";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { Markup } from "./page-head";

/** Puts a message (its `<h1>` and sentence) in a surface's page; `title` is the page's title. */
export type MessageFrame = (title: string, message: Markup) => Markup;

/** The page of a message: `title` as heading and page title, `text` as its sentence, in `frame`. */
export function messageMarkup(frame: MessageFrame, title: string, text: string): Markup {
  return frame(title, html`<h1>${title}</h1><p>${text}</p>`);
}

/**
 * The HTML answer of a message page with `status`, `Cache-Control: no-store` and the
 * surface's own `headers` (which may replace either).
 */
export function messageAnswer(
  c: Context,
  frame: MessageFrame,
  status: ContentfulStatusCode,
  title: string,
  text: string,
  headers: Record<string, string> = {},
): Response | Promise<Response> {
  return c.html(messageMarkup(frame, title, text), status, { "Cache-Control": "no-store", ...headers });
}
