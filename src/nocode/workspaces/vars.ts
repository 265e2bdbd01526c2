/**
 * Workspace variables (decisions N5, N9, B2): parsing, the module's rules, storage and
 * the `vars` resource.
 *
 * - `category` is `engine` or `env`; `terraform` is accepted as a synonym of `engine`
 *   and stored (and shown) as `engine`. Keys are unique per workspace and category
 *   (422 `Key has already been taken`).
 * - A value for a module variable with non-empty options must be one of them (422);
 *   every required module variable (no default) must have an `engine` var (422).
 * - Sensitive values are write-only: stored only AES-GCM encrypted under KEYWAY_KEK
 *   (bound to the var id) plus their keyed hash for the planner, never returned (`value`
 *   is null). Of a sensitive var only the value and description may change.
 */
import { keyedHash } from "../../lib/crypto/hmac";
import { encryptSecret } from "../../lib/crypto/kek";
import { toHex, randomBytes } from "../../lib/bytes";
import type { ModuleSummary } from "../../lib/terraform/types";
import { NocodeError, unprocessable } from "../errors";
import { newId } from "../ids";
import { type FieldErrors, isObject, relationshipAt } from "../no-code-modules/document";
import { valueMatchesOptions } from "../no-code-modules/options";
import type { VariableOptionSet } from "../no-code-modules/repo";
import { isoTime } from "../respond";
import type { WorkspaceRow, WorkspaceVarRow } from "./repo";
import { workspacePath } from "./serialize";

/** Stored categories. */
export type VarCategory = WorkspaceVarRow["category"];

/** Accepted `type` of a var resource (N1). */
export const VAR_TYPES = ["vars", "var"] as const;

/** Longest accepted key and description. */
export const MAX_VAR_KEY_LENGTH = 512;
export const MAX_VAR_DESCRIPTION_LENGTH = 2048;

/** A var as a request gives it. */
export interface VarInput {
  key: string;
  value: string;
  description: string | null;
  category: VarCategory;
  hcl: boolean;
  sensitive: boolean;
}

/** N5: `engine` or `env`, with `terraform` as a synonym of `engine`. */
export function parseCategory(value: unknown): VarCategory | undefined {
  if (value === "engine" || value === "terraform") return "engine";
  if (value === "env") return "env";
  return undefined;
}

const label = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);

/** Decision B9: an `hcl: true` value nests at most this deep (deeper → 422). */
export const MAX_HCL_VALUE_NESTING = 100;

/**
 * Whether an HCL value's brackets (`[`, `{`, `(`) nest deeper than
 * {@link MAX_HCL_VALUE_NESTING}. One linear pass; quoted strings are skipped, so the
 * depth is an upper bound of the value's nesting, also when it is read as JSON.
 */
export function hclValueTooDeep(value: string): boolean {
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const ch = value[i];
    if (quoted) {
      if (ch === "\\") i++;
      else if (ch === '"') quoted = false;
    } else if (ch === '"') quoted = true;
    else if (ch === "[" || ch === "{" || ch === "(") {
      if (++depth > MAX_HCL_VALUE_NESTING) return true;
    } else if ((ch === "]" || ch === "}" || ch === ")") && depth > 0) depth--;
  }
  return false;
}

/**
 * Read the var attributes present in `attrs` (type errors recorded under `pointer`).
 * `current` is the stored var a PATCH changes: its `hcl` and value apply where `attrs`
 * omits them, for the nesting bound of `hcl: true` values (B9).
 */
export function parseVarAttributes(
  errors: FieldErrors,
  attrs: Record<string, unknown>,
  pointer: string,
  current?: { hcl: boolean; value: string | null },
): Partial<VarInput> {
  const out: Partial<VarInput> = {};
  if (attrs.key !== undefined) {
    if (typeof attrs.key !== "string" || attrs.key.trim() === "") errors.add(`${pointer}/key`, "Key can't be blank");
    else if (attrs.key.length > MAX_VAR_KEY_LENGTH) errors.add(`${pointer}/key`, `Key is too long (maximum is ${MAX_VAR_KEY_LENGTH} characters)`);
    else out.key = attrs.key;
  }
  if (attrs.value !== undefined) {
    if (attrs.value === null) out.value = "";
    else if (typeof attrs.value !== "string") errors.add(`${pointer}/value`, "Value must be a string");
    else out.value = attrs.value;
  }
  if (attrs.description !== undefined) {
    if (attrs.description !== null && typeof attrs.description !== "string") errors.add(`${pointer}/description`, "Description must be a string");
    else if (typeof attrs.description === "string" && attrs.description.length > MAX_VAR_DESCRIPTION_LENGTH) {
      errors.add(`${pointer}/description`, `Description is too long (maximum is ${MAX_VAR_DESCRIPTION_LENGTH} characters)`);
    } else out.description = attrs.description;
  }
  if (attrs.category !== undefined) {
    const category = parseCategory(attrs.category);
    if (!category) errors.add(`${pointer}/category`, 'Category must be "engine" (or "terraform") or "env"');
    else out.category = category;
  }
  for (const flag of ["hcl", "sensitive"] as const) {
    const value = attrs[flag];
    if (value === undefined || value === null) continue;
    if (typeof value !== "boolean") errors.add(`${pointer}/${flag}`, `${label(flag)} must be true or false`);
    else out[flag] = value;
  }
  const hcl = out.hcl ?? current?.hcl ?? false;
  const value = out.value ?? current?.value ?? null;
  if (hcl && value !== null && hclValueTooDeep(value)) {
    errors.add(`${pointer}/value`, `Value nests more than ${MAX_HCL_VALUE_NESTING} levels deep (the limit of HCL values)`);
  }
  return out;
}

/** A complete var for a create: `key` and `category` required, the rest defaulted (seed E4). */
export function parseVarCreate(errors: FieldErrors, attrs: Record<string, unknown>, pointer: string): VarInput | undefined {
  const before = errors.errors.length;
  const parsed = parseVarAttributes(errors, attrs, pointer);
  if (attrs.key === undefined || attrs.key === null) errors.add(`${pointer}/key`, "Key can't be blank");
  if (attrs.category === undefined || attrs.category === null) errors.add(`${pointer}/category`, 'Category must be "engine" (or "terraform") or "env"');
  if (errors.errors.length > before) return undefined;
  return {
    key: parsed.key!,
    value: parsed.value ?? "",
    description: parsed.description ?? null,
    category: parsed.category!,
    hcl: parsed.hcl ?? false,
    sensitive: parsed.sensitive ?? false,
  };
}

/** Parse the members of E4's (and E5's) `vars` relationship. */
export function parseVarMembers(errors: FieldErrors, members: readonly Record<string, unknown>[], relationshipPointer: string): VarInput[] {
  const out: VarInput[] = [];
  members.forEach((member, i) => {
    const pointer = `${relationshipPointer}/data/${i}`;
    if (member.type !== undefined && (typeof member.type !== "string" || !(VAR_TYPES as readonly string[]).includes(member.type))) {
      errors.add(`${pointer}/type`, 'type must be "vars"');
      return;
    }
    const attrs = member.attributes ?? {};
    if (!isObject(attrs)) {
      errors.add(`${pointer}/attributes`, "attributes must be an object");
      return;
    }
    const input = parseVarCreate(errors, attrs, `${pointer}/attributes`);
    if (input) out.push(input);
  });
  return out;
}

/** A var as the module rules see it; `value` is null when it is a stored sensitive value (unknown here). */
export interface VarForRules {
  key: string;
  category: VarCategory;
  value: string | null;
  hcl: boolean;
}

/** Render a value list for a message. */
function optionList(options: readonly unknown[]): string {
  return options.map((o) => (typeof o === "string" ? `"${o}"` : String(o))).join(", ");
}

/** N5: an `engine` value outside its variable's non-empty options → 422. */
export function checkVarOptions(vars: readonly VarForRules[], options: readonly VariableOptionSet[]): void {
  const byName = new Map(options.filter((s) => s.options.length > 0).map((s) => [s.variableName, s.options]));
  for (const v of vars) {
    if (v.category !== "engine" || v.value === null) continue;
    const allowed = byName.get(v.key);
    if (allowed && !valueMatchesOptions(v.value, v.hcl, allowed)) {
      throw unprocessable(`Value of variable "${v.key}" must be one of the allowed options: ${optionList(allowed)}`);
    }
  }
}

/** N5: every required variable of the version (no default) needs an `engine` var → else 422. */
export function checkRequiredVars(vars: readonly Pick<VarForRules, "key" | "category">[], summary: Pick<ModuleSummary, "variables">, version: string): void {
  const given = new Set(vars.filter((v) => v.category === "engine").map((v) => v.key));
  const missing = summary.variables.filter((v) => v.required && !given.has(v.name)).map((v) => v.name);
  if (missing.length === 0) return;
  const names = missing.map((n) => `"${n}"`).join(", ");
  throw unprocessable(
    `Missing required variable${missing.length > 1 ? "s" : ""} ${names}: module version ${version} declares no default, so a value must be given`,
  );
}

/** Keys must be unique per category: the first duplicate's index, or -1. */
export function duplicateVarIndex(vars: readonly Pick<VarInput, "key" | "category">[]): number {
  const seen = new Set<string>();
  for (let i = 0; i < vars.length; i++) {
    const id = `${vars[i]!.category}\u0000${vars[i]!.key}`;
    if (seen.has(id)) return i;
    seen.add(id);
  }
  return -1;
}

/**
 * E4 and E5: refuse two vars with one key and category (422 `Key has already been
 * taken`, pointing at the first duplicate of the `vars` relationship).
 */
export function requireUniqueVarKeys(vars: readonly Pick<VarInput, "key" | "category">[]): void {
  const duplicate = duplicateVarIndex(vars);
  if (duplicate >= 0) {
    throw new NocodeError("invalid_attribute", "Key has already been taken", `${relationshipAt("vars")}/data/${duplicate}/attributes/key`);
  }
}

/** A fresh `version-id` (changes on every write; N8 staleness uses it). */
export function newVarVersionId(): string {
  return `${toHex(randomBytes(20))}`;
}

/** Purpose string of the keyed hash of a sensitive value (the planner compares these, N7). */
export function sensitiveHashPurpose(workspaceId: string, key: string): string {
  return `nocode-sensitive:${workspaceId}:${key}`;
}

/**
 * The keyed hash stored with a sensitive value, which the planner compares instead of
 * the value (B2, N7): `keyedHash(KEYWAY_HASH_KEY, "nocode-sensitive:<workspace id>:<key>", value)`.
 */
export function sensitiveValueHash(env: Pick<Env, "KEYWAY_HASH_KEY">, workspaceId: string, key: string, value: string): Promise<string> {
  return keyedHash(env.KEYWAY_HASH_KEY, sensitiveHashPurpose(workspaceId, key), value);
}

/** AAD of a sensitive value's ciphertext: bound to its var (B2). */
export const varEncryptionContext = (varId: string) => `workspace-var:${varId}`;

/**
 * The stored form of a var's value: plaintext, or (sensitive) encrypted with its keyed
 * hash for the planner and no plaintext at all.
 */
export async function storedValue(
  env: Pick<Env, "KEYWAY_KEK" | "KEYWAY_HASH_KEY">,
  workspaceId: string,
  varId: string,
  key: string,
  value: string,
  sensitive: boolean,
): Promise<Pick<WorkspaceVarRow, "value" | "valueEncrypted" | "sensitiveHash">> {
  if (!sensitive) return { value, valueEncrypted: null, sensitiveHash: null };
  const [valueEncrypted, sensitiveHash] = await Promise.all([
    encryptSecret(env.KEYWAY_KEK, varEncryptionContext(varId), value),
    sensitiveValueHash(env, workspaceId, key, value),
  ]);
  return { value: null, valueEncrypted, sensitiveHash };
}

/** The row of a new var. */
export async function newVarRow(env: Pick<Env, "KEYWAY_KEK" | "KEYWAY_HASH_KEY">, workspaceId: string, input: VarInput, now: number): Promise<WorkspaceVarRow> {
  const id = newId("var");
  return {
    id,
    workspaceId,
    key: input.key,
    category: input.category,
    ...(await storedValue(env, workspaceId, id, input.key, input.value, input.sensitive)),
    description: input.description,
    hcl: input.hcl,
    sensitive: input.sensitive,
    versionId: newVarVersionId(),
    createdAt: now,
    updatedAt: now,
  };
}

/** A `vars` resource; a sensitive value is never shown (N5). */
export function varResource(v: WorkspaceVarRow, ws: Pick<WorkspaceRow, "id" | "organization" | "name">) {
  return {
    id: v.id,
    type: "vars",
    attributes: {
      key: v.key,
      value: v.sensitive ? null : v.value,
      sensitive: v.sensitive,
      category: v.category,
      hcl: v.hcl,
      "created-at": isoTime(v.createdAt),
      description: v.description,
      "version-id": v.versionId,
    },
    relationships: {
      configurable: { data: { id: ws.id, type: "workspaces" }, links: { related: workspacePath(ws) } },
    },
    links: { self: `/api/v2/workspaces/${ws.id}/vars/${v.id}` },
  };
}
