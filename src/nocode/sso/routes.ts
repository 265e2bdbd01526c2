/**
 * `GET|PATCH /organizations/:org/sso-configuration` (decision N16, a Keyway extension):
 * an organization's single sign-on for the console. Only owners (members of the `owners`
 * team with their user tokens, and the owners team's token) hold the `owner` right that
 * both need; the organization token and everyone else get 404 (N2, N10). The client
 * secret is write-only; `redirect-uri` is read-only (sent, it is ignored).
 */
import { Hono } from "hono";
import * as v from "valibot";
import type { NocodeEnv } from "../env";
import { flag, nullableText, resourceDocument } from "../request/document";
import { operation } from "../request/operation";
import { jsonApi } from "../respond";
import { rights } from "../route-rights";
import { readConfiguration, updateConfiguration } from "./configuration";
import { serializeSsoConfiguration, ssoConfigurationAnswer } from "./serialize";

export const ssoConfigurationRoutes = new Hono<NocodeEnv>();

ssoConfigurationRoutes.get(
  "/organizations/:org/sso-configuration",
  rights({ right: "owner" }),
  operation({
    tag: "organizations",
    summary: "Show the organization's single sign-on configuration (owners only: N16)",
    answers: {
      200: { description: "The configuration; the client secret is never shown", schema: ssoConfigurationAnswer },
    },
  }),
  async (c) => {
    const org = c.req.param("org");
    return jsonApi(serializeSsoConfiguration(await readConfiguration(c.var.db, org), new URL(c.req.url).origin));
  },
);

const ssoConfigurationUpdate = operation({
  tag: "organizations",
  summary: "Change the organization's single sign-on configuration (owners only: N16)",
  body: resourceDocument({
    types: ["sso-configurations", "sso-configuration"],
    attributes: {
      enabled: flag("enabled"),
      issuer: nullableText("issuer"),
      "client-id": nullableText("client-id"),
      "client-secret": nullableText("client-secret"),
      "groups-claim": nullableText("groups-claim"),
      "auto-provision": flag("auto-provision"),
      "default-team": nullableText("default-team"),
      "team-sync": flag("team-sync"),
      // Read-only: accepted so a document read with GET can be sent back, and ignored.
      "redirect-uri": v.optional(v.unknown()),
    },
  }),
  answers: { 200: { description: "The configuration as stored", schema: ssoConfigurationAnswer } },
});

ssoConfigurationRoutes.patch(
  "/organizations/:org/sso-configuration",
  rights({ right: "owner" }),
  ssoConfigurationUpdate,
  async (c) => {
    const org = c.req.param("org");
    const a = (await ssoConfigurationUpdate.body(c)).data.attributes;
    const stored = await updateConfiguration(c.env, c.var.db, org, {
      enabled: a.enabled,
      issuer: a.issuer,
      clientId: a["client-id"],
      clientSecret: a["client-secret"],
      groupsClaim: a["groups-claim"],
      autoProvision: a["auto-provision"],
      defaultTeam: a["default-team"],
      teamSync: a["team-sync"],
    });
    return jsonApi(serializeSsoConfiguration(stored, new URL(c.req.url).origin));
  },
);
