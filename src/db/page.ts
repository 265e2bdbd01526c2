/**
 * The one shape of a listing every repository answers: the rows of the page asked for and
 * the count of all rows, which HCP Terraform's pagination meta needs (`total-count`,
 * `total-pages`; rendered by `pageDocument` in src/nocode/request/query.ts).
 */
import { count, type SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Db } from "./client";

export interface Page<Row> {
  rows: Row[];
  total: number;
}

/** Which rows a page holds: skip `offset`, take `size`. */
export interface PageWindow {
  offset: number;
  size: number;
}

/**
 * One page of `table`'s rows that match `where`, in `orderBy` order, with the count of all
 * that match. Both reads go in one D1 batch, so they see the same rows (a write between two
 * separate reads could make `total` disagree with the page) and cost one round trip.
 */
export async function tablePage<Table extends SQLiteTable>(
  db: Db,
  table: Table,
  where: SQL | undefined,
  orderBy: readonly (SQLiteColumn | SQL)[],
  page: PageWindow,
): Promise<Page<Table["$inferSelect"]>> {
  const [rows, totals] = await db.batch([
    db
      .select()
      .from(table as SQLiteTable)
      .where(where)
      .orderBy(...orderBy)
      .limit(page.size)
      .offset(page.offset),
    db
      .select({ n: count() })
      .from(table as SQLiteTable)
      .where(where),
  ]);
  return { rows: rows as Table["$inferSelect"][], total: totals[0]?.n ?? 0 };
}
