/** The `agent-pools` resource (HCP's shape). */
import * as v from "valibot";
import { linkAnswer, resourceAnswer, timestamp, toManyAnswer, toOneAnswer } from "../request/answers";
import { isoTime } from "../respond";
import { type AgentPoolRow, storedIds } from "./repo";

const identifiers = (column: string, type: string) => ({ data: storedIds(column).map((id) => ({ id, type })) });

/** Serialize an agent pool; `agentCount`: its agents that have not ended (N17). */
export function serializeAgentPool(pool: AgentPoolRow, agentCount: number) {
  return {
    id: pool.id,
    type: "agent-pools",
    attributes: {
      name: pool.name,
      "created-at": isoTime(pool.createdAt),
      "organization-scoped": pool.organizationScoped,
      "agent-count": agentCount,
    },
    relationships: {
      organization: { data: { id: pool.organization, type: "organizations" } },
      agents: { links: { related: `/api/v2/agent-pools/${pool.id}/agents` } },
      "allowed-workspaces": identifiers(pool.allowedWorkspaces, "workspaces"),
      "allowed-projects": identifiers(pool.allowedProjects, "projects"),
      "excluded-workspaces": identifiers(pool.excludedWorkspaces, "workspaces"),
    },
    links: { self: `/api/v2/agent-pools/${pool.id}` },
  };
}

/** B14: the resource serializeAgentPool renders. */
export const agentPoolAnswer = resourceAnswer(
  "agent-pools",
  { name: v.string(), "created-at": timestamp, "organization-scoped": v.boolean(), "agent-count": v.number() },
  {
    organization: toOneAnswer("organizations"),
    agents: linkAnswer,
    "allowed-workspaces": toManyAnswer("workspaces"),
    "allowed-projects": toManyAnswer("projects"),
    "excluded-workspaces": toManyAnswer("workspaces"),
  },
);
