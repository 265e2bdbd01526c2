/**
 * Agent tokens and agents in HCP Terraform's shapes (decision N17):
 * - `POST|GET /agent-pools/:id/authentication-tokens` (`manage-agent-pools`); the token is
 *   shown once, on create; `GET|DELETE /authentication-tokens/:id` of an agent token live
 *   with the other tokens (../users/routes.ts) and need the same right;
 * - `GET /agent-pools/:id/agents` (`filter[last-ping-since]`) and `GET /agents/:id` (any
 *   member), with the live status from the pool's Durable Object;
 * - `DELETE /agents/:id` (`manage-agent-pools`): the agent's session ends at once (its next
 *   call answers 401, its job is canceled) and it is no longer listed.
 * Not permitted → 404 (N10).
 */
import { Hono } from "hono";
import * as v from "valibot";
import { hashNocodeToken } from "../access/auth";
import { agentPoolById } from "../agent-pools/routes";
import type { NocodeEnv } from "../env";
import { orNull, pagedList, resourceAnswer, single, timestamp, toOneAnswer } from "../request/answers";
import { optionalResourceDocument } from "../request/document";
import { operation } from "../request/operation";
import { pageOf, pageParameters, pageQuery } from "../request/query";
import { isoTime, jsonApi, jsonApiPage, noContent } from "../respond";
import { rights, scope } from "../route-rights";
import {
  issueToken,
  serializeToken,
  tokenAnswer,
  tokenDescriptionAttribute,
  tokenResourceAnswer,
} from "../tokens/api-tokens";
import type { AgentPool } from "./pool-object";
import { poolStub } from "./pool-stub";
import { type AgentRow, type AgentStatus, deleteAgent, findAgent, listPoolAgents, listPoolTokens } from "./repo";

export const agentRoutes = new Hono<NocodeEnv>();

/** The agent `:id` and its organization. */
const agentById = scope(async (c) => {
  const agent = await findAgent(c.var.db, c.req.param("id") ?? "");
  return agent && { resource: agent, organization: agent.organization };
});

/** The live view of agents: the Durable Object's status and last ping where it has them. */
type LiveStatuses = Awaited<ReturnType<AgentPool["statuses"]>>;

/** An `agents` resource (HCP's shape, plus the engine the agent runs). */
function serializeAgent(row: AgentRow, live: LiveStatuses) {
  const now = live[row.id];
  const lastPingAt = Math.max(now?.lastPingAt ?? 0, row.lastPingAt);
  return {
    id: row.id,
    type: "agents",
    attributes: {
      name: row.name,
      status: (now?.status ?? row.status) as AgentStatus,
      "ip-address": row.ipAddress,
      "last-ping-at": isoTime(lastPingAt),
      "engine-name": row.engineName,
      "engine-version": row.engineVersion,
      "agent-version": row.version,
    },
    relationships: { "agent-pool": { data: { id: row.poolId, type: "agent-pools" } } },
    links: { self: `/api/v2/agents/${row.id}` },
  };
}

const agentAnswer = resourceAnswer(
  "agents",
  {
    name: v.string(),
    status: v.picklist(["idle", "busy", "unknown", "errored", "exited"]),
    "ip-address": orNull(v.string()),
    "last-ping-at": timestamp,
    "engine-name": v.string(),
    "engine-version": v.string(),
    "agent-version": v.string(),
  },
  { "agent-pool": toOneAnswer("agent-pools") },
);

const poolTokenCreate = operation({
  tag: "agent-pools",
  summary: "Create an agent token of a pool (manage-agent-pools: N17); the token is shown only here",
  body: optionalResourceDocument({
    types: ["authentication-tokens", "authentication-token"],
    attributes: { description: tokenDescriptionAttribute },
  }),
  answers: { 201: { description: "The new agent token", schema: tokenAnswer } },
});

agentRoutes.post(
  "/agent-pools/:id/authentication-tokens",
  rights({ right: "manage-agent-pools" }, { scope: agentPoolById }),
  poolTokenCreate,
  async (c) => {
    const db = c.var.db;
    const pool = agentPoolById.of(c);
    const description = (await poolTokenCreate.body(c)).data?.attributes?.description ?? null;
    const { token, row } = await issueToken(
      c.env,
      db,
      { kind: "agent", poolId: pool.id, organization: pool.organization },
      description,
    );
    // N18: the pool's Durable Object caches its token hashes; it learns of this one now.
    await poolStub(c.env, pool.id).tokenAdded(await hashNocodeToken(c.env, token), row.id);
    return jsonApi(serializeToken(row, token), 201);
  },
);

const poolTokenList = operation({
  tag: "agent-pools",
  summary: "List a pool's agent tokens, newest first (manage-agent-pools: N17)",
  query: pageQuery,
  answers: {
    200: { description: "One page of agent tokens (never the secrets)", schema: pagedList(tokenResourceAnswer) },
  },
});

agentRoutes.get(
  "/agent-pools/:id/authentication-tokens",
  rights({ right: "manage-agent-pools" }, { scope: agentPoolById }),
  poolTokenList,
  async (c) => {
    const db = c.var.db;
    const pool = agentPoolById.of(c);
    const page = pageOf(poolTokenList.query(c));
    const listed = await listPoolTokens(db, pool.id, page);
    return jsonApiPage(c.req.url, page, listed, (row) => serializeToken(row, null).data);
  },
);

const LAST_PING_SINCE = "filter[last-ping-since] must be an ISO 8601 date and time";

const agentList = operation({
  tag: "agent-pools",
  summary: "List a pool's agents with their live status (members: N17)",
  query: v.looseObject({
    ...pageParameters,
    "filter[last-ping-since]": v.optional(
      v.pipe(
        v.string(LAST_PING_SINCE),
        v.transform((raw) => Date.parse(raw)),
        v.check((at) => Number.isFinite(at), LAST_PING_SINCE),
      ),
    ),
  }),
  answers: { 200: { description: "One page of agents", schema: pagedList(agentAnswer) } },
});

agentRoutes.get(
  "/agent-pools/:id/agents",
  rights({ right: "member" }, { scope: agentPoolById }),
  agentList,
  async (c) => {
    const db = c.var.db;
    const pool = agentPoolById.of(c);
    const query = agentList.query(c);
    const page = pageOf(query);
    const since = query["filter[last-ping-since]"];
    const [listed, live] = await Promise.all([
      listPoolAgents(db, pool.id, page, since),
      poolStub(c.env, pool.id).statuses(),
    ]);
    return jsonApiPage(c.req.url, page, listed, (row) => serializeAgent(row, live));
  },
);

const agentShow = operation({
  tag: "agent-pools",
  summary: "Show an agent with its live status (members: N17)",
  answers: { 200: { description: "The agent", schema: single(agentAnswer) } },
});

agentRoutes.get("/agents/:id", rights({ right: "member" }, { scope: agentById }), agentShow, async (c) => {
  const agent = agentById.of(c);
  const live = await poolStub(c.env, agent.poolId).statuses();
  return jsonApi({ data: serializeAgent(agent, live) });
});

const agentDelete = operation({
  tag: "agent-pools",
  summary: "Remove an agent: its session ends at once and its job is canceled (manage-agent-pools: N17)",
  answers: { 204: { description: "Removed" } },
});

agentRoutes.delete(
  "/agents/:id",
  rights({ right: "manage-agent-pools" }, { scope: agentById }),
  agentDelete,
  async (c) => {
    const db = c.var.db;
    const agent = agentById.of(c);
    await poolStub(c.env, agent.poolId).removeAgent(agent.id);
    await deleteAgent(db, agent.id);
    return noContent();
  },
);
