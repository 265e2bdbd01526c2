/**
 * D1 access for no-code modules and their variable options (decisions N3, N5). Multi-row
 * writes go through `db.batch` (no interactive transactions on D1).
 */
import { asc, eq, inArray } from "drizzle-orm";
import type { Db } from "../../db/client";
import { noCodeModules, variableOptions } from "../../db/schema/nocode";
import { newId } from "../ids";
import { setRegistryModuleNoCodeStatement } from "../registry/repo";
import type { CheckedOptionSet } from "./options";

/** A no-code module row. */
export type NoCodeModuleRow = typeof noCodeModules.$inferSelect;
/** A variable-options row (`options` is a JSON array). */
export type VariableOptionRow = typeof variableOptions.$inferSelect;

/** A variable-options set with its values parsed. */
export interface VariableOptionSet {
  id: string;
  noCodeModuleId: string;
  variableName: string;
  variableType: string;
  options: unknown[];
  position: number;
}

/** Parse the stored JSON of a variable-options row. */
export function optionSetOf(row: VariableOptionRow): VariableOptionSet {
  const parsed: unknown = JSON.parse(row.options);
  return {
    id: row.id,
    noCodeModuleId: row.noCodeModuleId,
    variableName: row.variableName,
    variableType: row.variableType,
    options: Array.isArray(parsed) ? parsed : [],
    position: row.position,
  };
}

/** A no-code module by id. */
export function findNoCodeModule(db: Db, id: string): Promise<NoCodeModuleRow | undefined> {
  return db.select().from(noCodeModules).where(eq(noCodeModules.id, id)).get();
}

/** The no-code module of a registry module (at most one, N3). */
export function findNoCodeModuleOfRegistryModule(
  db: Db,
  registryModuleId: string,
): Promise<NoCodeModuleRow | undefined> {
  return db.select().from(noCodeModules).where(eq(noCodeModules.registryModuleId, registryModuleId)).get();
}

/** The no-code modules whose `column` is one of `values`, in chunks under D1's 100 bound parameters per statement. */
async function noCodeModulesWhereIn(
  db: Db,
  column: typeof noCodeModules.id | typeof noCodeModules.registryModuleId,
  values: readonly string[],
): Promise<NoCodeModuleRow[]> {
  const out: NoCodeModuleRow[] = [];
  for (let i = 0; i < values.length; i += 90) {
    out.push(
      ...(await db
        .select()
        .from(noCodeModules)
        .where(inArray(column, values.slice(i, i + 90)))
        .all()),
    );
  }
  return out;
}

/** The no-code modules of the given registry modules. */
export function noCodeModulesOfRegistryModules(
  db: Db,
  registryModuleIds: readonly string[],
): Promise<NoCodeModuleRow[]> {
  return noCodeModulesWhereIn(db, noCodeModules.registryModuleId, registryModuleIds);
}

/** The no-code modules with the given ids (those that exist). */
export function findNoCodeModules(db: Db, ids: readonly string[]): Promise<NoCodeModuleRow[]> {
  return noCodeModulesWhereIn(db, noCodeModules.id, ids);
}

/** The variable-options sets of a no-code module in creation order. */
export async function listVariableOptions(db: Db, noCodeModuleId: string): Promise<VariableOptionSet[]> {
  return (await variableOptionsQuery(db, noCodeModuleId)).map(optionSetOf);
}

/** The select behind listVariableOptions, in their stored order, for a `db.batch`; map the rows with optionSetOf. */
export function variableOptionsQuery(db: Db, noCodeModuleId: string) {
  return db
    .select()
    .from(variableOptions)
    .where(eq(variableOptions.noCodeModuleId, noCodeModuleId))
    .orderBy(asc(variableOptions.position), asc(variableOptions.createdAt), asc(variableOptions.id));
}

/** A no-code module with its variable-options sets (E3's document inputs). */
export interface NoCodeModuleWithOptions {
  module: NoCodeModuleRow;
  sets: VariableOptionSet[];
}

/** A no-code module and its variable options in one D1 round trip (`db.batch`), or undefined. */
export async function findNoCodeModuleWithOptions(db: Db, id: string): Promise<NoCodeModuleWithOptions | undefined> {
  const [modules, rows] = await db.batch([
    db.select().from(noCodeModules).where(eq(noCodeModules.id, id)).limit(1),
    variableOptionsQuery(db, id),
  ]);
  const module = modules[0];
  return module ? { module, sets: rows.map(optionSetOf) } : undefined;
}

/** Statements that store `sets` as the module's complete option set (ids kept where given). */
function replaceOptionStatements(db: Db, noCodeModuleId: string, sets: readonly CheckedOptionSet[], now: number) {
  return [
    db.delete(variableOptions).where(eq(variableOptions.noCodeModuleId, noCodeModuleId)),
    // One statement per row: D1 caps bound parameters per statement at 100.
    ...sets.map((s, position) =>
      db.insert(variableOptions).values({
        id: s.id ?? newId("ncvaropt"),
        noCodeModuleId,
        variableName: s.variableName,
        variableType: s.variableType,
        options: JSON.stringify(s.options),
        position,
        createdAt: now,
      }),
    ),
  ];
}

/**
 * Stores a new no-code module (E1) in one batch with its option sets and its registry
 * module's legacy `no-code` flag (N9). Of two concurrent E1s for one registry module, the
 * UNIQUE registry-module index keeps one (N3; see insertUnique).
 */
export function insertNoCodeModule(db: Db, module: NoCodeModuleRow, sets: readonly CheckedOptionSet[], now: number) {
  return db.batch([
    db.insert(noCodeModules).values(module),
    ...replaceOptionStatements(db, module.id, sets, now),
    setRegistryModuleNoCodeStatement(db, module.registryModuleId, module.enabled, now),
  ]);
}

/** What one E2 writes; a part left out is left as it is. */
export interface NoCodeModuleUpdate {
  /** The module's new row, when its registry module, pin or `enabled` changed. */
  row?: NoCodeModuleRow;
  /** Its complete new option set, when the request sent one. */
  sets?: readonly CheckedOptionSet[];
  /** The legacy `no-code` flags to set (N9): of the registry module it leaves, of the one it is on. */
  legacyFlags: { registryModuleId: string; noCode: boolean }[];
  now: number;
}

/**
 * Writes an E2 in one batch (nothing when it changes nothing). Moving to a registry module
 * that meanwhile got a no-code module violates the UNIQUE registry-module index (N3).
 */
export async function updateNoCodeModule(db: Db, id: string, update: NoCodeModuleUpdate): Promise<void> {
  const { row, sets, now } = update;
  const statements = [];
  if (row) {
    const { registryModuleId, versionPin, enabled, updatedAt } = row;
    statements.push(
      db
        .update(noCodeModules)
        .set({ registryModuleId, versionPin, enabled, updatedAt })
        .where(eq(noCodeModules.id, id)),
    );
  }
  if (sets !== undefined) statements.push(...replaceOptionStatements(db, id, sets, now));
  for (const flag of update.legacyFlags) {
    statements.push(setRegistryModuleNoCodeStatement(db, flag.registryModuleId, flag.noCode, now));
  }
  const [first, ...rest] = statements;
  if (first) await db.batch([first, ...rest]);
}

/** Deletes a no-code module and its variable options, and clears its registry module's legacy flag, in one batch. */
export async function deleteNoCodeModule(db: Db, module: NoCodeModuleRow): Promise<void> {
  await db.batch([
    ...deleteNoCodeModuleStatements(db, module.id),
    setRegistryModuleNoCodeStatement(db, module.registryModuleId, false),
  ]);
}

/** Delete a no-code module and its variable options (statements to batch). */
export function deleteNoCodeModuleStatements(db: Db, id: string) {
  return [
    db.delete(variableOptions).where(eq(variableOptions.noCodeModuleId, id)),
    db.delete(noCodeModules).where(eq(noCodeModules.id, id)),
  ] as const;
}
