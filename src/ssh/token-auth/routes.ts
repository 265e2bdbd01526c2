/**
 * `auth/token/*` (decisions S5a, S5b), Vault's token auth method: create, lookup,
 * lookup-self, renew, renew-self, revoke, revoke-self. The token store itself, the caller
 * cache and the ACL every route relies on are in ../access/.
 */
import { remainingTtl } from "../access/durations";
import { invalidateTokenContext } from "../access/token-cache";
import type { TokenContext } from "../access/token-context";
import { deleteTokenRow } from "../access/token-repo";
import { createToken, hashToken, presentedToken, renewToken, resolveToken, revokeTokenTree } from "../access/tokens";
import { badRequest, permissionDenied } from "../errors";
import { parseFields, unknownFieldWarnings } from "../fields";
import { tokenForRenewal } from "../jwt-auth/renewal";
import {
  authEnvelope,
  bool,
  dateTime,
  envelope,
  int,
  nullable,
  object,
  str,
  stringMap,
  strings,
  written,
} from "../openapi/schemas";
import { vaultJson, vaultNoContent } from "../respond";
import type { VaultRequest, VaultRoute } from "../router";

function requireToken(req: VaultRequest): TokenContext {
  if (!req.token) throw permissionDenied();
  return req.token;
}

/** Vault's `auth` block of a login or token creation. */
function authBlock(token: string, ctx: TokenContext, leaseDuration: number) {
  return {
    client_token: token,
    accessor: ctx.accessor,
    policies: ctx.policies,
    token_policies: ctx.tokenPolicies,
    identity_policies: ctx.identityPolicies.length > 0 ? ctx.identityPolicies : undefined,
    metadata: Object.keys(ctx.meta).length > 0 ? ctx.meta : null,
    lease_duration: leaseDuration,
    renewable: ctx.expireAt !== null,
    entity_id: ctx.entityId ?? "",
    token_type: "service",
    orphan: ctx.parentAccessor === null,
    mfa_requirement: null,
    num_uses: ctx.numUses,
  };
}

/** Vault's token lookup data. `id` is only shown when the caller presented the token. */
function lookupData(ctx: TokenContext, presented: string | null) {
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    accessor: ctx.isRoot && ctx.id === "" ? "" : ctx.accessor,
    creation_time: Math.floor(ctx.createdAt / 1000),
    creation_ttl: ctx.ttl,
    display_name: ctx.displayName,
    entity_id: ctx.entityId ?? "",
    expire_time: ctx.expireAt === null ? null : iso(ctx.expireAt),
    explicit_max_ttl: ctx.explicitMaxTtl,
    id: presented ?? "",
    identity_policies: ctx.identityPolicies.length > 0 ? ctx.identityPolicies : undefined,
    issue_time: iso(ctx.createdAt),
    meta: Object.keys(ctx.meta).length > 0 ? ctx.meta : null,
    num_uses: ctx.usesLeft ?? 0,
    orphan: ctx.parentAccessor === null,
    path: ctx.path,
    policies: ctx.tokenPolicies,
    renewable: ctx.expireAt !== null,
    ttl: remainingTtl(ctx),
    type: "service",
  };
}

/** B14: the schema of `lookupData`. */
const lookupSchema = object(
  {
    accessor: str(),
    creation_time: int("seconds since the epoch"),
    creation_ttl: int(),
    display_name: str(),
    entity_id: str(),
    expire_time: nullable(dateTime()),
    explicit_max_ttl: int(),
    id: str("the token, only when the caller presented it"),
    identity_policies: strings("present only when the token's entity grants policies"),
    issue_time: dateTime(),
    meta: nullable(stringMap()),
    num_uses: int(),
    orphan: bool(),
    path: str(),
    policies: strings(),
    renewable: bool(),
    ttl: int("remaining seconds"),
    type: { const: "service" },
  },
  ["identity_policies"],
);

const TOKEN_FIELDS = { token: { type: "string" } } as const;
const RENEW_SELF_FIELDS = { increment: { type: "duration" } } as const;
const RENEW_FIELDS = { token: { type: "string" }, increment: { type: "duration" } } as const;

const createSchema = {
  policies: { type: "commaList" },
  display_name: { type: "string" },
  ttl: { type: "duration" },
  explicit_max_ttl: { type: "duration" },
  num_uses: { type: "int" },
  meta: { type: "map" },
  entity_id: { type: "string" },
  no_default_policy: { type: "bool" },
  renewable: { type: "bool", default: true },
  period: { type: "duration" },
  no_parent: { type: "bool" },
} as const;

/** The token a body names in `token` (lookup, renew, revoke); Vault's text when it is empty. */
function tokenNamedIn(values: { token?: unknown }, action: string): string {
  const token = String(values.token).trim();
  if (!token) throw badRequest(`missing token to ${action}`);
  return token;
}

async function presentedTokenContext(req: VaultRequest, token: string): Promise<TokenContext> {
  const ctx = await resolveToken(req.env, req.db, token);
  if (!ctx) throw badRequest("bad token");
  return ctx;
}

export const tokenRoutes: VaultRoute[] = [
  {
    pattern: "auth/token/create",
    docs: {
      operations: {
        update: {
          summary: "Create a child token (or an orphan)",
          body: createSchema,
          responses: authEnvelope("the new token in `auth`"),
        },
      },
    },
    operations: {
      update: async (req) => {
        const parent = requireToken(req);
        const f = parseFields(req.body, createSchema);
        const v = f.values as {
          policies: string[];
          display_name: string;
          ttl: number;
          explicit_max_ttl: number;
          num_uses: number;
          meta: Record<string, string>;
          entity_id: string;
          no_default_policy: boolean;
        };
        const created = await createToken(req.db, req.env.KEYWAY_HASH_KEY, parent, {
          policies: v.policies,
          displayName: v.display_name,
          ttl: v.ttl,
          explicitMaxTtl: v.explicit_max_ttl,
          numUses: v.num_uses,
          meta: v.meta,
          entityId: v.entity_id.trim(),
          noDefaultPolicy: v.no_default_policy,
          ttlProvided: f.provided.has("ttl"),
        });
        return vaultJson(req, {
          auth: authBlock(created.token, created.context, created.context.ttl),
          warnings: [...created.warnings, ...unknownFieldWarnings(f.unknown)],
        });
      },
    },
  },
  {
    pattern: "auth/token/lookup-self",
    docs: {
      operations: { read: { summary: "Look up the calling token", responses: envelope("the token", lookupSchema) } },
    },
    operations: {
      read: async (req) => vaultJson(req, { data: lookupData(requireToken(req), presentedTokenOf(req)) }),
    },
  },
  {
    pattern: "auth/token/lookup",
    docs: {
      operations: {
        update: { summary: "Look up a token", body: TOKEN_FIELDS, responses: envelope("the token", lookupSchema) },
      },
    },
    operations: {
      update: async (req) => {
        const f = parseFields(req.body, TOKEN_FIELDS);
        const token = tokenNamedIn(f.values, "look up");
        return vaultJson(req, { data: lookupData(await presentedTokenContext(req, token), token) });
      },
    },
  },
  {
    pattern: "auth/token/renew-self",
    docs: {
      operations: {
        update: {
          summary: "Renew the calling token",
          body: RENEW_SELF_FIELDS,
          responses: authEnvelope("the renewed token in `auth`"),
        },
      },
    },
    operations: {
      update: async (req) => {
        const token = requireToken(req);
        const f = parseFields(req.body, RENEW_SELF_FIELDS);
        const renewed = await renewToken(req.db, await tokenForRenewal(req.db, token), f.values.increment as number);
        if (!renewed) throw permissionDenied();
        return vaultJson(req, { auth: authBlock(presentedTokenOf(req) ?? "", renewed, remainingTtl(renewed)) });
      },
    },
  },
  {
    // Vault's `vault token renew <token>`: renews the token named in the body, capped like renew-self (S5b).
    pattern: "auth/token/renew",
    docs: {
      operations: {
        update: {
          summary: "Renew a token",
          body: RENEW_FIELDS,
          responses: authEnvelope("the renewed token in `auth`"),
        },
      },
    },
    operations: {
      update: async (req) => {
        const f = parseFields(req.body, RENEW_FIELDS);
        const token = tokenNamedIn(f.values, "renew");
        const ctx = await resolveToken(req.env, req.db, token);
        if (!ctx) throw badRequest("token not found");
        const renewed = await renewToken(req.db, await tokenForRenewal(req.db, ctx), f.values.increment as number);
        if (!renewed) throw badRequest("token not found");
        return vaultJson(req, {
          auth: authBlock(token, renewed, remainingTtl(renewed)),
          warnings: unknownFieldWarnings(f.unknown),
        });
      },
    },
  },
  {
    pattern: "auth/token/revoke-self",
    docs: {
      operations: { update: { summary: "Revoke the calling token and its children", responses: written("revoked") } },
    },
    operations: {
      update: async (req) => {
        const token = requireToken(req);
        if (!(token.isRoot && token.id === "")) await revokeTokenTree(req.db, token.accessor);
        return vaultNoContent(req);
      },
    },
  },
  {
    pattern: "auth/token/revoke",
    docs: {
      operations: {
        update: {
          summary: "Revoke a token and its children",
          body: TOKEN_FIELDS,
          responses: written("revoked (also when unknown)"),
        },
      },
    },
    operations: {
      update: async (req) => {
        const f = parseFields(req.body, TOKEN_FIELDS);
        const token = tokenNamedIn(f.values, "revoke");
        const ctx = await resolveToken(req.env, req.db, token);
        if (ctx?.isRoot && ctx.id === "") throw badRequest("the configured root token cannot be revoked");
        // Vault answers 204 for an unknown token too: revocation is idempotent.
        if (ctx) await revokeTokenTree(req.db, ctx.accessor);
        else await revokeByHash(req, token);
        return vaultNoContent(req);
      },
    },
  },
];

async function revokeByHash(req: VaultRequest, token: string): Promise<void> {
  // A spent or expired token no longer resolves; remove its row if one is left.
  const id = await hashToken(req.env.KEYWAY_HASH_KEY, token);
  await deleteTokenRow(req.db, id);
  invalidateTokenContext(id);
}

function presentedTokenOf(req: VaultRequest): string | null {
  return presentedToken(req.headers);
}
