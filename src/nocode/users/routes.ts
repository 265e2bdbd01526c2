/**
 * `POST /admin/users` (ADMIN_TOKEN; HCP has no such endpoint), `GET /account/details`
 * (a user token), `POST /users/:id/authentication-tokens` (ADMIN_TOKEN or that user) —
 * decisions N9, N10.
 */
import { eq } from "drizzle-orm";
import { Hono } from "hono";
import { createDb } from "../../db/client";
import { nocodeUsers } from "../../db/schema";
import type { NocodeEnv } from "../app";
import { invalidAttribute, notFound } from "../errors";
import { newId } from "../ids";
import { EMAIL } from "../organizations/routes";
import { FieldErrors, isUniqueViolation, readResource } from "../organizations/jsonapi";
import { jsonApi } from "../respond";
import { findUser, type UserRow } from "./repo";
import { serializeUser } from "./serialize";
import { issueToken, serializeToken } from "./tokens";
import { rights } from "../route-rights";

/** Usernames: letters, digits, `-` and `_`, at most 64 characters (our choice). */
export const USERNAME = /^[A-Za-z0-9_-]+$/;
export const USERNAME_MAX = 64;
/** Longest token description we store. */
export const TOKEN_DESCRIPTION_MAX = 256;

export const userRoutes = new Hono<NocodeEnv>();

userRoutes.post("/admin/users", rights({ caller: "admin" }), async (c) => {
  if (c.var.caller.kind !== "admin") throw notFound();
  const input = await readResource(c.req.raw, ["users", "user"]);
  const errors = new FieldErrors();
  const username = errors.required(input.attributes, "username");
  const email = errors.required(input.attributes, "email");
  if (username !== undefined) {
    if (username.length > USERNAME_MAX) errors.add("username", `Username is too long (maximum is ${USERNAME_MAX} characters)`);
    else if (!USERNAME.test(username)) errors.add("username", "Username may only contain letters, numbers, dashes (-), and underscores (_)");
  }
  if (email !== undefined && !EMAIL.test(email)) errors.add("email", "Email is invalid");
  errors.throwIfAny();

  const db = createDb(c.env.DB);
  const taken = () => invalidAttribute("username", "Username has already been taken");
  if (await db.select({ id: nocodeUsers.id }).from(nocodeUsers).where(eq(nocodeUsers.username, username!)).get()) throw taken();
  const user: UserRow = { id: newId("user"), username: username!, email: email!, createdAt: Date.now() };
  try {
    await db.insert(nocodeUsers).values(user);
  } catch (err) {
    if (isUniqueViolation(err)) throw taken();
    throw err;
  }
  return jsonApi(serializeUser(user, { showEmail: true, self: false }), 201);
});

userRoutes.get("/account/details", rights({ caller: "user" }), async (c) => {
  const caller = c.var.caller;
  if (caller.kind !== "user") throw notFound();
  const user = await findUser(createDb(c.env.DB), caller.userId);
  if (!user) throw notFound();
  return jsonApi(serializeUser(user, { showEmail: true, self: true }));
});

userRoutes.post("/users/:id/authentication-tokens", rights({ caller: "user-self" }), async (c) => {
  const db = createDb(c.env.DB);
  const user = await findUser(db, c.req.param("id"));
  const caller = c.var.caller;
  // N9: ADMIN_TOKEN or that user; anyone else gets 404 as if the user did not exist (N10).
  if (!user || !(caller.kind === "admin" || (caller.kind === "user" && caller.userId === user.id))) throw notFound();
  const input = await readResource(c.req.raw, ["authentication-tokens", "authentication-token"], { optional: true });
  const errors = new FieldErrors();
  const description = errors.string(input.attributes, "description", { nullable: true });
  if (typeof description === "string" && description.length > TOKEN_DESCRIPTION_MAX) {
    errors.add("description", `Description is too long (maximum is ${TOKEN_DESCRIPTION_MAX} characters)`);
  }
  // Expiring tokens are not implemented; refuse rather than issue a token that outlives its request.
  const expiredAt = input.attributes["expired-at"];
  if (expiredAt !== undefined && expiredAt !== null) errors.add("expired-at", "Expired at is not supported: tokens do not expire");
  errors.throwIfAny();
  const { token, row } = await issueToken(c.env, db, { kind: "user", userId: user.id }, description ?? null);
  return jsonApi(serializeToken(row, token), 201);
});
