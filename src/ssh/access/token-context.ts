/**
 * The authenticated caller of a /v1 request, as the token store resolves it (tokens.ts)
 * and the per-isolate cache keeps it (token-cache.ts). A type of its own so the ACL and
 * the cache can name it without importing the token store.
 */
import type { Acl, PolicyRules } from "./acl-policy";
import type { EntityPoliciesRow } from "./token-repo";

/** The authenticated caller of a /v1 request. */
export interface TokenContext {
  isRoot: boolean;
  /** Keyed hash of the token (row id); "" for the root token. */
  id: string;
  accessor: string;
  displayName: string;
  /** Effective policies: the token's plus its entity's and its entity's groups' (S27). */
  policies: string[];
  /** Policies attached to the token itself. */
  tokenPolicies: string[];
  identityPolicies: string[];
  entityId: string | null;
  meta: Record<string, string>;
  numUses: number;
  usesLeft: number | null;
  ttl: number;
  explicitMaxTtl: number;
  createdAt: number;
  expireAt: number | null;
  parentAccessor: string | null;
  /** CIDR blocks the token may be used from (S25); null = anywhere. Checked on every request. */
  boundCidrs: string[] | null;
  /** The path that made the token (`auth/token/create`, `auth/<mount>/login`). */
  path: string;
  /** Renewal limit from creation, seconds (0 = the system maximum). */
  maxTtl: number;
  /** A periodic token's renewal, seconds (0 = not periodic). */
  period: number;
  /**
   * Rules of `policies`, read in the same D1 batch as the token by resolveToken so the
   * ACL costs no second round trip; absent on contexts built another way.
   */
  policyRules?: PolicyRules[];
  /** The ACL compiled from `policyRules`, kept with a cached context (token-cache.ts). */
  compiledAcl?: Acl;
}

/**
 * What a new token's context takes from its identity (S27): its entity's policies and
 * state, and the names of the policies its entity's groups lend. Plain data, so logins may
 * keep it for the token cache's second (token-cache.ts).
 */
export interface TokenIdentity {
  entityId: string | null;
  entity: EntityPoliciesRow | undefined;
  groupPolicies: { name: string }[];
}
