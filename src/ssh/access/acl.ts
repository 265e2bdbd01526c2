/**
 * Loading a token's policies from D1 and deciding a request (S5a, S6).
 */
import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { inJsonList } from "../../db/json-list";
import {
  identityEntities,
  identityGroupMembers,
  identityGroups,
  vaultPolicies,
  vaultTokens,
} from "../../db/schema/ssh";
import { Acl, DEFAULT_POLICY_TEXT, type PolicyRules, parsePolicy } from "./acl-policy";
import type { TokenContext } from "./token-context";

const defaultRules = parsePolicy(DEFAULT_POLICY_TEXT);

/** Rules of the named policies; `default` falls back to the built-in text until rewritten. */
export async function loadPolicyRules(db: Db, names: string[]): Promise<PolicyRules[]> {
  if (names.length === 0) return [];
  const rows = await db
    .select({ name: vaultPolicies.name, rules: vaultPolicies.rules })
    .from(vaultPolicies)
    .where(inJsonList(vaultPolicies.name, names)); // B8: any number of names, one parameter
  return policyRulesFromRows(names, rows);
}

/**
 * Rules of every policy the token with this id holds, its (enabled) entity's included, so
 * that resolveToken reads them in the same batch as the token row.
 */
export function tokenPolicyRulesQuery(db: Db, tokenId: string) {
  return db
    .select({ name: vaultPolicies.name, rules: vaultPolicies.rules })
    .from(vaultPolicies)
    .where(
      sql`${vaultPolicies.name} IN (
        SELECT p.value FROM ${vaultTokens} t, json_each(t.policies) p WHERE t.id = ${tokenId}
        UNION
        SELECT p.value FROM ${vaultTokens} t JOIN ${identityEntities} e ON e.id = t.entity_id, json_each(e.policies) p
        WHERE t.id = ${tokenId} AND e.disabled = 0
        UNION
        ${groupPolicyNamesSql(tokenId)}
      )`,
    );
}

/**
 * S27: the most levels of internal groups above a group an entity is in that lend it
 * their policies (Vault's nesting); it also ends the walk on a cycle.
 */
export const MAX_GROUP_DEPTH = 8;

/**
 * SQL selecting (as `value`) the policies of every group the (enabled) entity of the token
 * with this id belongs to: directly (internal membership, or external membership set by a
 * login) and through internal groups that have one of those groups as a member, up to
 * MAX_GROUP_DEPTH levels. Read with the token on every resolution, so group changes reach
 * existing tokens (S27).
 */
function groupPolicyNamesSql(tokenId: string) {
  return sql`SELECT p.value FROM (
      WITH RECURSIVE grp(id, depth) AS (
        SELECT m.group_id, 0 FROM ${identityGroupMembers} m
          JOIN ${vaultTokens} t ON m.member_id = t.entity_id
          JOIN ${identityEntities} e ON e.id = t.entity_id
        WHERE t.id = ${tokenId} AND m.member_type = 'entity' AND e.disabled = 0
        UNION
        SELECT m.group_id, grp.depth + 1 FROM ${identityGroupMembers} m JOIN grp ON m.member_id = grp.id
        WHERE m.member_type = 'group' AND grp.depth < ${MAX_GROUP_DEPTH}
      )
      SELECT DISTINCT id FROM grp
    ) gi JOIN ${identityGroups} g ON g.id = gi.id, json_each(g.policies) p`;
}

/** Names of the policies the token with this id holds through its entity's groups (S27). */
export function tokenGroupPoliciesQuery(db: Db, tokenId: string) {
  return db
    .select({ name: sql<string>`value` })
    .from(sql`(${groupPolicyNamesSql(tokenId)})`)
    .orderBy(sql`value`);
}

/** Rules of the named policies from their stored rows; `default` falls back to the built-in text. */
export function policyRulesFromRows(names: string[], rows: { name: string; rules: string }[]): PolicyRules[] {
  const rules = rows.filter((r) => names.includes(r.name)).map((r) => JSON.parse(r.rules) as PolicyRules);
  if (names.includes("default") && !rows.some((r) => r.name === "default")) rules.push(defaultRules);
  return rules;
}

/** The ACL of a token; null for root, which bypasses ACLs. */
export async function aclFor(db: Db, token: TokenContext): Promise<Acl | null> {
  if (token.isRoot) return null;
  return token.compiledAcl ?? new Acl(token.policyRules ?? (await loadPolicyRules(db, token.policies)));
}
