/**
 * The secrets service's token store (decisions S5, S5a): Vault-shaped service tokens kept
 * in D1 only as keyed hashes (B2), with policies, TTLs, use counts, parents and entities.
 */

import { and, eq, gt, isNotNull, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { vaultTokens } from "../../db/schema/ssh";
import { randomBytes, toBase64Url, trimTrailing } from "../../lib/bytes";
import { keyedHash, keyedHashesEqual, secretsEqual } from "../../lib/crypto/hmac";
import { bearerCredential } from "../../lib/http/bearer";
import { IsolateCache } from "../../lib/isolate-cache";
import { badRequest, permissionDenied } from "../errors";
import { aclFor, policyRulesFromRows, tokenGroupPoliciesQuery, tokenPolicyRulesQuery } from "./acl";
import { Acl } from "./acl-policy";
import { formatGoDuration, TOKEN_MAX_TTL_SECONDS } from "./durations";
import {
  compiledPolicyCache,
  invalidateTokenContext,
  invalidateTokenContexts,
  policySetKey,
  tokenContextCache,
} from "./token-cache";
import type { TokenContext, TokenIdentity } from "./token-context";
import {
  ancestorsQuery,
  type EntityPoliciesRow,
  entityExists,
  type TokenRow,
  tokenEntityQuery,
  tokenRowQuery,
} from "./token-repo";

const TOKEN_HASH_PURPOSE = "vault-token";

/** Hash a presented token for lookup. */
export function hashToken(hashKeySecret: string, token: string): Promise<string> {
  return keyedHash(hashKeySecret, TOKEN_HASH_PURPOSE, token);
}

/** The configured root token's keyed hash, once per isolate (per configuration). */
const rootTokenHashes = new IsolateCache<Promise<string>>({ name: "ssh-root-token-hash", maxEntries: 4 });

/** The keyed hash of the configured root token; null when none is configured (then nothing is root). */
function rootTokenHash(env: Env): Promise<string> | null {
  const root = env.ROOT_TOKEN;
  if (typeof root !== "string" || root === "") return null;
  const cacheKey = `${env.KEYWAY_HASH_KEY}\u0000${root}`;
  let hash = rootTokenHashes.peek(cacheKey);
  if (!hash) {
    hash = hashToken(env.KEYWAY_HASH_KEY, root);
    rootTokenHashes.set(cacheKey, hash);
    // A failed computation is not kept (the next request tries again).
    hash.catch(() => rootTokenHashes.delete(cacheKey));
  }
  return hash;
}

/** A fresh token in Vault's service-token shape (`hvs.` + 32 random bytes). */
export function newTokenValue(): string {
  return `hvs.${toBase64Url(randomBytes(32))}`;
}

/** A fresh token accessor. */
export function newAccessor(): string {
  return toBase64Url(randomBytes(18));
}

/** The root token's context (S5: display name `root`, policy `root`, no entity). */
function rootContext(): TokenContext {
  return {
    isRoot: true,
    id: "",
    accessor: "root",
    displayName: "root",
    policies: ["root"],
    tokenPolicies: ["root"],
    identityPolicies: [],
    entityId: null,
    meta: {},
    numUses: 0,
    usesLeft: null,
    ttl: 0,
    explicitMaxTtl: 0,
    createdAt: 0,
    expireAt: null,
    parentAccessor: null,
    boundCidrs: null,
    path: "auth/token/root",
    maxTtl: 0,
    period: 0,
  };
}

/** The token presented with a request: X-Secrets-Token, X-Vault-Token or Bearer (S5). */
export function presentedToken(headers: Headers): string | null {
  const direct = headers.get("x-secrets-token") ?? headers.get("x-vault-token");
  if (direct?.trim()) return direct.trim();
  return bearerCredential(headers.get("authorization")?.trim());
}

async function contextFromRow(db: Db, row: TokenRow): Promise<TokenContext> {
  const [entityRows, groupRows] = await db.batch([tokenEntityQuery(db, row.id), tokenGroupPoliciesQuery(db, row.id)]);
  return contextFromRows(row, entityRows[0], groupRows);
}

/**
 * S27: a token's policies are its own ∪ its (enabled) entity's ∪ its entity's groups'
 * (read at request time, so group changes reach existing tokens).
 */
function contextFromRows(
  row: TokenRow,
  entity: EntityPoliciesRow | undefined,
  groupPolicies: { name: string }[],
): TokenContext {
  const tokenPolicies = JSON.parse(row.policies) as string[];
  const entityPolicies = entity && !entity.disabled ? (JSON.parse(entity.policies) as string[]) : [];
  const identityPolicies = [...new Set([...entityPolicies, ...groupPolicies.map((g) => g.name)])]
    .filter((p) => !tokenPolicies.includes(p))
    .sort();
  const policies = [...new Set([...tokenPolicies, ...identityPolicies])].sort();
  return {
    isRoot: policies.includes("root"),
    id: row.id,
    accessor: row.accessor,
    displayName: row.displayName,
    policies,
    tokenPolicies,
    identityPolicies,
    entityId: row.entityId,
    meta: JSON.parse(row.meta) as Record<string, string>,
    numUses: row.numUses,
    usesLeft: row.usesLeft,
    ttl: row.ttl,
    explicitMaxTtl: row.explicitMaxTtl,
    createdAt: row.createdAt,
    expireAt: row.expireAt,
    parentAccessor: row.parentAccessor,
    boundCidrs: row.boundCidrs === null ? null : (JSON.parse(row.boundCidrs) as string[]),
    path: row.path ?? "auth/token/create",
    maxTtl: row.maxTtl,
    period: row.period,
  };
}

/**
 * Resolve a presented token from D1 without consuming a use. Expired and spent tokens
 * resolve to null (and expired ones are deleted). For tokens named in a request's body
 * (lookup, renew, revoke), where the answer must be D1's; the caller of a request is
 * resolved by resolveCallerToken.
 */
export async function resolveToken(env: Env, db: Db, token: string, now = Date.now()): Promise<TokenContext | null> {
  if (await secretsEqual(token, env.ROOT_TOKEN)) return rootContext();
  return resolveTokenId(db, await hashToken(env.KEYWAY_HASH_KEY, token), now);
}

/**
 * Resolve the token presented by a request's caller, with its compiled ACL, through the
 * per-isolate cache (token-cache.ts: revocations, policy and entity writes reach every
 * isolate within 1 s, this one at once). Expiry is checked here on every request against
 * the cached expire time; an entry past it is dropped and D1 decides (it deletes a token
 * that really expired, and sees a renewal made by another isolate). Use counts are not
 * read from the cache: consumeTokenUse spends them in D1. Only found tokens are stored
 * (N2b). The context returned is the caller's own copy.
 */
export async function resolveCallerToken(
  env: Env,
  db: Db,
  token: string,
  now = Date.now(),
): Promise<TokenContext | null> {
  // One HMAC of the presented token answers both questions: is it root (its keyed hash
  // against the root token's, kept per isolate, compared in constant time over equal
  // lengths, so the root token's length stays hidden as with secretsEqual), and else
  // which row it is (the SHA-256 of secretsEqual was a second digest per request).
  const [id, rootHash] = await Promise.all([hashToken(env.KEYWAY_HASH_KEY, token), rootTokenHash(env)]);
  if (rootHash !== null && keyedHashesEqual(id, rootHash)) return rootContext();
  let ruleChars = 0;
  const load = async () => {
    const loaded = await loadTokenId(db, id, now, true);
    ruleChars = loaded.ruleChars;
    return loaded.context;
  };
  // `keep` runs right after this caller's own load, and only when no invalidation happened
  // meanwhile, so `ruleChars` is that load's and its ACL is as fresh as the entry.
  const keep = (c: TokenContext | null) => {
    if (c === null || ruleChars > MAX_CACHED_RULE_CHARS) return false;
    if (c.policyRules && c.compiledAcl) {
      compiledPolicyCache.set(policySetKey(c.policies), { rules: c.policyRules, acl: c.compiledAcl }, now);
    }
    return true;
  };
  let context = await tokenContextCache.get(id, load, { now, keep });
  if (context && context.expireAt !== null && context.expireAt <= now) {
    invalidateTokenContext(id);
    context = await resolveTokenId(db, id, now, true);
  }
  return context ? { ...context } : null;
}

/**
 * Tokens whose policies' stored rules are longer than this are not cached (they resolve
 * from D1 on every request, as it once was): a policy row may hold up to 2 MB, and
 * the cache's memory must stay bounded by its entry count.
 */
const MAX_CACHED_RULE_CHARS = 16 * 1024;

async function resolveTokenId(db: Db, id: string, now: number, compileAcl = false): Promise<TokenContext | null> {
  return (await loadTokenId(db, id, now, compileAcl)).context;
}

async function loadTokenId(
  db: Db,
  id: string,
  now: number,
  compileAcl: boolean,
): Promise<{ context: TokenContext | null; ruleChars: number }> {
  // Token, entity and policy rules are all keyed by the token's id: one D1 round trip.
  const [rows, entityRows, ruleRows, groupRows] = await db.batch([
    tokenRowQuery(db, id),
    tokenEntityQuery(db, id),
    tokenPolicyRulesQuery(db, id),
    tokenGroupPoliciesQuery(db, id),
  ]);
  const row = rows[0];
  if (!row) return { context: null, ruleChars: 0 };
  if (row.expireAt !== null && row.expireAt <= now) {
    await revokeTokenTree(db, row.accessor);
    return { context: null, ruleChars: 0 };
  }
  if (row.usesLeft !== null && row.usesLeft <= 0) return { context: null, ruleChars: 0 };
  const context = contextFromRows(row, entityRows[0], groupRows);
  context.policyRules = policyRulesFromRows(context.policies, ruleRows);
  if (compileAcl && !context.isRoot) context.compiledAcl = new Acl(context.policyRules);
  let ruleChars = 0;
  for (const r of ruleRows) ruleChars += r.rules.length;
  return { context, ruleChars };
}

/**
 * Spend one use of a limited-use token, atomically. Returns false when it was already
 * spent (a concurrent request took the last use). A token whose last use this was is
 * revoked, as Vault does.
 */
export async function consumeTokenUse(db: Db, token: TokenContext): Promise<boolean> {
  if (token.isRoot && token.id === "") return true;
  if (token.usesLeft === null) return true;
  const rows = await db
    .update(vaultTokens)
    .set({ usesLeft: sql`${vaultTokens.usesLeft} - 1` })
    .where(and(eq(vaultTokens.id, token.id), isNotNull(vaultTokens.usesLeft), gt(vaultTokens.usesLeft, 0)))
    .returning({ usesLeft: vaultTokens.usesLeft });
  const left = rows[0]?.usesLeft;
  if (left === undefined || left === null) return false;
  token.usesLeft = left;
  if (left === 0) await revokeTokenTree(db, token.accessor);
  return true;
}

/**
 * Revoke a token and, as Vault does, every token created under it (S5b). One statement
 * with one bound parameter however large the subtree (B8: D1 allows 100 bound
 * parameters per statement, so a list of accessors cannot be bound one by one); the
 * recursive query walks the parent index, and UNION stops on any cycle.
 */
export async function revokeTokenTree(db: Db, accessor: string): Promise<void> {
  await db.delete(vaultTokens).where(
    sql`${vaultTokens.accessor} IN (
      WITH RECURSIVE subtree(accessor) AS (
        SELECT ${accessor}
        UNION
        SELECT t.accessor FROM vault_tokens t JOIN subtree s ON t.parent_accessor = s.accessor
      )
      SELECT accessor FROM subtree
    )`,
  );
  // After the write, so no load that read the rows before it stays cached (isolate-cache.ts).
  // Every entry goes: the subtree's children may be cached too.
  invalidateTokenContexts();
}

/**
 * The latest time a child of `parentAccessor` may live until (S5b), or `null` when no
 * ancestor expires; `"revoked"` when the parent no longer exists or has expired, so the
 * child must go too.
 */
async function ancestorsExpireAt(
  db: Db,
  parentAccessor: string | null,
  now: number,
): Promise<number | null | "revoked"> {
  if (parentAccessor === null) return null;
  const rows = await ancestorsQuery(db, parentAccessor);
  if (!rows.some((r) => r.accessor === parentAccessor)) return "revoked";
  let cap: number | null = null;
  for (const row of rows) {
    if (row.expireAt !== null && (cap === null || row.expireAt < cap)) cap = row.expireAt;
  }
  return cap !== null && cap <= now ? "revoked" : cap;
}

/** Vault's display-name form: `token-<name>` with characters outside [A-Za-z0-9-] as `-`. */
export function tokenDisplayName(requested: string): string {
  const cleaned = trimTrailing(requested.replace(/[^A-Za-z0-9-]/g, "-"), "-");
  return cleaned === "" ? "token" : `token-${cleaned}`;
}

export interface CreateTokenInput {
  policies: string[];
  displayName: string;
  ttl: number;
  explicitMaxTtl: number;
  numUses: number;
  meta: Record<string, string>;
  entityId: string;
  noDefaultPolicy: boolean;
  /** TTL was given explicitly. */
  ttlProvided: boolean;
}

export interface CreatedToken {
  token: string;
  context: TokenContext;
  warnings: string[];
}

/**
 * Create a child of `parent` (S5a, S5b): only root or a caller with `sudo` on
 * `auth/token/create` may name an `entity_id`, otherwise the child inherits the parent's
 * entity; a non-root parent may grant only its own token policies (never the identity
 * policies of its entity); `default` is added unless opted out; TTLs are capped at 768h
 * with a warning and at the parent's remaining lifetime.
 */
export async function createToken(
  db: Db,
  hashKeySecret: string,
  parent: TokenContext,
  input: CreateTokenInput,
  now = Date.now(),
): Promise<CreatedToken> {
  const warnings: string[] = [];
  // S5b: naming an entity is impersonating it; only root or `sudo` may.
  if (input.entityId && !parent.isRoot) {
    const acl = await aclFor(db, parent);
    if (acl && !acl.allows("auth/token/create", "sudo")) throw permissionDenied();
  }
  let policies = [...new Set(input.policies.map((p) => p.trim().toLowerCase()).filter(Boolean))];
  if (policies.length === 0) policies = parent.isRoot ? ["root"] : parent.tokenPolicies.filter((p) => p !== "default");
  if (!parent.isRoot) {
    // S5b: the parent's own token policies only; its entity's policies are not its to give.
    const held = new Set(parent.tokenPolicies);
    const missing = policies.filter((p) => p !== "default" && !held.has(p));
    if (missing.length > 0) throw badRequest("child policies must be subset of parent");
  }
  if (policies.includes("root") && !parent.isRoot)
    throw badRequest("root tokens may not be created without parent token being root");
  if (!input.noDefaultPolicy && !policies.includes("root") && !policies.includes("default")) policies.push("default");
  if (input.noDefaultPolicy) policies = policies.filter((p) => p !== "default");
  policies.sort();

  if (input.numUses < 0) throw badRequest("number of uses cannot be negative");
  if (input.entityId) {
    if (!(await entityExists(db, input.entityId))) throw badRequest(`entity "${input.entityId}" does not exist`);
  }
  // S5b: a child inherits its parent's entity (root's tokens have none).
  const entityId = input.entityId || parent.entityId || null;

  let maxTtl = TOKEN_MAX_TTL_SECONDS;
  if (input.explicitMaxTtl > 0) maxTtl = Math.min(maxTtl, input.explicitMaxTtl);
  let ttl = input.ttl > 0 ? input.ttl : TOKEN_MAX_TTL_SECONDS;
  if (ttl > maxTtl) {
    if (input.ttlProvided) {
      warnings.push(
        `TTL of "${formatGoDuration(ttl)}" exceeded the effective max_ttl of "${formatGoDuration(maxTtl)}"; TTL value is capped accordingly`,
      );
    }
    ttl = maxTtl;
  }
  // S5b: a child never outlives its parent (whose own life is capped by its ancestors').
  let expireAt = now + ttl * 1000;
  if (parent.expireAt !== null && parent.expireAt < expireAt) {
    expireAt = parent.expireAt;
    ttl = Math.max(0, Math.floor((expireAt - now) / 1000));
  }

  const token = newTokenValue();
  const row: TokenRow = {
    id: await hashToken(hashKeySecret, token),
    accessor: newAccessor(),
    policies: JSON.stringify(policies),
    displayName: tokenDisplayName(input.displayName),
    meta: JSON.stringify(input.meta),
    entityId,
    parentAccessor: parent.isRoot && parent.id === "" ? null : parent.accessor,
    numUses: input.numUses,
    usesLeft: input.numUses > 0 ? input.numUses : null,
    ttl,
    explicitMaxTtl: input.explicitMaxTtl,
    createdAt: now,
    expireAt,
    boundCidrs: null,
    authAccessor: null,
    path: null,
    maxTtl: 0,
    period: 0,
  };
  await db.insert(vaultTokens).values(row);
  return { token, context: await contextFromRow(db, row), warnings };
}

/**
 * Insert a token row and return its context, its entity's and groups' policies included,
 * in one D1 round trip (logins, S25).
 */
export async function insertToken(db: Db, row: TokenRow): Promise<TokenContext> {
  const [, entityRows, groupRows] = await db.batch([
    db.insert(vaultTokens).values(row),
    tokenEntityQuery(db, row.id),
    tokenGroupPoliciesQuery(db, row.id),
  ]);
  return contextFromRows(row, entityRows[0], groupRows);
}

/** INSERT … SELECT of a token row whose entity `entityFrom` yields (see insertTokenIf). */
function insertTokenSelect(db: Db, row: Omit<TokenRow, "entityId">, entityFrom: SQL) {
  // Every column of vault_tokens, in the table's order (drizzle's INSERT … SELECT lists them so).
  const select = sql`SELECT ${row.id}, ${row.accessor}, ${row.policies}, ${row.displayName}, ${row.meta}, entity_id,
      ${row.parentAccessor}, ${row.numUses}, ${row.usesLeft}, ${row.ttl}, ${row.explicitMaxTtl}, ${row.createdAt},
      ${row.expireAt}, ${row.boundCidrs}, ${row.authAccessor}, ${row.path}, ${row.maxTtl}, ${row.period} ${entityFrom}`;
  return db.insert(vaultTokens).select(select).onConflictDoNothing().returning({ entityId: vaultTokens.entityId });
}

/**
 * Insert a token row only when `entityFrom` — SQL `FROM … WHERE …` yielding one row with
 * column `entity_id` — yields one, with that entity; return its context and identity, or
 * null when nothing was inserted. One D1 round trip: a login whose alias is already as it
 * should be makes its token with no other D1 call (S25, S27).
 */
export async function insertTokenIf(
  db: Db,
  row: Omit<TokenRow, "entityId">,
  entityFrom: SQL,
): Promise<{ context: TokenContext; identity: TokenIdentity } | null> {
  const [inserted, entityRows, groupRows] = await db.batch([
    insertTokenSelect(db, row, entityFrom),
    tokenEntityQuery(db, row.id),
    tokenGroupPoliciesQuery(db, row.id),
  ]);
  const first = inserted[0];
  if (!first) return null;
  const identity = { entityId: first.entityId, entity: entityRows[0], groupPolicies: groupRows };
  return { context: contextFromRows({ ...row, entityId: first.entityId }, identity.entity, groupRows), identity };
}

/**
 * insertTokenIf when the caller already knows the identity the token will have (read
 * within the token cache's second): the insert is the round trip's only statement. When
 * the row is written for another entity than `identity` names (the alias was moved
 * meanwhile), that entity's identity is read in a second round trip.
 */
export async function insertTokenIfKnown(
  db: Db,
  row: Omit<TokenRow, "entityId">,
  entityFrom: SQL,
  identity: TokenIdentity,
): Promise<TokenContext | null> {
  const first = (await insertTokenSelect(db, row, entityFrom))[0];
  if (!first) return null;
  const withEntity = { ...row, entityId: first.entityId };
  if (first.entityId === identity.entityId) return contextFromRows(withEntity, identity.entity, identity.groupPolicies);
  const [entityRows, groupRows] = await db.batch([tokenEntityQuery(db, row.id), tokenGroupPoliciesQuery(db, row.id)]);
  return contextFromRows(withEntity, entityRows[0], groupRows);
}

/**
 * Extend a token's life (renew, renew-self): now + increment (or its TTL), capped by its
 * maxima and (S5b) by the remaining lifetime of every ancestor. A token whose parent is
 * gone or expired is revoked instead (with its subtree), and the answer is null.
 */
export async function renewToken(
  db: Db,
  token: TokenContext,
  increment: number,
  now = Date.now(),
): Promise<TokenContext | null> {
  if (token.isRoot && token.id === "") return token;
  // A periodic token renews by its period, past the system maximum (Vault's periodic tokens).
  const requested = token.period > 0 ? token.period : increment > 0 ? increment : token.ttl;
  let maxExpire =
    token.period > 0 ? Number.MAX_SAFE_INTEGER : token.createdAt + (token.maxTtl || TOKEN_MAX_TTL_SECONDS) * 1000;
  if (token.explicitMaxTtl > 0) maxExpire = Math.min(maxExpire, token.createdAt + token.explicitMaxTtl * 1000);
  const ancestorsCap = await ancestorsExpireAt(db, token.parentAccessor, now);
  if (ancestorsCap === "revoked") {
    await revokeTokenTree(db, token.accessor);
    return null;
  }
  if (ancestorsCap !== null) maxExpire = Math.min(maxExpire, ancestorsCap);
  const expireAt = Math.min(now + requested * 1000, maxExpire);
  await db.update(vaultTokens).set({ expireAt }).where(eq(vaultTokens.id, token.id));
  invalidateTokenContext(token.id);
  return { ...token, expireAt };
}
