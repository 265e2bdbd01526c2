/**
 * `POST /organizations` (ADMIN_TOKEN), `GET /organizations/:org` (members),
 * `POST|DELETE /organizations/:org/authentication-token` (ADMIN_TOKEN, owners, or the
 * organization token) — decisions N9, N10.
 */
import { Hono } from "hono";
import * as v from "valibot";
import { insertUnique } from "../../db/unique";
import type { NocodeEnv } from "../env";
import { invalidAttribute, notFound } from "../errors";
import { optionalResourceDocument, requiredPlainName, requiredText, resourceDocument } from "../request/document";
import { operation } from "../request/operation";
import { jsonApi, noContent } from "../respond";
import { rights } from "../route-rights";
import { issueToken, revokeToken, serializeToken, tokenAnswer, tokenCreateAttributes } from "../tokens/api-tokens";
import { createOrganization, findOrganization, ownersTeamId } from "./repo";
import { organizationAnswer, serializeOrganization } from "./serialize";

/** Organization names: letters, digits, `-` and `_`, at most 64 characters (our choice; HCP does not publish its rule). */
export const ORGANIZATION_NAME_MAX = 64;
/**
 * Names the console's own pages use as the first segment under `/app` (N16:
 * `/app/settings/tokens`, HCP's path), so no organization may take them, in any case.
 */
const RESERVED_ORGANIZATION_NAMES = new Set(["settings"]);
/** A plain `local@domain` address; enough to refuse obvious mistakes. */
const EMAIL = /^[^\s@]+@[^\s@]+$/;

/** The required `email` of an organization or a user. */
export const emailAttribute = v.pipe(requiredText("email"), v.regex(EMAIL, "Email is invalid"));

export const organizationRoutes = new Hono<NocodeEnv>();

const organizationCreate = operation({
  tag: "organizations",
  summary: "Create an organization (ADMIN_TOKEN only: N9, N10)",
  body: resourceDocument({
    types: ["organizations", "organization"],
    attributes: {
      name: v.pipe(
        requiredPlainName("name", ORGANIZATION_NAME_MAX),
        v.check((name) => !RESERVED_ORGANIZATION_NAMES.has(name.toLowerCase()), "Name is reserved"),
      ),
      email: emailAttribute,
    },
  }),
  answers: { 201: { description: "The organization, with its owners team", schema: organizationAnswer } },
});

organizationRoutes.post("/organizations", rights({ caller: "admin" }), organizationCreate, async (c) => {
  // N9, N10: only ADMIN_TOKEN creates organizations (its rights rule).
  const { name, email } = (await organizationCreate.body(c)).data.attributes;

  const db = c.var.db;
  const taken = () => invalidAttribute("name", "Name has already been taken");
  if (await findOrganization(db, name)) throw taken();
  // Two creates of one name at once: the name's PRIMARY KEY keeps one.
  const created = await insertUnique(createOrganization(db, { name, email }), taken);
  // The admin has no organization rights (N10); the owners team id lets it bootstrap.
  return jsonApi(
    serializeOrganization(created.organization, { ownersTeamId: created.ownersTeamId, permissions: new Set() }),
    201,
  );
});

organizationRoutes.get(
  "/organizations/:org",
  rights({ right: "member" }),
  operation({
    tag: "organizations",
    summary: "Show an organization (members: N10)",
    answers: { 200: { description: "The organization; `permissions` are the caller's", schema: organizationAnswer } },
  }),
  async (c) => {
    const db = c.var.db;
    const name = c.req.param("org");
    // N10: any member may read the organization; everyone else (ADMIN_TOKEN too) got 404 from its rights.
    const permissions = c.var.orgRights;
    const org = await findOrganization(db, name);
    if (!org) throw notFound();
    return jsonApi(serializeOrganization(org, { ownersTeamId: await ownersTeamId(db, name), permissions }));
  },
);

/**
 * The organization whose token the route manages; N9: ADMIN_TOKEN, an owner or the
 * organization token may, which its rights rule (`manage-teams`) checked.
 */
async function tokenOrganization(c: { var: NocodeEnv["Variables"] }, organization: string) {
  const db = c.var.db;
  if (!(await findOrganization(db, organization))) throw notFound();
  return db;
}

const organizationTokenCreate = operation({
  tag: "organizations",
  summary: "Issue the organization token, replacing the previous one (N9)",
  // The body is optional (HCP sends none); when present it must be a JSON:API document.
  body: optionalResourceDocument({
    types: ["authentication-tokens", "authentication-token"],
    attributes: tokenCreateAttributes,
  }),
  answers: { 201: { description: "The new token; `token` is shown only here", schema: tokenAnswer } },
});

organizationRoutes.post(
  "/organizations/:org/authentication-token",
  rights({ right: "manage-teams" }),
  organizationTokenCreate,
  async (c) => {
    const organization = c.req.param("org");
    const db = await tokenOrganization(c, organization);
    const input = await organizationTokenCreate.body(c);
    const expiredAt = input.data?.attributes["expired-at"] ?? null;
    const { token, row } = await issueToken(c.env, db, { kind: "organization", organization }, null, expiredAt);
    return jsonApi(serializeToken(row, token), 201);
  },
);

const organizationTokenDelete = operation({
  tag: "organizations",
  summary: "Revoke the organization token (N9)",
  answers: { 204: { description: "Revoked" } },
});

organizationRoutes.delete(
  "/organizations/:org/authentication-token",
  rights({ right: "manage-teams" }),
  organizationTokenDelete,
  async (c) => {
    const organization = c.req.param("org");
    const db = await tokenOrganization(c, organization);
    if (!(await revokeToken(db, "organization", organization))) throw notFound();
    return noContent();
  },
);
