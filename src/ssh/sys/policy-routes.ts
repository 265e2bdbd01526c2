/**
 * `sys/policies/acl/*` (decision S5a): Vault's JSON policy syntax, `root` immutable,
 * `default` present from the start.
 */
import { DEFAULT_POLICY_TEXT, PolicyParseError, parsePolicy } from "../access/acl-policy";
import { invalidateTokenContexts } from "../access/token-cache";
import { badRequest, notFound } from "../errors";
import { parseFields, unknownFieldWarnings } from "../fields";
import { envelope, object, str, strings, written } from "../openapi/schemas";
import { vaultJson, vaultNoContent } from "../respond";
import type { ParamNormaliser, VaultRequest, VaultRoute } from "../router";
import { deletePolicy, findPolicy, policyNames, savePolicy } from "./policy-repo";

const POLICY_NAME = "[^/]+";

/**
 * Policy names are case-insensitive in Vault: stored trimmed and lower-case. S2b: a path
 * spelling the name any other way is refused by the dispatcher (400), never rewritten.
 */
const policyNameNormaliser: ParamNormaliser = {
  label: "policy name",
  rule: "lower-case, without surrounding spaces",
  normalise: (value) => value.trim().toLowerCase(),
};

function policyName(req: VaultRequest): string {
  return policyNameNormaliser.normalise(req.params.name ?? "");
}

async function readPolicy(req: VaultRequest) {
  const name = policyName(req);
  if (name === "root") return vaultJson(req, { data: { name: "root", policy: "" } });
  const row = await findPolicy(req.db, name);
  if (!row) {
    if (name === "default") return vaultJson(req, { data: { name, policy: DEFAULT_POLICY_TEXT } });
    throw notFound();
  }
  return vaultJson(req, { data: { name: row.name, policy: row.policy } });
}

const POLICY_FIELDS = { policy: { type: "string" }, name: { type: "string" } } as const;

async function writePolicy(req: VaultRequest) {
  const name = policyName(req);
  const f = parseFields(req.body, POLICY_FIELDS);
  if (name === "root") throw badRequest('cannot update "root" policy');
  if (!/^[a-z0-9][a-z0-9_.@-]*$/.test(name)) throw badRequest(`invalid policy name "${name}"`);
  const text = String(f.values.policy);
  if (text.trim() === "") throw badRequest("'policy' parameter not supplied or empty");
  let rules: ReturnType<typeof parsePolicy>;
  try {
    rules = parsePolicy(text);
  } catch (err) {
    if (err instanceof PolicyParseError) throw badRequest(err.message);
    throw err;
  }
  const row = { name, policy: text, rules: JSON.stringify(rules), updatedAt: Date.now() };
  // B8: the text and its parsed rules share one row, which D1 caps at 2 MB.
  if (utf8LengthBound(row.policy) + utf8LengthBound(row.rules) > MAX_POLICY_ROW_BYTES) {
    throw badRequest(`policy is too large: the text and its parsed rules exceed ${MAX_POLICY_ROW_BYTES} bytes`);
  }
  await savePolicy(req.db, row);
  invalidateTokenContexts(); // cached callers hold compiled policies (token-cache.ts)
  return vaultNoContent(req, unknownFieldWarnings(f.unknown.filter((u) => u !== "name")));
}

/** B8: the bytes a stored policy's text and rules may take together (D1 rows are at most 2 MB). */
const MAX_POLICY_ROW_BYTES = 1_900_000;

const utf8 = new TextEncoder();
/** An upper bound of a text's UTF-8 length: 3 bytes per UTF-16 unit, or the exact length of a long text. */
function utf8LengthBound(text: string): number {
  return text.length * 3 <= MAX_POLICY_ROW_BYTES / 2 ? text.length * 3 : utf8.encode(text).byteLength;
}

async function removePolicy(req: VaultRequest) {
  const name = policyName(req);
  if (name === "root" || name === "default") throw badRequest(`cannot delete "${name}" policy`);
  await deletePolicy(req.db, name);
  invalidateTokenContexts(); // cached callers hold compiled policies (token-cache.ts)
  return vaultNoContent(req);
}

async function listPolicies(req: VaultRequest) {
  const names = new Set(await policyNames(req.db));
  names.add("default");
  names.add("root");
  const keys = [...names].sort();
  return vaultJson(req, { data: { keys, policies: keys } });
}

export const policyRoutes: VaultRoute[] = [
  {
    pattern: "sys/policies/acl",
    operations: { list: listPolicies },
    docs: {
      operations: {
        list: {
          summary: "List ACL policies",
          responses: envelope("policy names", object({ keys: strings(), policies: strings() })),
        },
      },
    },
  },
  {
    pattern: "sys/policies/acl/:name",
    params: { name: POLICY_NAME },
    normalisedParams: { name: policyNameNormaliser },
    operations: { read: readPolicy, update: writePolicy, delete: removePolicy },
    docs: {
      params: { name: "the policy name (trimmed, lower-case)" },
      operations: {
        read: {
          summary: "Read an ACL policy",
          responses: envelope("the policy text", object({ name: str(), policy: str() })),
        },
        update: { summary: "Create or replace an ACL policy (JSON syntax)", body: POLICY_FIELDS, responses: written() },
        delete: { summary: "Delete an ACL policy", responses: written("deleted") },
      },
    },
  },
];
