/**
 * API tokens of the no-code service (N9): user tokens (many per user), team tokens and
 * organization tokens (one each; a new one replaces the old). Only the keyed hash is
 * stored (B2); the token itself appears once, in the create response.
 */
import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { nocodeTokens } from "../../db/schema";
import { generateNocodeToken, hashNocodeToken } from "../auth";
import { newId } from "../ids";
import { isoTime } from "../respond";

type TokenRow = typeof nocodeTokens.$inferSelect;

/** What a token is for. */
export type TokenSubject =
  | { kind: "user"; userId: string }
  | { kind: "team"; teamId: string; organization: string }
  | { kind: "organization"; organization: string };

/** Create a token for `subject`; team and organization tokens replace the previous one. */
export async function issueToken(
  env: Pick<Env, "KEYWAY_HASH_KEY">,
  db: Db,
  subject: TokenSubject,
  description: string | null = null,
): Promise<{ token: string; row: TokenRow }> {
  const token = generateNocodeToken();
  const row: TokenRow = {
    hash: await hashNocodeToken(env, token),
    id: newId("at"),
    kind: subject.kind,
    subjectId: subject.kind === "user" ? subject.userId : subject.kind === "team" ? subject.teamId : subject.organization,
    organization: subject.kind === "user" ? null : subject.organization,
    description,
    createdAt: Date.now(),
  };
  const insert = db.insert(nocodeTokens).values(row);
  if (subject.kind === "user") {
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

/** The `authentication-tokens` resource (HCP's shape); `token` only on create. */
export function serializeToken(row: TokenRow, token: string | null) {
  const relationships: Record<string, unknown> = {};
  if (row.kind === "user") relationships["created-by"] = { data: { id: row.subjectId, type: "users" } };
  if (row.kind === "team") relationships["team"] = { data: { id: row.subjectId, type: "teams" } };
  if (row.kind === "organization") relationships["organization"] = { data: { id: row.subjectId, type: "organizations" } };
  return {
    data: {
      id: row.id,
      type: "authentication-tokens",
      attributes: {
        "created-at": isoTime(row.createdAt),
        "last-used-at": null,
        description: row.description,
        token,
        "expired-at": null,
      },
      relationships,
    },
  };
}
