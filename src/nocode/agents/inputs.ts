/**
 * The variables an agent receives for a run (decision N18): the workspace's `engine` and
 * `env` variables as the run was created, sensitive values included, recorded on the run
 * (`runs.agent_inputs`) encrypted under KEYWAY_KEK with the context `run-inputs:<run id>`
 * (a column of B11's rewrap list). They are decrypted only into the answer of the job call
 * `GET /jobs/:id/inputs`, never logged and never shown by /api/v2.
 */
import { decryptSecret, encryptSecret } from "../../lib/crypto/kek";

/** One variable as an agent receives it. */
export interface AgentVariable {
  key: string;
  value: string;
  hcl: boolean;
  sensitive: boolean;
}

/** What a run records for its agent. */
export interface AgentInputs {
  engine: AgentVariable[];
  env: AgentVariable[];
}

/** The AES-GCM context of a run's inputs (B2: bound to the run). */
export const runInputsContext = (runId: string) => `run-inputs:${runId}`;

/** A var as E4 (or a later run's creation) has it in the clear. */
export interface PlainVar {
  key: string;
  value: string;
  category: "engine" | "env";
  hcl: boolean;
  sensitive: boolean;
}

/** The encrypted inputs of a run, from the vars in the clear. */
export function sealAgentInputs(
  env: Pick<Env, "KEYWAY_KEK">,
  runId: string,
  vars: readonly PlainVar[],
): Promise<string> {
  const pick = (category: PlainVar["category"]) =>
    vars
      .filter((v) => v.category === category)
      .map(({ key, value, hcl, sensitive }) => ({ key, value, hcl, sensitive }));
  const inputs: AgentInputs = { engine: pick("engine"), env: pick("env") };
  return encryptSecret(env.KEYWAY_KEK, runInputsContext(runId), JSON.stringify(inputs));
}

/** The inputs of a run (none recorded: no variables). */
export async function openAgentInputs(
  env: Pick<Env, "KEYWAY_KEK">,
  runId: string,
  sealed: string | null,
): Promise<AgentInputs> {
  if (!sealed) return { engine: [], env: [] };
  return JSON.parse(await decryptSecret(env.KEYWAY_KEK, runInputsContext(runId), sealed)) as AgentInputs;
}
