/**
 * The console's stylesheet and script (N14) against the Worker: every page links them at
 * URLs that carry the SHA-256 of the bytes served there (so a changed asset cannot keep its
 * URL), they are served without a session and cached, and any other `console.*` name (an
 * older hash, the unhashed name, the earlier `?v=` form) is a 404 that is never cached.
 */
import { describe, expect, it } from "vitest";
import { CONSOLE_ORIGIN } from "../../../helpers/console-browser";
import { workerRequest } from "../../../helpers/worker-request";

const get = (path: string) => workerRequest(`${CONSOLE_ORIGIN}${path}`, { redirect: "manual" });

async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The asset URLs a console page links. */
async function linkedAssets(): Promise<{ css: string; js: string }> {
  const page = await get("/app/~/sign-in");
  expect(page.status).toBe(200);
  const css = /<link rel="stylesheet" href="(\/app\/~\/console\.[0-9a-f]{16}\.css)">/.exec(page.text)?.[1];
  const js = /<script src="(\/app\/~\/console\.[0-9a-f]{16}\.js)" defer><\/script>/.exec(page.text)?.[1];
  expect(css).toBeDefined();
  expect(js).toBeDefined();
  return { css: css!, js: js! };
}

describe("console assets", () => {
  it("are linked at URLs carrying the hash of the bytes served there, and served cached without a session", async () => {
    const { css, js } = await linkedAssets();
    for (const [path, type] of [
      [css, "text/css; charset=utf-8"],
      [js, "text/javascript; charset=utf-8"],
    ] as const) {
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe(type);
      expect(res.headers.get("cache-control")).toBe("public, max-age=86400");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.text.length).toBeGreaterThan(100);
      // The URL names these very bytes: change the asset and its URL changes with it.
      const hash = /console\.([0-9a-f]{16})\./.exec(path)![1];
      expect((await sha256Hex(res.text)).slice(0, 16)).toBe(hash);
    }
    expect(await linkedAssets()).toEqual({ css, js }); // the same URLs page after page
  });

  it("answer any other console.* name with a 404 that is never cached", async () => {
    const { css } = await linkedAssets();
    const other = css.replace(/[0-9a-f]{16}/, (h) => (h[0] === "0" ? `1${h.slice(1)}` : `0${h.slice(1)}`));
    for (const path of [
      other,
      "/app/~/console.css",
      "/app/~/console.js",
      "/app/~/console.css?v=4",
      "/app/~/console.0000000000000000.js",
      "/app/~/console.",
    ]) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get("cache-control"), path).toBe("no-store");
      expect(res.headers.get("content-type"), path).toBe("text/html; charset=UTF-8");
    }
  });
});
