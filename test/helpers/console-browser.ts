/**
 * A cookie jar of one person talking to the console (N14) through the Worker's fetch
 * handler, as a browser over HTTPS would: cookies kept between requests, forms posted
 * with a same-origin `Origin`, redirects not followed (tests read `Location`).
 */
import { workerRequest } from "./worker-request";

export const CONSOLE_ORIGIN = "https://keyway.test";

export class ConsoleBrowser {
  cookies = new Map<string, string>();

  async request(method: string, path: string, form?: Record<string, string>, headers: Record<string, string> = {}) {
    const h: Record<string, string> = { ...headers };
    if (this.cookies.size) h.Cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    let body: string | undefined;
    if (form) {
      h["Content-Type"] = "application/x-www-form-urlencoded";
      h.Origin ??= CONSOLE_ORIGIN;
      body = new URLSearchParams(form).toString();
    }
    const res = await workerRequest(`${CONSOLE_ORIGIN}${path}`, { method, headers: h, body, redirect: "manual" });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair!.indexOf("=");
      const value = pair!.slice(eq + 1);
      if (value === "") this.cookies.delete(pair!.slice(0, eq));
      else this.cookies.set(pair!.slice(0, eq), value);
    }
    return res;
  }

  get(path: string) {
    return this.request("GET", path);
  }

  /** The CSRF token of the last page that had a form. */
  static csrf(text: string): string {
    const m = /name="csrf" value="([^"]+)"/.exec(text);
    if (!m) throw new Error("no csrf field on the page");
    return m[1]!;
  }

  /** The `action` of the first POST form on a page, as the browser reads it. */
  static formAction(text: string): string {
    const m = /<form method="post" action="([^"]+)"/.exec(text);
    if (!m) throw new Error("no post form on the page");
    return m[1]!.replaceAll("&amp;", "&");
  }

  async signIn(token: string) {
    const form = await this.get("/app/~/sign-in");
    return this.request("POST", "/app/~/sign-in", { csrf: ConsoleBrowser.csrf(form.text), token });
  }

  async csrf(): Promise<string> {
    return ConsoleBrowser.csrf((await this.get("/app")).text);
  }
}

/**
 * `return` values sign-in must not follow (N16), in the spellings open redirects are made
 * of: absolute URLs, `//host`, backslashes, dot segments, percent-encoded slashes, dots and
 * backslashes, control characters, paths outside `/app/`, the console's own machinery.
 */
export const REFUSED_RETURNS: readonly string[] = [
  "",
  "https://evil.example/app/",
  "http://keyway.test/app/x", // even this origin's absolute URL: only paths are followed
  `${CONSOLE_ORIGIN}/app/x`,
  "//evil.example/app/",
  "///evil.example/app/",
  "/\\evil.example/app/",
  "\\\\evil.example/app/",
  "\\/evil.example",
  "/app\\..\\..\\evil.example",
  "/app/\\\\evil.example",
  "/app//evil.example",
  "/app/x//y",
  "/app/../evil",
  "/app/./x",
  "/app/x/..",
  "/app/%2e%2e/evil",
  "/app/%2E%2E/evil",
  "/app/.%2e/evil",
  "/app/..%2fevil",
  "/app/..%2Fevil",
  "/app%2f..%2fevil",
  "/app/%2f%2fevil.example",
  "/app/%5c%5cevil.example",
  "/app/%5Cevil",
  "/app/%252e%252e/evil",
  "%2fapp%2fx",
  "/app/x%00",
  "/app/x\u0000",
  "/app/x\ty",
  "/app/x\r\nLocation: https://evil.example/",
  " /app/x",
  "/app/x ",
  "/app/x#fragment",
  "/app/x?y=%zz",
  "/app/x@evil.example",
  "/app/é",
  "/apps",
  "/application",
  "/ap",
  "/",
  "/api/v2/account/details",
  "/v1/sys/health",
  "app/x",
  "javascript:alert(1)",
  "data:text/html,hi",
  "/app/~/sign-out",
  "/app/~/sign-in",
  "/app/~",
  `/app/${"x".repeat(1100)}`,
];

/**
 * A `Set-Cookie` line as a browser reads it (RFC 6265 §5.2): the name, the value, and the
 * attributes as a sorted list, since their order carries no meaning.
 */
export function parseSetCookie(line: string): { name: string; value: string; attributes: string[] } {
  const [pair = "", ...attributes] = line.split(";").map((part) => part.trim());
  const eq = pair.indexOf("=");
  return { name: pair.slice(0, eq), value: pair.slice(eq + 1), attributes: attributes.sort() };
}
