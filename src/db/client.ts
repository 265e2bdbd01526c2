import type { BatchItem } from "drizzle-orm/batch";
import { drizzle } from "drizzle-orm/d1";

// No `schema` option: every query uses drizzle's query builder over the tables each wing
// imports from src/db/schema/, never the relational `db.query` API the option enables,
// so the client needs no union of both wings' tables.
function build(d1: D1Database) {
  return drizzle(d1);
}

export type Db = ReturnType<typeof build>;

// drizzle builds a dialect and a session on every call; the binding is the same object for
// the life of an isolate, so one instance per binding keeps that work off every request.
const instances = new WeakMap<D1Database, Db>();

/** The one way to reach D1: drizzle over the `DB` binding. */
export function createDb(d1: D1Database): Db {
  let db = instances.get(d1);
  if (!db) {
    db = build(d1);
    instances.set(d1, db);
  }
  return db;
}

/**
 * Statements built as a list, typed as `db.batch` takes them (a non-empty tuple); throws
 * on an empty list, which D1 would reject.
 */
export function nonEmptyBatch(
  statements: readonly BatchItem<"sqlite">[],
): [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]] {
  if (statements.length === 0) throw new Error("a D1 batch needs at least one statement");
  return statements as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]];
}
