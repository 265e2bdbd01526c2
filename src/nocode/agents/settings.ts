/**
 * The execution plane's deployment vars (decision N18), read at request time: the silence
 * after which an agent reads `unknown` and then `errored`, the caps of plan and apply jobs,
 * and the oldest agent program `register` accepts. An absent or malformed value falls back
 * to the decision's default.
 */

/** Decision N18's defaults, in seconds. */
export const AGENT_DEFAULTS = {
  unknownAfterSeconds: 30,
  erroredAfterSeconds: 300,
  planJobLimitSeconds: 2 * 3600,
  applyJobLimitSeconds: 24 * 3600,
  minimumVersion: "0.1.0",
} as const;

/** The settings in milliseconds. */
export interface AgentSettings {
  unknownAfterMs: number;
  erroredAfterMs: number;
  planJobLimitMs: number;
  applyJobLimitMs: number;
  minimumVersion: string;
}

/** The vars this module reads; each may be absent (defaults apply). */
export type AgentSettingVars = Partial<
  Record<
    | "KEYWAY_AGENT_UNKNOWN_AFTER"
    | "KEYWAY_AGENT_ERRORED_AFTER"
    | "KEYWAY_PLAN_JOB_LIMIT_SECONDS"
    | "KEYWAY_APPLY_JOB_LIMIT_SECONDS"
    | "KEYWAY_AGENT_MINIMUM_VERSION",
    string
  >
>;

function seconds(raw: string | undefined, fallback: number): number {
  if (raw === undefined || !/^[0-9]+(\.[0-9]+)?$/.test(raw.trim())) return fallback * 1000;
  const value = Number(raw);
  return value > 0 ? Math.round(value * 1000) : fallback * 1000;
}

/** The settings of a deployment. */
export function agentSettings(vars: AgentSettingVars): AgentSettings {
  const erroredAfterMs = seconds(vars.KEYWAY_AGENT_ERRORED_AFTER, AGENT_DEFAULTS.erroredAfterSeconds);
  return {
    unknownAfterMs: Math.min(
      seconds(vars.KEYWAY_AGENT_UNKNOWN_AFTER, AGENT_DEFAULTS.unknownAfterSeconds),
      erroredAfterMs,
    ),
    erroredAfterMs,
    planJobLimitMs: seconds(vars.KEYWAY_PLAN_JOB_LIMIT_SECONDS, AGENT_DEFAULTS.planJobLimitSeconds),
    applyJobLimitMs: seconds(vars.KEYWAY_APPLY_JOB_LIMIT_SECONDS, AGENT_DEFAULTS.applyJobLimitSeconds),
    minimumVersion: /^[0-9]+\.[0-9]+\.[0-9]+$/.test(vars.KEYWAY_AGENT_MINIMUM_VERSION ?? "")
      ? vars.KEYWAY_AGENT_MINIMUM_VERSION!
      : AGENT_DEFAULTS.minimumVersion,
  };
}

/** A duration as the run error names it: `2h`, `90m`, `45s`. */
export function durationText(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s % 3600 === 0) return `${s / 3600}h`;
  if (s % 60 === 0) return `${s / 60}m`;
  return `${s}s`;
}
