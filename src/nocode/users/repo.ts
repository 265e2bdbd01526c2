/** Users of the no-code service (N9). */
import { eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { nocodeUsers } from "../../db/schema";
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
