/**
 * Decision B10: refuse a misconfigured deployment. The Worker answers every request 503
 * `server misconfigured: <setting>: <reason>` while this finds a problem (src/index.ts),
 * and `npm start` (scripts/start.mjs) stops with the same message before starting.
 *
 * Refused: a missing secret; a placeholder of `.dev.vars.example` (its `change-me-…`
 * tokens, its all-zero keys); a key that is not base64 of 32 bytes; a duplicate key id in
 * KEYWAY_KEK; ROOT_TOKEN equal to ADMIN_TOKEN. The message names the setting and the
 * reason, never a secret's value. Pure: no bindings, no Hono (start.mjs bundles it).
 */
import { fromBase64 } from "../bytes";
import { parseKek } from "../crypto/kek";

/** The four secrets of decision B6. */
export interface DeploymentSecrets {
  ROOT_TOKEN?: string;
  ADMIN_TOKEN?: string;
  KEYWAY_HASH_KEY?: string;
  KEYWAY_KEK?: string;
}

/** The token placeholders of `.dev.vars.example` (a unit test keeps this list in step with the file). */
export const PLACEHOLDER_TOKENS: readonly string[] = ["change-me-root-token", "change-me-admin-token"];

const PLACEHOLDER_REASON = "the placeholder value of .dev.vars.example";

function isAllZero(bytes: Uint8Array): boolean {
  return bytes.every((b) => b === 0);
}

function tokenProblem(name: string, value: string | undefined): string | null {
  if (!value) return `${name}: not set`;
  if (PLACEHOLDER_TOKENS.includes(value) || value.startsWith("change-me")) return `${name}: ${PLACEHOLDER_REASON}`;
  return null;
}

function hashKeyProblem(value: string | undefined): string | null {
  if (!value) return "KEYWAY_HASH_KEY: not set";
  let raw: Uint8Array;
  try {
    raw = fromBase64(value.trim());
  } catch {
    return "KEYWAY_HASH_KEY: must be base64 of 32 bytes";
  }
  if (raw.length !== 32) return "KEYWAY_HASH_KEY: must be base64 of 32 bytes";
  if (isAllZero(raw)) return `KEYWAY_HASH_KEY: ${PLACEHOLDER_REASON} (all-zero key)`;
  return null;
}

function kekProblem(value: string | undefined): string | null {
  if (!value) return "KEYWAY_KEK: not set";
  try {
    for (const { id, raw } of parseKek(value)) {
      if (isAllZero(raw)) return `KEYWAY_KEK: key "${id}" is ${PLACEHOLDER_REASON} (all-zero key)`;
    }
  } catch (e) {
    return `KEYWAY_KEK: ${(e as Error).message}`;
  }
  return null;
}

/**
 * What is wrong with the deployment's secrets, as `<setting>: <reason>`, or null.
 *
 * @example
 * deploymentProblem({ ROOT_TOKEN: "t", ADMIN_TOKEN: "t", ... }) // → "ROOT_TOKEN: equal to ADMIN_TOKEN"
 */
export function deploymentProblem(secrets: DeploymentSecrets): string | null {
  const problem =
    tokenProblem("ROOT_TOKEN", secrets.ROOT_TOKEN) ??
    tokenProblem("ADMIN_TOKEN", secrets.ADMIN_TOKEN) ??
    (secrets.ROOT_TOKEN === secrets.ADMIN_TOKEN ? "ROOT_TOKEN: equal to ADMIN_TOKEN (each API needs its own)" : null) ??
    hashKeyProblem(secrets.KEYWAY_HASH_KEY) ??
    kekProblem(secrets.KEYWAY_KEK);
  return problem;
}

/** The message of B10's 503 and of `npm start`'s refusal. */
export function misconfiguredMessage(problem: string): string {
  return `server misconfigured: ${problem}`;
}

/** The last secrets checked in this isolate and the answer (checked once per distinct config). */
let checked: { secrets: DeploymentSecrets; problem: string | null } | null = null;

/**
 * deploymentProblem, computed once per isolate for each distinct configuration: the hot
 * path compares four strings (the same objects from one request to the next).
 */
export function cachedDeploymentProblem(secrets: DeploymentSecrets): string | null {
  const last = checked?.secrets;
  if (
    checked &&
    last &&
    last.ROOT_TOKEN === secrets.ROOT_TOKEN &&
    last.ADMIN_TOKEN === secrets.ADMIN_TOKEN &&
    last.KEYWAY_HASH_KEY === secrets.KEYWAY_HASH_KEY &&
    last.KEYWAY_KEK === secrets.KEYWAY_KEK
  ) {
    return checked.problem;
  }
  const snapshot: DeploymentSecrets = {
    ROOT_TOKEN: secrets.ROOT_TOKEN,
    ADMIN_TOKEN: secrets.ADMIN_TOKEN,
    KEYWAY_HASH_KEY: secrets.KEYWAY_HASH_KEY,
    KEYWAY_KEK: secrets.KEYWAY_KEK,
  };
  const problem = deploymentProblem(snapshot);
  checked = { secrets: snapshot, problem };
  return problem;
}
