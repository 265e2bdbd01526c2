/** Agent pools (N9, HCP Terraform's agent pools API). */
import { and, count, eq, inArray } from "drizzle-orm";
import type { Db } from "../../db/client";
import { inJsonList } from "../../db/json-list";
import { type Page, type PageWindow, tablePage } from "../../db/page";
import { agentPools, agents } from "../../db/schema/nocode";

export type AgentPoolRow = typeof agentPools.$inferSelect;

/** An agent pool by id. */
export async function findAgentPool(db: Db, id: string): Promise<AgentPoolRow | undefined> {
  return db.select().from(agentPools).where(eq(agentPools.id, id)).get();
}

/** An agent pool by id within `organization` (no row when it belongs to another), for a `db.batch` with other reads. */
export function agentPoolInOrganizationQuery(db: Db, organization: string, id: string) {
  return db
    .select()
    .from(agentPools)
    .where(and(eq(agentPools.id, id), eq(agentPools.organization, organization)))
    .limit(1);
}

/** Inserts an agent pool; its UNIQUE (organization, name) index refuses a taken name (see insertUnique). */
export function insertAgentPool(db: Db, pool: AgentPoolRow) {
  return db.insert(agentPools).values(pool);
}

/** A page of an organization's agent pools by name and the total count. */
export async function listAgentPools(db: Db, organization: string, page: PageWindow): Promise<Page<AgentPoolRow>> {
  const where = eq(agentPools.organization, organization);
  return tablePage(db, agentPools, where, [agentPools.name], page);
}

/**
 * N17: the agents of each pool that have not ended (`idle`, `busy`, `unknown` as last
 * written by the pool's Durable Object), by pool id; one statement.
 */
export async function agentCounts(db: Db, poolIds: readonly string[]): Promise<Map<string, number>> {
  if (poolIds.length === 0) return new Map();
  const rows = await db
    .select({ poolId: agents.poolId, n: count() })
    .from(agents)
    .where(and(inJsonList(agents.poolId, [...poolIds]), inArray(agents.status, ["idle", "busy", "unknown"])))
    .groupBy(agents.poolId)
    .all();
  return new Map(rows.map((r) => [r.poolId, r.n]));
}

/** Ids stored in one of the JSON-array relationship columns. */
export function storedIds(column: string): string[] {
  const value: unknown = JSON.parse(column);
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}
