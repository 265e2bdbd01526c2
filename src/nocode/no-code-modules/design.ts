/**
 * Decision N12: a module meets the no-code design requirements
 * when its root module declares at least one resource and its providers (a
 * `required_providers` entry or a `provider` block). Checked on E1, on enabling through
 * E2 and on moving an enabled module's pin through E2, whenever the pinned version is `ok`.
 */
import type { ModuleSummary } from "../../lib/terraform/types";
import { type NocodeError, unprocessable } from "../errors";

/** What the version lacks, as readable phrases; empty when it meets N12. */
export function designProblems(
  summary: Pick<ModuleSummary, "resources" | "requiredProviders" | "providerConfigs">,
): string[] {
  const problems: string[] = [];
  if (!summary.resources.some((r) => r.mode === "managed")) problems.push("it declares no resource in its root module");
  if (summary.requiredProviders.length === 0 && summary.providerConfigs.length === 0) {
    problems.push("it declares no provider (no required_providers entry and no provider block)");
  }
  return problems;
}

/** The 422 of N12 for `version`, or null when the summary meets the requirements. */
export function designError(
  version: string,
  summary: Pick<ModuleSummary, "resources" | "requiredProviders" | "providerConfigs">,
): NocodeError | null {
  const problems = designProblems(summary);
  if (problems.length === 0) return null;
  return unprocessable(
    `Module version ${version} does not meet the no-code design requirements: ${problems.join("; ")}.`,
  );
}
