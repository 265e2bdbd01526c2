/** Users of the no-code service (N9). */
import { eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { nocodeUsers } from "../../db/schema/nocode";
import { isId } from "../ids";

export type UserRow = typeof nocodeUsers.$inferSelect;

/** A user by id (`user-…`) or, failing that, by username (HCP's membership endpoints use usernames). */
export async function findUser(db: Db, idOrUsername: string): Promise<UserRow | undefined> {
  if (isId("user", idOrUsername)) {
    const byId = await db.select().from(nocodeUsers).where(eq(nocodeUsers.id, idOrUsername)).get();
    if (byId) return byId;
  }
  return db.select().from(nocodeUsers).where(eq(nocodeUsers.username, idOrUsername)).get();
}

/** Whether a user already has `username` (exactly; an id-shaped name is not read as an id). */
export async function usernameTaken(db: Db, username: string): Promise<boolean> {
  const row = await db.select({ id: nocodeUsers.id }).from(nocodeUsers).where(eq(nocodeUsers.username, username)).get();
  return row !== undefined;
}

/** Inserts a user; its UNIQUE username index refuses a taken name (see insertUnique). */
export function insertUser(db: Db, user: UserRow) {
  return db.insert(nocodeUsers).values(user);
}
