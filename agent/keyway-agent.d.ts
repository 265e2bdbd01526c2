/**
 * Types of what `agent/keyway-agent` exports for its unit tests (test/unit/agent). The program
 * itself is plain JavaScript so operators can run it with nothing but Node.js.
 */
export const AGENT_VERSION: string;
export const OVERRIDE_TF: string;
export const FILES: {
  override: string;
  tfvarsJson: string;
  tfvarsHcl: string;
  state: string;
  planFile: string;
  lockFile: string;
  cliConfig: string;
  tmp: string;
};
export class ConfigurationError extends Error {}
export class JobError extends Error {}
export function isReservedEnvName(name: string): boolean;
export function parseArguments(argv: string[]): { single: boolean; version: boolean; help: boolean };
export interface AgentConfiguration {
  address: string;
  token: string;
  name: string;
  engine: string | null;
  workdir: string;
  drainSeconds: number;
}
export function readConfiguration(env: Record<string, string | undefined>, hostname?: string): AgentConfiguration;
export function findEngine(configured: string | null, pathVariable: string | undefined): { path: string; name: "tofu" | "terraform" };
export interface RegistryCredential {
  env: Record<string, string>;
  cliConfig: string | null;
}
export function registryCredential(registry: { host: string; token: string } | null | undefined): RegistryCredential;
export function engineEnvironment(input: {
  agentEnv: Record<string, string | undefined>;
  jobDir: string;
  credential?: RegistryCredential;
  envVariables?: { key: string; value: string; sensitive?: boolean }[];
}): { env: Record<string, string>; dropped: string[] };
export function variableFiles(
  terraformVariables: { key: string; value: string; hcl?: boolean; sensitive?: boolean }[] | undefined,
): { json: string; hcl: string | null };
export const COMMANDS: {
  version(): string[];
  planInit(): string[];
  plan(options: { destroy: boolean; hcl: boolean }): string[];
  show(): string[];
  applyInit(): string[];
  apply(): string[];
};
export type TarEntry =
  | { path: string; type: "file"; data: Buffer; executable: boolean }
  | { path: string; type: "directory" }
  | { path: string; type: "symlink"; target: string }
  | { path: string; type: "hardlink"; target: string };
export function readTarball(
  gzipped: Uint8Array,
  limits?: { entries: number; bytes: number; pathLength: number },
): TarEntry[];
export function extractEntries(entries: TarEntry[], root: string): void;
