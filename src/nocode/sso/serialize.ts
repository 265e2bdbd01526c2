/** The `sso-configurations` resource (decision N16; a Keyway extension, not HCP's `oidc-configurations`). */
import * as v from "valibot";
import { orNull, resourceAnswer, single } from "../request/answers";
import type { SsoConfigurationRow } from "./repo";

/** N16: the callback the provider must be configured with. */
export function ssoRedirectUri(origin: string, organization: string): string {
  return `${origin}/app/~/sso/${encodeURIComponent(organization)}/callback`;
}

/** Serialize a configuration; the client secret is write-only and never rendered. */
export function serializeSsoConfiguration(row: SsoConfigurationRow, origin: string) {
  return {
    data: {
      id: row.organization,
      type: "sso-configurations",
      attributes: {
        enabled: row.enabled,
        issuer: row.issuer,
        "client-id": row.clientId,
        "groups-claim": row.groupsClaim,
        "auto-provision": row.autoProvision,
        "default-team": row.defaultTeam,
        "team-sync": row.teamSync,
        "redirect-uri": ssoRedirectUri(origin, row.organization),
      },
      links: { self: `/api/v2/organizations/${encodeURIComponent(row.organization)}/sso-configuration` },
    },
  };
}

/** B14: the document serializeSsoConfiguration renders. */
export const ssoConfigurationAnswer = single(
  resourceAnswer("sso-configurations", {
    enabled: v.boolean(),
    issuer: orNull(v.string()),
    "client-id": orNull(v.string()),
    "groups-claim": orNull(v.string()),
    "auto-provision": v.boolean(),
    "default-team": orNull(v.string()),
    "team-sync": v.boolean(),
    "redirect-uri": v.string(),
  }),
);
