import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema";

/** The one way to reach D1: drizzle over the `DB` binding, with every table's schema. */
export function createDb(d1: D1Database) {
  return drizzle(d1, { schema });
}

export type Db = ReturnType<typeof createDb>;
