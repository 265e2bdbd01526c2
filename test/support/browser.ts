/**
 * Debian's Chromium driven by `playwright-core` for the console's browser tests (issue
 * 20). The binary comes from apt (scripts/ensure-system-deps.sh installs `chromium` and
 * `chromium-driver`); Playwright's own browser downloads are never used. Also: axe-core
 * run inside the page, screenshots into `.tmp/screenshots/` (a CI artifact), and a record
 * of every Content-Security-Policy violation a page reports.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { expect } from "vitest";

const projectRoot = path.resolve(import.meta.dirname, "../..");
export const SCREENSHOT_DIR = path.join(projectRoot, ".tmp/screenshots");

/** The system Chromium (`chromium` on Debian). */
function chromiumPath(): string {
  return execFileSync("sh", ["-c", "command -v chromium || command -v chromium-browser"], { encoding: "utf8" }).trim();
}

/** Launch headless Chromium. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    // The sandbox needs user namespaces, which CI containers (and root) often lack.
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
  });
}

/** Save a full-page screenshot as `.tmp/screenshots/<name>.png`; returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** An axe-core violation, reduced to what a failure message needs. */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/**
 * Run axe-core (WCAG 2 A/AA rules) on the page as it is and return its serious and
 * critical violations. axe is evaluated through the DevTools protocol, not added as a
 * `<script>`, so the page's CSP stays as strict as it is.
 */
export async function seriousAxeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    // biome-ignore lint/suspicious/noExplicitAny: axe is a global set by the evaluated source
    const axe = (globalThis as any).axe;
    const result = await axe.run(document, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] },
    });
    // biome-ignore lint/suspicious/noExplicitAny: axe's result shape
    return result.violations.map((v: any) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      // biome-ignore lint/suspicious/noExplicitAny: axe's result shape
      targets: v.nodes.map((n: any) => String(n.target)),
    }));
  });
  return (violations as AxeViolation[]).filter((v) => v.impact === "serious" || v.impact === "critical");
}

/** Collect the CSP violations a page reports on its console. */
export function recordCspViolations(page: Page): string[] {
  const seen: string[] = [];
  page.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) seen.push(message.text());
  });
  return seen;
}

/** A fresh browser context with the console tests' viewport, its page, and the page's CSP violations. */
export async function openPage(browser: Browser): Promise<{ context: BrowserContext; page: Page; csp: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
  const page = await context.newPage();
  return { context, page, csp: recordCspViolations(page) };
}

/**
 * Check the page as it is — axe (no serious or critical violation) and no CSP violation
 * recorded in `csp` — then save its screenshot as `name`.
 */
export async function expectCleanPage(page: Page, csp: string[], name: string): Promise<void> {
  expect(await seriousAxeViolations(page), `axe on ${name}`).toEqual([]);
  expect(csp, `CSP violations on ${name}`).toEqual([]);
  await screenshot(page, name);
}
