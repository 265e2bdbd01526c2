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
import * as v from "valibot";
import { randomBytes, toHex } from "../../lib/bytes";
import { keyedHash } from "../../lib/crypto/hmac";
import { encryptSecret } from "../../lib/crypto/kek";
import type { ModuleSummary } from "../../lib/terraform/types";
import { NocodeError, unprocessable } from "../errors";
import { newId } from "../ids";
import { valueMatchesOptions } from "../no-code-modules/options";
import type { VariableOptionSet } from "../no-code-modules/repo";
import { members, nullableFlag, relationshipMember, resourceDocument, toMany } from "../request/document";
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

const KEY_BLANK = "Key can't be blank";
const CATEGORY = 'Category must be "engine" (or "terraform") or "env"';
const VALUE_TOO_DEEP = `Value nests more than ${MAX_HCL_VALUE_NESTING} levels deep (the limit of HCL values)`;

/** A var's key: a non-blank string of at most MAX_VAR_KEY_LENGTH characters. */
const varKey = v.pipe(
  v.string(KEY_BLANK),
  v.check((key) => key.trim() !== "", KEY_BLANK),
  v.maxLength(MAX_VAR_KEY_LENGTH, `Key is too long (maximum is ${MAX_VAR_KEY_LENGTH} characters)`),
);

/** N5: `engine` or `env`, with `terraform` as a synonym of `engine` (stored as `engine`). */
const varCategory = v.pipe(
  v.picklist(["engine", "terraform", "env"], CATEGORY),
  v.transform((category): VarCategory => (category === "env" ? "env" : "engine")),
);

/**
 * The attributes of a var resource. A create requires `key` and `category`; a PATCH reads
 * the ones present. `value` null is `""`; `hcl`, `sensitive` null read as absent.
 */
function varAttributes<R extends boolean>(required: R) {
  return {
    key: (required ? varKey : v.optional(varKey)) as R extends true
      ? typeof varKey
      : v.OptionalSchema<typeof varKey, undefined>,
    value: v.optional(
      v.pipe(
        v.nullable(v.string("Value must be a string")),
        v.transform((value) => value ?? ""),
      ),
    ),
    description: v.optional(
      v.nullable(
        v.pipe(
          v.string("Description must be a string"),
          v.maxLength(
            MAX_VAR_DESCRIPTION_LENGTH,
            `Description is too long (maximum is ${MAX_VAR_DESCRIPTION_LENGTH} characters)`,
          ),
        ),
      ),
    ),
    category: (required ? varCategory : v.optional(varCategory)) as R extends true
      ? typeof varCategory
      : v.OptionalSchema<typeof varCategory, undefined>,
    hcl: nullableFlag("hcl"),
    sensitive: nullableFlag("sensitive"),
  };
}

/**
 * N21: `env` variables the agent program controls, or that would change how the engine or the
 * agent runs, may not be set on a workspace: `KEYWAY_*`, `TF_CLI_ARGS*`, `TF_LOG*`,
 * `TF_CLI_CONFIG_FILE`, `TF_DATA_DIR`, `TF_PLUGIN_CACHE_DIR`, `LD_*`, `DYLD_*`,
 * `NODE_OPTIONS`, `PATH`, `HOME` (→ 422).
 */
export function reservedEnvName(key: string): boolean {
  return (
    /^(KEYWAY_|TF_CLI_ARGS|TF_LOG|LD_|DYLD_)/.test(key) ||
    ["TF_CLI_CONFIG_FILE", "TF_DATA_DIR", "TF_PLUGIN_CACHE_DIR", "NODE_OPTIONS", "PATH", "HOME"].includes(key)
  );
}

/** N21: the error of a reserved `env` variable name, at `pointer`. */
export function reservedEnvNameError(key: string, pointer: string): NocodeError {
  return new NocodeError(
    "invalid_attribute",
    `Key ${key} is reserved: env variables named KEYWAY_*, TF_CLI_ARGS*, TF_LOG*, TF_CLI_CONFIG_FILE, TF_DATA_DIR, TF_PLUGIN_CACHE_DIR, LD_*, DYLD_*, NODE_OPTIONS, PATH or HOME cannot be set`,
    pointer,
  );
}

/** The message of an absent required var attribute. */
const missingVarAttribute = (attribute: string) => (attribute === "category" ? CATEGORY : KEY_BLANK);

/** B9: the error of an `hcl: true` value nested too deep, at `pointer`. */
export function hclValueTooDeepError(pointer: string): NocodeError {
  return new NocodeError("invalid_attribute", VALUE_TOO_DEEP, pointer);
}

/** `POST /workspaces/:id/vars`: a var resource (the B9 nesting bound is the handler's, `checkVarCreate`). */
export const varCreateDocument = resourceDocument({
  types: VAR_TYPES,
  attributes: varAttributes(true),
  missing: missingVarAttribute,
});

/** `PATCH /workspaces/:id/vars/:var_id`: the attributes to change. */
export const varUpdateDocument = resourceDocument({ types: VAR_TYPES, attributes: varAttributes(false) });

type VarCreateAttributes = v.InferOutput<typeof varCreateDocument>["data"]["attributes"];

/** A complete var for a create, the defaults filled in (seed E4). */
export function varInputOf(attributes: VarCreateAttributes): VarInput {
  return {
    key: attributes.key,
    value: attributes.value ?? "",
    description: attributes.description ?? null,
    category: attributes.category,
    hcl: attributes.hcl ?? false,
    sensitive: attributes.sensitive ?? false,
  };
}

/** B9: whether a var's value (with `hcl` as it will be) nests deeper than HCL values may. */
export function varValueTooDeep(hcl: boolean, value: string | null): boolean {
  return hcl && value !== null && hclValueTooDeep(value);
}

/**
 * A member of E4's (and E5's) `vars` relationship: a var resource whose attributes are a
 * create's, the B9 nesting bound included.
 */
const varMember = relationshipMember(
  "vars",
  {
    type: v.optional(v.picklist(VAR_TYPES, 'type must be "vars"')),
    attributes: v.nullish(
      v.pipe(
        members(varAttributes(true), "attributes must be an object", missingVarAttribute),
        v.forward(
          v.check((attributes) => !varValueTooDeep(attributes.hcl ?? false, attributes.value ?? null), VALUE_TOO_DEEP),
          ["value"],
        ),
        v.forward(
          v.check(
            (attributes) => !(attributes.category === "env" && reservedEnvName(attributes.key)),
            (issue) => reservedEnvNameError(String((issue.input as { key?: unknown }).key), "").detail ?? "",
          ),
          ["key"],
        ),
      ),
      {} as never,
    ),
  },
  () => 'type must be "vars"',
);

/** E4's and E5's `vars` relationship (absent: no vars). */
export const varsRelationship = toMany("vars", varMember);

/** The vars of a validated `vars` relationship. */
export function varInputsOf(relationship: v.InferOutput<typeof varsRelationship>): VarInput[] {
  return (relationship?.data ?? []).map((member) => varInputOf(member.attributes));
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
export function checkRequiredVars(
  vars: readonly Pick<VarForRules, "key" | "category">[],
  summary: Pick<ModuleSummary, "variables">,
  version: string,
): void {
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
    throw new NocodeError(
      "invalid_attribute",
      "Key has already been taken",
      `/data/relationships/vars/data/${duplicate}/attributes/key`,
    );
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
export function sensitiveValueHash(
  env: Pick<Env, "KEYWAY_HASH_KEY">,
  workspaceId: string,
  key: string,
  value: string,
): Promise<string> {
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
export async function newVarRow(
  env: Pick<Env, "KEYWAY_KEK" | "KEYWAY_HASH_KEY">,
  workspaceId: string,
  input: VarInput,
  now: number,
): Promise<WorkspaceVarRow> {
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
