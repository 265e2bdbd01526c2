/** The `agent-pools` resource (HCP's shape). */
import { isoTime } from "../respond";
import { type AgentPoolRow, storedIds } from "./repo";

const identifiers = (column: string, type: string) => ({ data: storedIds(column).map((id) => ({ id, type })) });

/** Serialize an agent pool. This service runs no agents, so `agent-count` is always 0. */
export function serializeAgentPool(pool: AgentPoolRow) {
  return {
    id: pool.id,
    type: "agent-pools",
    attributes: {
      name: pool.name,
      "created-at": isoTime(pool.createdAt),
      "organization-scoped": pool.organizationScoped,
      "agent-count": 0,
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
