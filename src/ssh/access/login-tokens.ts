/**
 * Tokens made by an auth method's login (decision S25): orphans (no parent), bound to the
 * role's CIDR blocks, carrying the role's TTLs, use count and policies, and recording the
 * mount that made them so disabling it revokes them (S24).
 */
import { sql } from "drizzle-orm";
import { identityEntities, identityEntityAliases } from "../../db/schema/ssh";
import { TOKEN_MAX_TTL_SECONDS } from "./durations";
import { compiledPolicyCache, loginIdentityCache, policySetKey, tokenContextCache } from "./token-cache";
import type { TokenContext, TokenIdentity } from "./token-context";
import { hashToken, insertToken, insertTokenIf, insertTokenIfKnown, newAccessor, newTokenValue } from "./tokens";

export interface LoginTokenInput {
  /** The role's `token_policies` (normalised here). */
  policies: string[];
  noDefaultPolicy: boolean;
  displayName: string;
  meta: Record<string, string>;
  entityId: string;
  /** Seconds; 0 = the system default (768h). */
  ttl: number;
  maxTtl: number;
  explicitMaxTtl: number;
  period: number;
  numUses: number;
  boundCidrs: string[];
  authAccessor: string;
  /** `auth/<mount>/login`. */
  path: string;
}

export interface LoginToken {
  token: string;
  context: TokenContext;
}

/**
 * Vault's lease rules for a login's token: a periodic token lives `period`; any other
 * lives `token_ttl` (or the system default), capped by `token_max_ttl` (or the system
 * maximum); `token_explicit_max_ttl` caps both.
 */
export function loginTokenTtl(input: Pick<LoginTokenInput, "ttl" | "maxTtl" | "explicitMaxTtl" | "period">): number {
  let ttl: number;
  if (input.period > 0) ttl = input.period;
  else
    ttl = Math.min(
      input.ttl > 0 ? input.ttl : TOKEN_MAX_TTL_SECONDS,
      input.maxTtl > 0 ? input.maxTtl : TOKEN_MAX_TTL_SECONDS,
    );
  if (input.explicitMaxTtl > 0) ttl = Math.min(ttl, input.explicitMaxTtl);
  return ttl;
}

function normalisedPolicies(input: LoginTokenInput): string[] {
  let policies = [...new Set(input.policies.map((p) => p.trim().toLowerCase()).filter(Boolean))];
  if (!input.noDefaultPolicy && !policies.includes("default")) policies.push("default");
  if (input.noDefaultPolicy) policies = policies.filter((p) => p !== "default");
  return policies.sort();
}

async function tokenRow(hashKeySecret: string, input: LoginTokenInput, now: number) {
  const ttl = loginTokenTtl(input);
  const token = newTokenValue();
  const row = {
    id: await hashToken(hashKeySecret, token),
    accessor: newAccessor(),
    policies: JSON.stringify(normalisedPolicies(input)),
    displayName: input.displayName,
    meta: JSON.stringify(input.meta),
    parentAccessor: null,
    numUses: input.numUses,
    usesLeft: input.numUses > 0 ? input.numUses : null,
    ttl,
    explicitMaxTtl: input.explicitMaxTtl,
    createdAt: now,
    expireAt: now + ttl * 1000,
    boundCidrs: input.boundCidrs.length > 0 ? JSON.stringify(input.boundCidrs) : null,
    authAccessor: input.authAccessor,
    path: input.path,
    maxTtl: input.maxTtl,
    period: input.period,
  };
  return { token, row };
}

/**
 * The hot path of a repeated login (S27): make the token only if the alias (accessor, name)
 * exists with exactly this metadata and its entity is enabled, in one D1 round trip. Null
 * when it does not (the caller then creates or updates the alias and calls createLoginToken).
 * The round trip is the conditional insert alone when this isolate has the alias's identity
 * from a login within the token cache's second (loginIdentityCache); else it also reads the
 * entity's and groups' policies, and keeps them for the next login.
 */
export async function createLoginTokenForAlias(
  db: Parameters<typeof insertToken>[0],
  hashKeySecret: string,
  input: Omit<LoginTokenInput, "entityId">,
  alias: { accessor: string; name: string; metadataText: string },
  now = Date.now(),
): Promise<LoginToken | null> {
  const { token, row } = await tokenRow(hashKeySecret, { ...input, entityId: "" }, now);
  const entityFrom = sql`FROM (SELECT a.canonical_id AS entity_id FROM ${identityEntityAliases} a
          JOIN ${identityEntities} e ON e.id = a.canonical_id
          WHERE a.mount_accessor = ${alias.accessor} AND a.name = ${alias.name}
            AND a.metadata = ${alias.metadataText} AND e.disabled = 0) WHERE true`;
  const cacheKey = `${alias.accessor}\u0000${alias.name}`;
  const known = loginIdentityCache.peek(cacheKey, now);
  if (known) {
    // Through the caller cache: the new token is stored with its ACL when this isolate has
    // the ACL of its policy set, unless a write dropped the caches during the insert.
    const context = await tokenContextCache.get(row.id, () => insertTokenIfKnown(db, row, entityFrom, known), {
      now,
      keep: withCompiledPolicies,
    });
    return context ? { token, context } : null;
  }
  let context = null as TokenContext | null;
  // The cache's load is this login's own insert: a write made meanwhile keeps its identity out.
  await loginIdentityCache.get(
    cacheKey,
    async () => {
      const inserted = await insertTokenIf(db, row, entityFrom);
      context = inserted?.context ?? null;
      return inserted?.identity ?? NOT_INSERTED;
    },
    { now, keep: (identity) => identity !== NOT_INSERTED },
  );
  return context ? { token, context } : null;
}

/**
 * Give a new token's context the cached ACL of its policy set, so it may enter the caller
 * cache (token-cache.ts); false when there is none (then the first use reads it from D1).
 */
function withCompiledPolicies(context: TokenContext | null): boolean {
  if (!context || context.isRoot) return false;
  const compiled = compiledPolicyCache.peek(policySetKey(context.policies));
  if (!compiled) return false;
  context.policyRules = compiled.rules;
  context.compiledAcl = compiled.acl;
  return true;
}

/** The identity of a login that inserted nothing: never stored. */
const NOT_INSERTED: TokenIdentity = Object.freeze({ entityId: null, entity: undefined, groupPolicies: [] });

/** Create the token of a successful login. */
export async function createLoginToken(
  db: Parameters<typeof insertToken>[0],
  hashKeySecret: string,
  input: LoginTokenInput,
  now = Date.now(),
): Promise<LoginToken> {
  const { token, row } = await tokenRow(hashKeySecret, input, now);
  const context = await insertToken(db, { ...row, entityId: input.entityId });
  return { token, context };
}
