/**
 * State version outputs (decision N20), in HCP Terraform's shape
 * (https://developer.hashicorp.com/terraform/cloud-docs/api-docs/state-version-outputs):
 * `name`, `sensitive`, `type`, `value`, `detailed-type`. The names and sensitivity are
 * recorded on the state version; the values live only in the state itself (encrypted in R2),
 * so they are read from it when asked for. Structural state versions (N7) have no values.
 *
 * An output's id is its state version's id and its position: `wsout-<16 characters of the
 * state version id>-<position>`, so outputs need no table of their own and stay stable.
 */
import type { Db } from "../../db/client";
import type { Page, PageWindow } from "../../db/page";
import { StateOutputsScanner } from "../../lib/terraform/json-plan";
import { findRunData } from "../agents/repo";
import { openRunData } from "../agents/run-data";
import type { StateVersionRow } from "../runs/repo";

/** An output as listed on its state version. */
export interface RecordedOutput {
  name: string;
  sensitive: boolean;
}

/** An output with what the state says of it. */
export interface StateOutput extends RecordedOutput {
  id: string;
  /** HCP's `type`: the JSON kind of the value (`string`, `number`, `boolean`, `array`, `object`, `null`). */
  type: string;
  /** The engine's type constraint (`"string"`, `["list","string"]`, …); null when unknown. */
  detailedType: unknown;
  value: unknown;
}

const SV_PREFIX = "sv-";
const OUTPUT_ID = /^wsout-([A-Za-z0-9]{16})-(0|[1-9][0-9]{0,5})$/;

/** The id of the output at `position` of state version `svId`. */
export function outputId(svId: string, position: number): string {
  return `wsout-${svId.slice(SV_PREFIX.length)}-${position}`;
}

/** The state version id and position an output id names, or null when it is not one. */
export function parseOutputId(id: string): { stateVersionId: string; position: number } | null {
  const m = OUTPUT_ID.exec(id);
  return m ? { stateVersionId: `${SV_PREFIX}${m[1]}`, position: Number(m[2]) } : null;
}

/** The outputs recorded on a state version (names and sensitivity, in the state's order). */
export function recordedOutputs(sv: Pick<StateVersionRow, "outputs">): RecordedOutput[] {
  return (JSON.parse(sv.outputs) as RecordedOutput[]).map(({ name, sensitive }) => ({ name, sensitive }));
}

/** HCP's `type` of a value: the JSON kind. */
function jsonKind(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "boolean") return "boolean";
  return typeof value === "object" ? "object" : typeof value;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The outputs of a state version with their values (read from the stored state of an engine
 * state version; null for a structural one or a state that is gone).
 */
export async function stateOutputs(
  env: Pick<Env, "RUN_DATA" | "KEYWAY_KEK">,
  db: Db,
  sv: Pick<StateVersionRow, "id" | "outputs" | "objectId">,
): Promise<StateOutput[]> {
  const recorded = recordedOutputs(sv);
  let fromState: Record<string, unknown> = {};
  if (sv.objectId && recorded.length > 0) {
    const row = await findRunData(db, sv.objectId);
    const stream = row ? await openRunData(env, row) : null;
    if (stream) {
      // Streamed: only the outputs are kept, whatever the state's size (N20: up to 64 MiB).
      const scanner = new StateOutputsScanner();
      const decoder = new TextDecoder();
      for await (const chunk of stream) scanner.write(decoder.decode(chunk, { stream: true }));
      scanner.write(decoder.decode());
      fromState = scanner.end();
    }
  }
  return recorded.map((o, position) => {
    const entry = fromState[o.name];
    const value = isObject(entry) ? (entry.value ?? null) : null;
    return {
      id: outputId(sv.id, position),
      name: o.name,
      sensitive: o.sensitive,
      type: jsonKind(value),
      detailedType: isObject(entry) ? (entry.type ?? null) : null,
      value,
    };
  });
}

/** One page of a state version's outputs, in their recorded order, and their count. */
export async function stateOutputsPage(
  env: Pick<Env, "RUN_DATA" | "KEYWAY_KEK">,
  db: Db,
  sv: Pick<StateVersionRow, "id" | "outputs" | "objectId">,
  page: PageWindow,
): Promise<Page<StateOutput>> {
  const outputs = await stateOutputs(env, db, sv);
  return { rows: outputs.slice(page.offset, page.offset + page.size), total: outputs.length };
}
