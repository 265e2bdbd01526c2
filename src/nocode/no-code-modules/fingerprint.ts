/**
 * Fingerprints that tell whether something changed since a run was planned or a
 * workspace was provisioned (decision N8: `no-code-upgrade-available`, stale upgrade
 * plans). Hex SHA-256 of a canonical JSON form; they reveal nothing about values.
 */
import { toHex, utf8 } from "../../lib/bytes";

/** JSON with object keys sorted, so equal values give equal text. */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return "null";
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}

async function sha256Hex(text: string): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", utf8(text))));
}

/** One variable-options set as the fingerprint sees it. */
export interface OptionSetLike {
  variableName: string;
  variableType: string;
  /** The allowed values (parsed JSON array). */
  options: readonly unknown[];
}

/**
 * N8: fingerprint of a no-code module's variable options. Independent of set ids, of
 * the order of the sets and of the order of the values in each set: only which variables
 * have which allowed values (and types) counts.
 *
 * @example
 * const fp = await optionSetFingerprint(await listVariableOptions(db, module.id));
 */
export async function optionSetFingerprint(sets: readonly OptionSetLike[]): Promise<string> {
  const normalised = sets
    .map((s) => ({
      name: s.variableName,
      type: s.variableType,
      options: s.options.map(canonicalJson).sort(),
    }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return sha256Hex(canonicalJson(normalised));
}

/**
 * N8 staleness: fingerprint of a workspace's variables. Every var write gives the var a
 * new `versionId`, so any create, update or delete changes the fingerprint.
 */
export async function workspaceVarsFingerprint(vars: readonly { id: string; versionId: string }[]): Promise<string> {
  const parts = vars.map((v) => `${v.id}:${v.versionId}`).sort();
  return sha256Hex(parts.join("\n"));
}

/**
 * The `no-code-module-versions` id of a (no-code module, version) pair: derived, so every
 * workspace on the same pair shows the same id without a table of its own.
 */
export async function noCodeModuleVersionId(noCodeModuleId: string, version: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", utf8(`${noCodeModuleId}\u0000${version}`)));
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let out = "";
  for (let i = 0; i < 16; i++) out += alphabet[digest[i]! % 62];
  return `nocodever-${out}`;
}
