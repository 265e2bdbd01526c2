/**
 * `POST /admin/users` (ADMIN_TOKEN; HCP has no such endpoint), `GET /account/details`
 * (a user token), `POST|GET /users/:id/authentication-tokens` (ADMIN_TOKEN or that user),
 * `GET|DELETE /authentication-tokens/:id` (N13; HCP's shapes) — decisions N9, N10, N13.
 */
import { Hono } from "hono";
import { insertUnique } from "../../db/unique";
import { tellPoolTokenRevoked } from "../agent-pools/job-queue";
import type { NocodeEnv } from "../env";
import { invalidAttribute, notFound } from "../errors";
import { newId } from "../ids";
import { emailAttribute } from "../organizations/routes";
import { pagedList } from "../request/answers";
import { optionalResourceDocument, requiredPlainName, resourceDocument } from "../request/document";
import { operation } from "../request/operation";
import { pageOf, pageQuery } from "../request/query";
import { jsonApi, jsonApiPage, noContent } from "../respond";
import { rights, scope } from "../route-rights";
import { findTeam } from "../teams/repo";
import {
  findTokenById,
  issueToken,
  listUserTokens,
  revokeTokenById,
  serializeToken,
  type TokenRow,
  tokenAnswer,
  tokenCreateAttributes,
  tokenDescriptionAttribute,
  tokenResourceAnswer,
} from "../tokens/api-tokens";
import { findUser, insertUser, type UserRow, usernameTaken } from "./repo";
import { serializeUser, userAnswer } from "./serialize";

/** Usernames: letters, digits, `-` and `_`, at most 64 characters (our choice). */
export const USERNAME_MAX = 64;

export const userRoutes = new Hono<NocodeEnv>();

const userCreate = operation({
  tag: "users",
  summary: "Create a user (ADMIN_TOKEN; HCP has no such endpoint: N9)",
  body: resourceDocument({
    types: ["users", "user"],
    attributes: {
      username: requiredPlainName("username", USERNAME_MAX),
      email: emailAttribute,
    },
  }),
  answers: { 201: { description: "The user", schema: userAnswer } },
});

userRoutes.post("/admin/users", rights({ caller: "admin" }), userCreate, async (c) => {
  const { username, email } = (await userCreate.body(c)).data.attributes;

  const db = c.var.db;
  const taken = () => invalidAttribute("username", "Username has already been taken");
  if (await usernameTaken(db, username)) throw taken();
  const user: UserRow = { id: newId("user"), username: username, email, createdAt: Date.now() };
  await insertUnique(insertUser(db, user), taken);
  return jsonApi(serializeUser(user, { showEmail: true, self: false }), 201);
});

const accountDetails = operation({
  tag: "users",
  summary: "The calling user's account (a user token)",
  answers: { 200: { description: "The user", schema: userAnswer } },
});

userRoutes.get("/account/details", rights({ caller: "user" }), accountDetails, async (c) => {
  const caller = c.var.caller;
  // rights({ caller: "user" }) let only a user token through.
  const user = caller.kind === "user" ? await findUser(c.var.db, caller.userId) : undefined;
  if (!user) throw notFound();
  return jsonApi(serializeUser(user, { showEmail: true, self: true }));
});

/** The user `:id`: that user or ADMIN_TOKEN may use it; anyone else gets 404 as if it did not exist (N9, N10). */
const userById = scope(async (c) => {
  const user = await findUser(c.var.db, c.req.param("id") ?? "");
  return user && { resource: user, user: user.id };
});

const userTokenCreate = operation({
  tag: "users",
  summary: "Create a user token (that user or ADMIN_TOKEN: N9, N13)",
  body: optionalResourceDocument({
    types: ["authentication-tokens", "authentication-token"],
    attributes: {
      ...tokenCreateAttributes,
      description: tokenDescriptionAttribute,
    },
  }),
  answers: { 201: { description: "The new token; `token` is shown only here", schema: tokenAnswer } },
});

userRoutes.post(
  "/users/:id/authentication-tokens",
  rights({ caller: "user-self" }, { scope: userById }),
  userTokenCreate,
  async (c) => {
    const db = c.var.db;
    const user = userById.of(c);
    const attributes = (await userTokenCreate.body(c)).data?.attributes;
    const description = attributes?.description;
    const expiredAt = attributes?.["expired-at"] ?? null;
    const { token, row } = await issueToken(
      c.env,
      db,
      { kind: "user", userId: user.id },
      description ?? null,
      expiredAt,
    );
    return jsonApi(serializeToken(row, token), 201);
  },
);

const userTokenList = operation({
  tag: "users",
  summary: "List a user's tokens, newest first (that user or ADMIN_TOKEN: N13)",
  query: pageQuery,
  answers: { 200: { description: "One page of tokens (never the secrets)", schema: pagedList(tokenResourceAnswer) } },
});

userRoutes.get(
  "/users/:id/authentication-tokens",
  rights({ caller: "user-self" }, { scope: userById }),
  userTokenList,
  async (c) => {
    const db = c.var.db;
    const user = userById.of(c);
    const page = pageOf(userTokenList.query(c));
    const listed = await listUserTokens(db, user.id, page);
    return jsonApiPage(c.req.url, page, listed, (row) => serializeToken(row, null).data);
  },
);

/**
 * The token `:id` and who may see and revoke it (N13): a user token — that user or
 * ADMIN_TOKEN; a team token — whoever may manage the team's tokens (N10a); the
 * organization token — ADMIN_TOKEN, owners, or the organization token (`manage-teams`);
 * an agent token (N17) — `manage-agent-pools` in its pool's organization.
 */
const tokenById = scope<TokenRow>(async (c) => {
  const db = c.var.db;
  const row = await findTokenById(db, c.req.param("id") ?? "");
  if (!row) return undefined;
  switch (row.kind) {
    case "user": {
      const user = await findUser(db, row.subjectId);
      return user && { resource: row, user: user.id };
    }
    case "team": {
      const team = await findTeam(db, row.subjectId);
      return team && { resource: row, team };
    }
    case "organization":
      return { resource: row, organization: row.subjectId, right: "manage-teams" };
    case "agent":
      return row.organization === null
        ? undefined
        : { resource: row, organization: row.organization, right: "manage-agent-pools" };
  }
});

const tokenShow = operation({
  tag: "users",
  summary: "Show a token, never its secret (N13)",
  answers: { 200: { description: "The token", schema: tokenAnswer } },
});

userRoutes.get(
  "/authentication-tokens/:id",
  rights({ caller: "user-self" }, { scope: tokenById }),
  tokenShow,
  async (c) => jsonApi(serializeToken(tokenById.of(c), null)),
);

const tokenDelete = operation({
  tag: "users",
  summary: "Revoke a token (N13)",
  answers: { 204: { description: "Revoked" } },
});

userRoutes.delete(
  "/authentication-tokens/:id",
  rights({ caller: "user-self" }, { scope: tokenById }),
  tokenDelete,
  async (c) => {
    const db = c.var.db;
    const row = tokenById.of(c);
    // A concurrent revoke of the same token leaves nothing to delete: 404, as for an unknown id.
    if (!(await revokeTokenById(db, row.id))) throw notFound();
    // N17: the pool's sessions opened with an agent token end at once.
    if (row.kind === "agent") await tellPoolTokenRevoked(c.env, row.subjectId, row.id);
    return noContent();
  },
);
