/**
 * Agent pools (N9, N10, reference §5.4): `POST|GET /organizations/:org/agent-pools` and
 * `GET /agent-pools/:id`. Creating needs `manage-agent-pools` (owners and the
 * organization token have it); any member reads.
 */
import { and, eq } from "drizzle-orm";
import { Hono } from "hono";
import { createDb } from "../../db/client";
import { inJsonList } from "../../db/json-list";
import { agentPools, projects } from "../../db/schema";
import { isUniqueViolation } from "../../db/errors";
import type { NocodeEnv } from "../env";
import { invalidAttribute, notFound } from "../errors";
import { isId, newId } from "../ids";
import { FieldErrors, pageDocument, pageRequest, readResource } from "../jsonapi";
import { orgCallerPermissions } from "../permissions";
import { jsonApi } from "../respond";
import { type AgentPoolRow, findAgentPool, listAgentPools } from "./repo";
import { serializeAgentPool } from "./serialize";
import { rights } from "../route-rights";

/** Agent pool names: letters, digits, `-` and `_` (reference §5.4), at most 90 characters (our choice). */
export const AGENT_POOL_NAME = /^[A-Za-z0-9_-]+$/;
export const AGENT_POOL_NAME_MAX = 90;

export const agentPoolRoutes = new Hono<NocodeEnv>();

/**
 * Read a to-many relationship `{data: [{type, id}]}`; ids must have the resource's id
 * shape. Returns undefined (and records an error) when malformed.
 */
function relationshipIds(errors: FieldErrors, relationships: Record<string, unknown>, name: string, types: string[], prefix: string): string[] {
  const rel = relationships[name];
  if (rel === undefined || rel === null) return [];
  const data = typeof rel === "object" && !Array.isArray(rel) ? (rel as Record<string, unknown>)["data"] : undefined;
  if (!Array.isArray(data)) {
    errors.add(name, `Relationship ${name} must be {"data": [{"type": "${types[0]}", "id": "…"}]}`);
    return [];
  }
  const ids: string[] = [];
  for (const item of data) {
    const entry = item !== null && typeof item === "object" ? (item as Record<string, unknown>) : {};
    const id = entry["id"];
    if (typeof id !== "string" || !isId(prefix, id) || (entry["type"] !== undefined && !types.includes(String(entry["type"])))) {
      errors.add(name, `Relationship ${name} must list ${types[0]} by id (${prefix}-…)`);
      return [];
    }
    ids.push(id);
  }
  return [...new Set(ids)];
}

agentPoolRoutes.post("/organizations/:org/agent-pools", rights({ right: "manage-agent-pools" }), async (c) => {
  const db = createDb(c.env.DB);
  const organization = c.req.param("org");
  const rights = await orgCallerPermissions(db, c.var.caller, organization);
  if (!rights.has("manage-agent-pools")) throw notFound();
  const input = await readResource(c.req.raw, ["agent-pools", "agent-pool"]);
  const errors = new FieldErrors();
  const name = errors.required(input.attributes, "name");
  if (name !== undefined) {
    if (name.length > AGENT_POOL_NAME_MAX) errors.add("name", `Name is too long (maximum is ${AGENT_POOL_NAME_MAX} characters)`);
    else if (!AGENT_POOL_NAME.test(name)) errors.add("name", "Name may only contain letters, numbers, dashes (-), and underscores (_)");
  }
  const organizationScoped = errors.boolean(input.attributes, "organization-scoped");
  const allowedWorkspaces = relationshipIds(errors, input.relationships, "allowed-workspaces", ["workspaces", "workspace"], "ws");
  const allowedProjects = relationshipIds(errors, input.relationships, "allowed-projects", ["projects", "project"], "prj");
  const excludedWorkspaces = relationshipIds(errors, input.relationships, "excluded-workspaces", ["workspaces", "workspace"], "ws");
  if (allowedProjects.length > 0) {
    const found = await db
      .select({ id: projects.id })
      .from(projects)
      .where(and(eq(projects.organization, organization), inJsonList(projects.id, allowedProjects)))
      .all();
    if (found.length !== allowedProjects.length) errors.add("allowed-projects", "Allowed projects must be projects of this organization");
  }
  errors.throwIfAny();

  const pool: AgentPoolRow = {
    id: newId("apool"),
    organization,
    name: name!,
    organizationScoped: organizationScoped ?? true,
    allowedWorkspaces: JSON.stringify(allowedWorkspaces),
    allowedProjects: JSON.stringify(allowedProjects),
    excludedWorkspaces: JSON.stringify(excludedWorkspaces),
    createdAt: Date.now(),
  };
  try {
    await db.insert(agentPools).values(pool);
  } catch (err) {
    if (isUniqueViolation(err)) throw invalidAttribute("name", "Name has already been taken");
    throw err;
  }
  return jsonApi({ data: serializeAgentPool(pool) }, 201);
});

agentPoolRoutes.get("/organizations/:org/agent-pools", rights({ right: "member" }), async (c) => {
  const db = createDb(c.env.DB);
  const organization = c.req.param("org");
  const rights = await orgCallerPermissions(db, c.var.caller, organization);
  if (!rights.has("member")) throw notFound();
  const url = new URL(c.req.url);
  const page = pageRequest(url);
  const { rows, total } = await listAgentPools(db, organization, page);
  return jsonApi({ data: rows.map(serializeAgentPool), ...pageDocument(url, page, total) });
});

agentPoolRoutes.get("/agent-pools/:id", rights({ right: "member" }), async (c) => {
  const db = createDb(c.env.DB);
  const pool = await findAgentPool(db, c.req.param("id"));
  if (!pool) throw notFound();
  const rights = await orgCallerPermissions(db, c.var.caller, pool.organization);
  if (!rights.has("member")) throw notFound();
  return jsonApi({ data: serializeAgentPool(pool) });
});
