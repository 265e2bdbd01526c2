/** The Durable Object of an agent pool (decision N18): one instance per pool, named by the pool id. */
import type { AgentPool } from "./pool-object";

/** The stub of `poolId`'s Durable Object. */
export function poolStub(env: Pick<Env, "AGENT_POOLS">, poolId: string): DurableObjectStub<AgentPool> {
  // worker-configuration.d.ts types the binding without its class; the class is AgentPool.
  const namespace = env.AGENT_POOLS as unknown as DurableObjectNamespace<AgentPool>;
  return namespace.get(namespace.idFromName(poolId));
}
