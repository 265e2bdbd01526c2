/**
 * The engine's JSON plan of an agent run, as the plan page and the console show it (decision
 * N19): the plan job's JSON plan is read from R2 (decrypted, N20 "At rest"), parsed and
 * reduced to the bounded, masked changes of src/lib/terraform/plan-changes.ts. Nothing of the
 * document is kept: every page view reads it again, so no value of it is stored in plain
 * text anywhere.
 *
 * N20 lets a JSON plan be 64 MiB; parsing that much inside one request could exhaust a
 * Worker's memory, so a plan above {@link SHOWN_JSON_PLAN_BYTES} is not parsed: the pages
 * then show the addresses and actions recorded at upload, and say why.
 */

import type { Db } from "../../db/client";
import { fromUtf8 } from "../../lib/bytes";
import { describePlanChanges, PlanChangesError } from "../../lib/terraform/plan-changes";
import { findRunData } from "../agents/repo";
import { readRunData } from "../agents/run-data";
import { findJobOfRun } from "../run-data/repo";
import type { RunRow } from "../runs/repo";
import type { EnginePlanView } from "./model";

/** The largest JSON plan whose attribute changes are shown (bytes). */
export const SHOWN_JSON_PLAN_BYTES = 4 * 1024 * 1024;

/**
 * The changes of the agent run's JSON plan.
 *
 * @example
 * const view = await loadEnginePlan(c.env, db, run);
 */
export async function loadEnginePlan(
  env: Pick<Env, "RUN_DATA" | "KEYWAY_KEK">,
  db: Db,
  run: Pick<RunRow, "id">,
): Promise<EnginePlanView> {
  const job = await findJobOfRun(db, run.id, "plan");
  const row = job?.jsonPlanObjectId ? await findRunData(db, job.jsonPlanObjectId) : undefined;
  if (!row) return { kind: "unavailable" };
  if (row.size > SHOWN_JSON_PLAN_BYTES) return { kind: "too-large", size: row.size };
  const bytes = await readRunData(env, row);
  if (!bytes) return { kind: "unavailable" };
  // The upload checked it is JSON with resource changes (src/nocode/agents/protocol-routes.ts); a
  // plan this reader cannot describe (an action it does not know) leaves the pages with the
  // addresses and actions recorded at upload rather than failing them.
  try {
    return { kind: "changes", changes: describePlanChanges(JSON.parse(fromUtf8(bytes))) };
  } catch (err) {
    if (err instanceof PlanChangesError || err instanceof SyntaxError) return { kind: "unavailable" };
    throw err;
  }
}
