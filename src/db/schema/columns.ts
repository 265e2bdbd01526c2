/**
 * Column sets that tables of both wings carry, so that a table names each set in one line.
 * Each call returns fresh column builders: drizzle binds a builder to the table it builds.
 */
import { integer } from "drizzle-orm/sqlite-core";

/** When the row was created and last changed, in milliseconds since the epoch. */
export function timestamps() {
  return {
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  };
}
