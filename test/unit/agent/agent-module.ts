/**
 * `agent/keyway-agent` loaded for its unit tests, with the types of what it exports. The
 * program is plain JavaScript, so operators can run it with nothing but Node.js, and it has no
 * extension, so it is imported by path at run time rather than through the type checker.
 */
import path from "node:path";

/** What the agent program exports. */
interface AgentModule {
  AGENT_VERSION: string;
  OVERRIDE_TF: string;
  FILES: {
    override: string;
    tfvarsJson: string;
    tfvarsHcl: string;
    state: string;
    planFile: string;
    lockFile: string;
    cliConfig: string;
    tmp: string;
  };
  ConfigurationError: new (message: string) => Error;
  JobError: new (message: string) => Error;
  isReservedEnvName(name: string): boolean;
  isEngineControlledPath(name: string): boolean;
  parseArguments(argv: string[]): { single: boolean; version: boolean; help: boolean };
  readConfiguration(env: Record<string, string | undefined>, hostname?: string): AgentConfiguration;
  findEngine(configured: string | null, pathVariable: string | undefined): { path: string; name: "tofu" | "terraform" };
  registryCredential(registry: { host: string; token: string } | null | undefined): RegistryCredential;
  engineEnvironment(input: {
    agentEnv: Record<string, string | undefined>;
    jobDir: string;
    credential?: RegistryCredential;
    envVariables?: { key: string; value: string; sensitive?: boolean }[];
  }): { env: Record<string, string>; dropped: string[] };
  variableFiles(terraformVariables: { key: string; value: string; hcl?: boolean; sensitive?: boolean }[] | undefined): {
    json: string;
    hcl: string | null;
  };
  COMMANDS: {
    version(): string[];
    planInit(): string[];
    plan(options: { destroy: boolean; hcl: boolean }): string[];
    show(): string[];
    applyInit(): string[];
    apply(): string[];
  };
  readTarball(gzipped: Uint8Array, limits?: { entries: number; bytes: number; pathLength: number }): TarEntry[];
  extractEntries(entries: TarEntry[], root: string): void;
}

interface AgentConfiguration {
  address: string;
  token: string;
  name: string;
  engine: string | null;
  workdir: string;
  drainSeconds: number;
}

interface RegistryCredential {
  env: Record<string, string>;
  cliConfig: string | null;
}

type TarEntry =
  | { path: string; type: "file"; data: Buffer; executable: boolean }
  | { path: string; type: "directory" }
  | { path: string; type: "symlink"; target: string }
  | { path: string; type: "hardlink"; target: string };

/** Absolute path of the agent program. */
export const AGENT_PROGRAM = path.resolve(import.meta.dirname, "../../../agent/keyway-agent");

/** The agent program's exports (it runs nothing when imported). */
export const agent = (await import(/* @vite-ignore */ AGENT_PROGRAM)) as AgentModule;
