/**
 * Loading a token's policies from D1 and deciding a request (S5a, S6).
 */
import { inArray } from "drizzle-orm";
import type { Db } from "../../db/client";
import { vaultPolicies } from "../../db/schema";
import { Acl, DEFAULT_POLICY_TEXT, type PolicyRules, parsePolicy } from "./policy";
import type { TokenContext } from "./tokens";

const defaultRules = parsePolicy(DEFAULT_POLICY_TEXT);

/** Rules of the named policies; `default` falls back to the built-in text until rewritten. */
export async function loadPolicyRules(db: Db, names: string[]): Promise<PolicyRules[]> {
  if (names.length === 0) return [];
  const rows = await db
    .select({ name: vaultPolicies.name, rules: vaultPolicies.rules })
    .from(vaultPolicies)
    .where(inArray(vaultPolicies.name, names));
  const rules = rows.map((r) => JSON.parse(r.rules) as PolicyRules);
  if (names.includes("default") && !rows.some((r) => r.name === "default")) rules.push(defaultRules);
  return rules;
}

/** The ACL of a token; null for root, which bypasses ACLs. */
export async function aclFor(db: Db, token: TokenContext): Promise<Acl | null> {
  if (token.isRoot) return null;
  return new Acl(await loadPolicyRules(db, token.policies));
}
