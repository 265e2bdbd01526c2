/**
 * Decision B8: a list of any length as ONE bound parameter. D1 allows 100 bound parameters
 * per statement, so `IN (?, ?, …)` with a parameter per item fails past 100 items (and
 * local SQLite does not notice). `json_each(?)` takes the whole list as one JSON text.
 */
import { type SQL, type SQLWrapper, sql } from "drizzle-orm";

/** `(SELECT value FROM json_each(?))`: the list as a subquery, one bound parameter. */
export function jsonList(values: readonly (string | number)[]): SQL {
  return sql`(SELECT value FROM json_each(${JSON.stringify(values)}))`;
}

/** `column IN (SELECT value FROM json_each(?))`: drizzle's `inArray` within B8. */
export function inJsonList(column: SQLWrapper, values: readonly (string | number)[]): SQL {
  return sql`${column} IN ${jsonList(values)}`;
}
