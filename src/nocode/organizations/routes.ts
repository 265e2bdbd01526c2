/**
 * `POST /organizations` (ADMIN_TOKEN), `GET /organizations/:org` (members),
 * `POST|DELETE /organizations/:org/authentication-token` (ADMIN_TOKEN, owners, or the
 * organization token) — decisions N9, N10.
 */
import { Hono } from "hono";
import { createDb } from "../../db/client";
import { isUniqueViolation } from "../../db/errors";
import type { NocodeEnv } from "../env";
import { invalidAttribute, notFound } from "../errors";
import { hasOrgPermission, orgCallerPermissions } from "../permissions";
import { jsonApi, noContent } from "../respond";
import { issueToken, readExpiredAt, revokeToken, serializeToken } from "../api-tokens";
import { FieldErrors, readResource } from "../jsonapi";
import { createOrganization, findOrganization, ownersTeamId } from "./repo";
import { serializeOrganization } from "./serialize";
import { rights } from "../route-rights";

/** Organization names: letters, digits, `-` and `_`, at most 64 characters (our choice; HCP does not publish its rule). */
export const ORGANIZATION_NAME = /^[A-Za-z0-9_-]+$/;
export const ORGANIZATION_NAME_MAX = 64;
/** A plain `local@domain` address; enough to refuse obvious mistakes. */
export const EMAIL = /^[^\s@]+@[^\s@]+$/;

export const organizationRoutes = new Hono<NocodeEnv>();

organizationRoutes.post("/organizations", rights({ caller: "admin" }), async (c) => {
  // N9, N10: only ADMIN_TOKEN creates organizations.
  if (c.var.caller.kind !== "admin") throw notFound();
  const input = await readResource(c.req.raw, ["organizations", "organization"]);
  const errors = new FieldErrors();
  const name = errors.required(input.attributes, "name");
  const email = errors.required(input.attributes, "email");
  if (name !== undefined) {
    if (name.length > ORGANIZATION_NAME_MAX) errors.add("name", `Name is too long (maximum is ${ORGANIZATION_NAME_MAX} characters)`);
    else if (!ORGANIZATION_NAME.test(name)) errors.add("name", "Name may only contain letters, numbers, dashes (-), and underscores (_)");
  }
  if (email !== undefined && !EMAIL.test(email)) errors.add("email", "Email is invalid");
  errors.throwIfAny();

  const db = createDb(c.env.DB);
  const taken = () => invalidAttribute("name", "Name has already been taken");
  if (await findOrganization(db, name!)) throw taken();
  let created: Awaited<ReturnType<typeof createOrganization>>;
  try {
    created = await createOrganization(db, { name: name!, email: email! });
  } catch (err) {
    if (isUniqueViolation(err)) throw taken();
    throw err;
  }
  // The admin has no organization rights (N10); the owners team id lets it bootstrap.
  return jsonApi(serializeOrganization(created.organization, { ownersTeamId: created.ownersTeamId, permissions: new Set() }), 201);
});

organizationRoutes.get("/organizations/:org", rights({ right: "member" }), async (c) => {
  const db = createDb(c.env.DB);
  const name = c.req.param("org");
  const permissions = await orgCallerPermissions(db, c.var.caller, name);
  // N10: any member may read the organization; everyone else (ADMIN_TOKEN too) gets 404.
  if (!permissions.has("member")) throw notFound();
  const org = await findOrganization(db, name);
  if (!org) throw notFound();
  return jsonApi(serializeOrganization(org, { ownersTeamId: await ownersTeamId(db, name), permissions }));
});

/** N9: the organization token may be (re)issued by ADMIN_TOKEN, an owner, or the organization token. */
async function requireTokenManager(c: { env: Env; var: NocodeEnv["Variables"] }, organization: string) {
  const db = createDb(c.env.DB);
  const org = await findOrganization(db, organization);
  if (!org) throw notFound();
  if (!(await hasOrgPermission(db, c.var.caller, organization, "manage-teams"))) throw notFound();
  return db;
}

organizationRoutes.post("/organizations/:org/authentication-token", rights({ right: "manage-teams" }), async (c) => {
  const organization = c.req.param("org");
  const db = await requireTokenManager(c, organization);
  // The body is optional (HCP sends none); when present it must be a JSON:API document.
  const input = await readResource(c.req.raw, ["authentication-tokens", "authentication-token"], { optional: true });
  const errors = new FieldErrors();
  const expiredAt = readExpiredAt(errors, input.attributes, Date.now());
  errors.throwIfAny();
  const { token, row } = await issueToken(c.env, db, { kind: "organization", organization }, null, expiredAt);
  return jsonApi(serializeToken(row, token), 201);
});

organizationRoutes.delete("/organizations/:org/authentication-token", rights({ right: "manage-teams" }), async (c) => {
  const organization = c.req.param("org");
  const db = await requireTokenManager(c, organization);
  if (!(await revokeToken(db, "organization", organization))) throw notFound();
  return noContent();
});
