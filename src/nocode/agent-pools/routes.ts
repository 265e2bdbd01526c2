/**
 * Agent pools (N9, N10, HCP Terraform's agent pools API): `POST|GET /organizations/:org/agent-pools` and
 * `GET /agent-pools/:id`. Creating needs `manage-agent-pools` (owners and the
 * organization token have it); any member reads.
 */
import { Hono } from "hono";
import * as v from "valibot";
import { insertUnique } from "../../db/unique";
import type { NocodeEnv } from "../env";
import { invalidAttribute, NocodeError } from "../errors";
import { isId, newId } from "../ids";
import { projectIdsInOrganization } from "../projects/repo";
import { pagedList, single } from "../request/answers";
import { flag, members, requiredPlainName, resourceDocument } from "../request/document";
import { operation } from "../request/operation";
import { pageOf, pageQuery } from "../request/query";
import { jsonApi, jsonApiPage } from "../respond";
import { rights, scope } from "../route-rights";
import { type AgentPoolRow, agentCounts, findAgentPool, insertAgentPool, listAgentPools } from "./repo";
import { agentPoolAnswer, serializeAgentPool } from "./serialize";

/** Agent pool names: letters, digits, `-` and `_` (HCP Terraform's agent pools API), at most 90 characters (our choice). */
export const AGENT_POOL_NAME_MAX = 90;

export const agentPoolRoutes = new Hono<NocodeEnv>();

/** A to-many relationship `{data: [{type, id}]}` whose ids have the resource's id shape (`<prefix>-…`); absent or null: none. */
function poolRelationship(name: string, types: readonly [string, ...string[]], prefix: string) {
  const member = `Relationship ${name} must list ${types[0]} by id (${prefix}-…)`;
  const shape = `Relationship ${name} must be {"data": [{"type": "${types[0]}", "id": "…"}]}`;
  const identifier = members(
    {
      type: v.optional(v.picklist(types, member)),
      id: v.pipe(
        v.string(member),
        v.check((id) => isId(prefix, id), member),
      ),
    },
    member,
    () => member,
  );
  return v.optional(v.nullable(members({ data: v.array(identifier, shape) }, shape, () => shape)));
}

/** The distinct ids of a pool relationship. */
const idsOf = (relationship: { data: { id: string }[] } | null | undefined) => [
  ...new Set((relationship?.data ?? []).map((m) => m.id)),
];

const agentPoolCreate = operation({
  tag: "agent-pools",
  summary: "Create an agent pool (manage-agent-pools: N10)",
  body: resourceDocument({
    types: ["agent-pools", "agent-pool"],
    attributes: {
      name: requiredPlainName("name", AGENT_POOL_NAME_MAX),
      "organization-scoped": flag("organization-scoped"),
    },
    relationships: {
      "allowed-workspaces": poolRelationship("allowed-workspaces", ["workspaces", "workspace"], "ws"),
      "allowed-projects": poolRelationship("allowed-projects", ["projects", "project"], "prj"),
      "excluded-workspaces": poolRelationship("excluded-workspaces", ["workspaces", "workspace"], "ws"),
    },
  }),
  answers: { 201: { description: "The agent pool", schema: single(agentPoolAnswer) } },
});

agentPoolRoutes.post(
  "/organizations/:org/agent-pools",
  rights({ right: "manage-agent-pools" }),
  agentPoolCreate,
  async (c) => {
    const db = c.var.db;
    const organization = c.req.param("org");
    const { attributes, relationships } = (await agentPoolCreate.body(c)).data;
    const allowedWorkspaces = idsOf(relationships["allowed-workspaces"]);
    const allowedProjects = idsOf(relationships["allowed-projects"]);
    const excludedWorkspaces = idsOf(relationships["excluded-workspaces"]);
    if (allowedProjects.length > 0) {
      const found = await projectIdsInOrganization(db, organization, allowedProjects);
      if (found.length !== allowedProjects.length) {
        throw new NocodeError(
          "invalid_attribute",
          "Allowed projects must be projects of this organization",
          "/data/relationships/allowed-projects",
        );
      }
    }

    const pool: AgentPoolRow = {
      id: newId("apool"),
      organization,
      name: attributes.name,
      organizationScoped: attributes["organization-scoped"] ?? true,
      allowedWorkspaces: JSON.stringify(allowedWorkspaces),
      allowedProjects: JSON.stringify(allowedProjects),
      excludedWorkspaces: JSON.stringify(excludedWorkspaces),
      createdAt: Date.now(),
    };
    await insertUnique(insertAgentPool(db, pool), () => invalidAttribute("name", "Name has already been taken"));
    return jsonApi({ data: serializeAgentPool(pool, 0) }, 201);
  },
);

const agentPoolList = operation({
  tag: "agent-pools",
  summary: "List an organization's agent pools (members)",
  query: pageQuery,
  answers: { 200: { description: "One page of agent pools", schema: pagedList(agentPoolAnswer) } },
});

agentPoolRoutes.get("/organizations/:org/agent-pools", rights({ right: "member" }), agentPoolList, async (c) => {
  const db = c.var.db;
  const organization = c.req.param("org");
  const page = pageOf(agentPoolList.query(c));
  const listed = await listAgentPools(db, organization, page);
  const counts = await agentCounts(
    db,
    listed.rows.map((r) => r.id),
  );
  return jsonApiPage(c.req.url, page, listed, (row) => serializeAgentPool(row, counts.get(row.id) ?? 0));
});

const agentPoolShow = operation({
  tag: "agent-pools",
  summary: "Show an agent pool (members)",
  answers: { 200: { description: "The agent pool", schema: single(agentPoolAnswer) } },
});

/** The pool `:id` and its organization (its routes, and the agent-token and agent routes of N17). */
export const agentPoolById = scope(async (c) => {
  const pool = await findAgentPool(c.var.db, c.req.param("id") ?? "");
  return pool && { resource: pool, organization: pool.organization };
});

agentPoolRoutes.get(
  "/agent-pools/:id",
  rights({ right: "member" }, { scope: agentPoolById }),
  agentPoolShow,
  async (c) => {
    const pool = agentPoolById.of(c);
    const counts = await agentCounts(c.var.db, [pool.id]);
    return jsonApi({ data: serializeAgentPool(pool, counts.get(pool.id) ?? 0) });
  },
);
