/**
 * Facts read from the project's wrangler.jsonc for Node-side tests that start their own
 * workerd (they must run it with the same compatibility date the Worker deploys with).
 */
import { readFileSync } from "node:fs";
import path from "node:path";

export const wranglerConfigPath = path.resolve(import.meta.dirname, "../../wrangler.jsonc");

export function compatibilityDate(): string {
  const match = /"compatibility_date"\s*:\s*"(\d{4}-\d{2}-\d{2})"/.exec(readFileSync(wranglerConfigPath, "utf8"));
  if (!match) throw new Error("wrangler.jsonc has no compatibility_date");
  return match[1]!;
}
