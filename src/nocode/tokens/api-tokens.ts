/**
 * API tokens of the no-code service (N9, N13): user tokens (many per user), team tokens
 * and organization tokens (one each; a new one replaces the old). Only the keyed hash is
 * stored (B2); the token itself appears once, in the create response. Each carries
 * `created-at`, `last-used-at` (written by ../access/auth.ts) and an optional `expired-at`.
 */
import { and, desc, eq } from "drizzle-orm";
import * as v from "valibot";
import type { Db } from "../../db/client";
import { type Page, type PageWindow, tablePage } from "../../db/page";
import { nocodeTokens } from "../../db/schema/nocode";
import { generateNocodeToken, hashNocodeToken } from "../access/auth";
import { newId } from "../ids";
import { orNull, resourceAnswer, single, timestamp, toOneAnswer } from "../request/answers";
import { nullableText } from "../request/document";
import { isoTime } from "../respond";

export type TokenRow = typeof nocodeTokens.$inferSelect;

/** What a token is for. */
export type TokenSubject =
  | { kind: "user"; userId: string }
  | { kind: "team"; teamId: string; organization: string }
  | { kind: "organization"; organization: string }
  /** N17: an agent pool's token; it reaches only the agent protocol (/api/agent/v1). */
  | { kind: "agent"; poolId: string; organization: string };

/** Create a token for `subject`; team and organization tokens replace the previous one. */
export async function issueToken(
  env: Pick<Env, "KEYWAY_HASH_KEY">,
  db: Db,
  subject: TokenSubject,
  description: string | null = null,
  expiredAt: number | null = null,
): Promise<{ token: string; row: TokenRow }> {
  const token = generateNocodeToken();
  const row: TokenRow = {
    hash: await hashNocodeToken(env, token),
    id: newId("at"),
    kind: subject.kind,
    subjectId:
      subject.kind === "user"
        ? subject.userId
        : subject.kind === "team"
          ? subject.teamId
          : subject.kind === "agent"
            ? subject.poolId
            : subject.organization,
    organization: subject.kind === "user" ? null : subject.organization,
    description,
    createdAt: Date.now(),
    lastUsedAt: null,
    expiredAt,
  };
  const insert = db.insert(nocodeTokens).values(row);
  if (subject.kind === "user" || subject.kind === "agent") {
    await insert;
  } else {
    // One statement batch: the old token stops working exactly when the new one starts.
    await db.batch([revokeStatement(db, subject.kind, row.subjectId), insert]);
  }
  return { token, row };
}

function revokeStatement(db: Db, kind: "team" | "organization", subjectId: string) {
  return db.delete(nocodeTokens).where(and(eq(nocodeTokens.kind, kind), eq(nocodeTokens.subjectId, subjectId)));
}

/** Delete the token of a team or organization; true when there was one. */
export async function revokeToken(db: Db, kind: "team" | "organization", subjectId: string): Promise<boolean> {
  const gone = await revokeStatement(db, kind, subjectId).returning({ id: nocodeTokens.id });
  return gone.length > 0;
}

/** ISO 8601 date-time with a zone (HCP sends `2026-01-02T03:04:05.000Z`). */
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;

const EXPIRED_AT_FORMAT = "Expired at must be an ISO 8601 date and time, such as 2030-01-31T12:00:00Z";

/**
 * N13: the optional `expired-at` of a token create (HCP's attribute): absent or null →
 * never expires (null); otherwise an ISO 8601 date-time in the future (epoch ms).
 */
export const expiredAtAttribute = v.optional(
  v.nullable(
    v.pipe(
      v.string(EXPIRED_AT_FORMAT),
      v.regex(ISO_DATE_TIME, EXPIRED_AT_FORMAT),
      v.transform((raw) => Date.parse(raw)),
      v.check((at) => Number.isFinite(at), EXPIRED_AT_FORMAT),
      v.check((at) => at > Date.now(), "Expired at must be in the future"),
    ),
  ),
  null,
);

/** The attributes of an organization or team token create (a user token also takes a description). */
export const tokenCreateAttributes = { "expired-at": expiredAtAttribute };

/** Longest token description we store. */
export const TOKEN_DESCRIPTION_MAX = 256;

/** The optional `description` of a user or agent token create: a string of at most TOKEN_DESCRIPTION_MAX, or null. */
export const tokenDescriptionAttribute = v.pipe(
  nullableText("description"),
  v.check(
    (d) => typeof d !== "string" || d.length <= TOKEN_DESCRIPTION_MAX,
    `Description is too long (maximum is ${TOKEN_DESCRIPTION_MAX} characters)`,
  ),
);

/** A token by its public id (`at-…`). */
export function findTokenById(db: Db, id: string): Promise<TokenRow | undefined> {
  return db.select().from(nocodeTokens).where(eq(nocodeTokens.id, id)).get();
}

/** Delete a token by its public id; true when there was one. */
export async function revokeTokenById(db: Db, id: string): Promise<boolean> {
  const gone = await db.delete(nocodeTokens).where(eq(nocodeTokens.id, id)).returning({ id: nocodeTokens.id });
  return gone.length > 0;
}

/** A user's tokens, newest first (one page). */
export async function listUserTokens(db: Db, userId: string, page: PageWindow): Promise<Page<TokenRow>> {
  const where = and(eq(nocodeTokens.kind, "user"), eq(nocodeTokens.subjectId, userId));
  return tablePage(db, nocodeTokens, where, [desc(nocodeTokens.createdAt), desc(nocodeTokens.id)], page);
}

/** The `authentication-tokens` resource (HCP's shape); `token` only on create. */
export function serializeToken(row: TokenRow, token: string | null) {
  const relationships: Record<string, unknown> = {};
  if (row.kind === "user") relationships["created-by"] = { data: { id: row.subjectId, type: "users" } };
  if (row.kind === "team") relationships["team"] = { data: { id: row.subjectId, type: "teams" } };
  if (row.kind === "organization")
    relationships["organization"] = { data: { id: row.subjectId, type: "organizations" } };
  if (row.kind === "agent") relationships["agent-pool"] = { data: { id: row.subjectId, type: "agent-pools" } };
  return {
    data: {
      id: row.id,
      type: "authentication-tokens",
      attributes: {
        "created-at": isoTime(row.createdAt),
        "last-used-at": row.lastUsedAt === null ? null : isoTime(row.lastUsedAt),
        description: row.description,
        token,
        "expired-at": row.expiredAt === null ? null : isoTime(row.expiredAt),
      },
      relationships,
    },
  };
}

/** B14: the resource serializeToken renders (`token` is the secret, on create only). */
export const tokenResourceAnswer = resourceAnswer(
  "authentication-tokens",
  {
    "created-at": timestamp,
    "last-used-at": orNull(timestamp),
    description: orNull(v.string()),
    token: orNull(v.string()),
    "expired-at": orNull(timestamp),
  },
  {
    "created-by": v.optional(toOneAnswer("users")),
    team: v.optional(toOneAnswer("teams")),
    organization: v.optional(toOneAnswer("organizations")),
    "agent-pool": v.optional(toOneAnswer("agent-pools")),
  },
);

/** B14: the document serializeToken renders. */
export const tokenAnswer = single(tokenResourceAnswer);
