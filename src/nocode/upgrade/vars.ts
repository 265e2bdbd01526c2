/**
 * The vars of an upgrade (seed E5; decisions N5, N8, B2). E5 may carry vars (to give
 * values to variables new in the target version, or to change others); they are planned
 * at E5 and written to the workspace only by E7 ("it switches the workspace to the new
 * version and variables"). Until then they wait in the upgrade run's configuration as
 * the exact rows E7 will write, sensitive values only AES-GCM encrypted under KEYWAY_KEK
 * with the context of the var id they will have (so E7 copies the ciphertext as is).
 *
 * A given var replaces the workspace's var of the same key and category (keeping its id
 * and creation time) or creates one. Choices where the seed is silent:
 * - a replaced var keeps its description unless the new one gives one;
 * - a sensitive var stays sensitive even when E5 sends `sensitive: false` (go-tfe always
 *   sends the flag): an upgrade never reveals a write-only value;
 * - a given var identical to the stored one (same value, same `hcl`, same description) is
 *   no change at all, so it neither rewrites the var nor counts as one — except a
 *   sensitive one (N8a, below).
 *
 * N8a: a value given for a sensitive variable — stored as sensitive on the workspace, or
 * declared sensitive by the module, whatever flag E5's body carries — always counts as
 * changed, so neither E5's answer nor its plan tells whether a guess equals the stored
 * value. The pending row is stored sensitive and its keyed hash is bound to the new var
 * version (`<hash>.<version id>`), so it equals no earlier hash: the planner sees the
 * variable changed whatever the value.
 */
import { decryptSecret } from "../../lib/crypto/kek";
import type { PlainVar } from "../agents/inputs";
import type { RunConfiguration } from "../runs/configuration";
import type { WorkspaceVarRow } from "../workspaces/repo";
import { newVarRow, newVarVersionId, storedValue, type VarInput, varEncryptionContext } from "../workspaces/vars";

/** A var E7 writes: the full row, and whether it replaces a stored var (same id) or is new. */
export type PendingVarChange = WorkspaceVarRow & { replaces: boolean };

/** The configuration of an upgrade run: what it plans, plus the vars E7 will write. */
export interface UpgradeRunConfiguration extends RunConfiguration {
  /** Removed from the stored configuration once E7 wrote them (or the run was discarded). */
  varChanges?: PendingVarChange[];
}

/** What merging E5's vars into the workspace's gives. */
export interface MergedVars {
  /** The workspace's vars as they will be after E7 (stored order, new ones last). */
  rows: WorkspaceVarRow[];
  /** Only the vars that differ from the stored ones. */
  changes: PendingVarChange[];
}

const slot = (v: Pick<WorkspaceVarRow, "key" | "category">) => `${v.category}\u0000${v.key}`;

/**
 * Merge the vars given to E5 into the stored ones.
 *
 * @example
 * const merged = await mergeUpgradeVars(env, ws.id, await listWorkspaceVars(db, ws.id), input.vars, Date.now());
 */
export async function mergeUpgradeVars(
  env: Pick<Env, "KEYWAY_KEK" | "KEYWAY_HASH_KEY">,
  workspaceId: string,
  stored: readonly WorkspaceVarRow[],
  given: readonly VarInput[],
  now: number,
  declaredSensitive: ReadonlySet<string> = new Set(),
): Promise<MergedVars> {
  const bySlot = new Map(stored.map((v) => [slot(v), v]));
  const changes: PendingVarChange[] = [];
  for (const input of given) {
    const existing = bySlot.get(slot(input));
    if (!existing) {
      changes.push({ ...(await newVarRow(env, workspaceId, input, now)), replaces: false });
      continue;
    }
    // N8a: sensitive on the workspace or in the module, whatever the body's flag says.
    const guarded = existing.sensitive || (existing.category === "engine" && declaredSensitive.has(existing.key));
    const sensitive = guarded || input.sensitive;
    const value = await storedValue(env, workspaceId, existing.id, existing.key, input.value, sensitive);
    const description = input.description ?? existing.description;
    const sameValue = !sensitive && !existing.sensitive && value.value === existing.value;
    if (sameValue && input.hcl === existing.hcl && description === existing.description) continue;
    const versionId = newVarVersionId();
    if (sensitive) value.sensitiveHash = `${value.sensitiveHash}.${versionId}`;
    changes.push({
      ...existing,
      ...value,
      description,
      hcl: input.hcl,
      sensitive,
      versionId,
      updatedAt: now,
      replaces: true,
    });
  }
  const changed = new Map(changes.map((c) => [c.id, c]));
  const rows: WorkspaceVarRow[] = stored.map((v) => {
    const c = changed.get(v.id);
    return c ? withoutFlag(c) : v;
  });
  for (const c of changes) if (!c.replaces) rows.push(withoutFlag(c));
  return { rows, changes };
}

/** The stored row of a pending change. */
export function withoutFlag(change: PendingVarChange): WorkspaceVarRow {
  const { replaces: _replaces, ...row } = change;
  return row;
}

/**
 * N18, N19: the vars as an agent receives them, from stored rows (the workspace's, or the
 * pending rows of an upgrade, whose sensitive values are encrypted under the context of
 * the var id they have or will have).
 */
export function plainVarsOf(env: Pick<Env, "KEYWAY_KEK">, rows: readonly WorkspaceVarRow[]): Promise<PlainVar[]> {
  return Promise.all(
    rows.map(async (row) => ({
      key: row.key,
      category: row.category,
      hcl: row.hcl,
      sensitive: row.sensitive,
      value:
        row.valueEncrypted !== null
          ? await decryptSecret(env.KEYWAY_KEK, varEncryptionContext(row.id), row.valueEncrypted)
          : (row.value ?? ""),
    })),
  );
}
