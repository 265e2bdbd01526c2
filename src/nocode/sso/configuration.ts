/**
 * An organization's single sign-on configuration (decision N16): reading it (defaults when
 * none was written) and applying a PATCH — the merge, the rules between attributes, the
 * discovery fetch when the result is enabled, and the generation that ends open SSO
 * sessions when `issuer`, `client-id` or `enabled` changes.
 */

import type { Db } from "../../db/client";
import { checkFetchableUrl } from "../../lib/net/bounded-fetch";
import { type DiscoveredProvider, discoverProvider } from "../../lib/oidc/discovery";
import { OWNERS_TEAM } from "../access/permissions";
import { invalidAttribute, unprocessable } from "../errors";
import {
  encryptClientSecret,
  findSsoConfiguration,
  findTeamByName,
  type SsoConfigurationRow,
  saveSsoConfiguration,
} from "./repo";

/** Longest accepted values (our bounds; N16 names none). */
export const MAX_ISSUER_LENGTH = 2048;
export const MAX_CLIENT_ID_LENGTH = 256;
export const MAX_CLIENT_SECRET_LENGTH = 1024;
export const MAX_CLAIM_NAME_LENGTH = 256;

/** The configuration of an organization that never wrote one. */
export function defaultConfiguration(organization: string): SsoConfigurationRow {
  return {
    organization,
    enabled: false,
    issuer: null,
    clientId: null,
    clientSecretEncrypted: null,
    groupsClaim: null,
    autoProvision: false,
    defaultTeam: null,
    teamSync: false,
    discovered: null,
    generation: 1,
    updatedAt: 0,
  };
}

/** The stored configuration, or the defaults. */
export async function readConfiguration(db: Db, organization: string): Promise<SsoConfigurationRow> {
  return (await findSsoConfiguration(db, organization)) ?? defaultConfiguration(organization);
}

/** A PATCH's attributes, as validated: absent → unchanged, null → cleared. */
export interface ConfigurationPatch {
  enabled?: boolean;
  issuer?: string | null;
  clientId?: string | null;
  clientSecret?: string | null;
  groupsClaim?: string | null;
  autoProvision?: boolean;
  defaultTeam?: string | null;
  teamSync?: boolean;
}

/** "" reads as null (a cleared field). */
const orNull = (value: string | null | undefined): string | null =>
  value === "" || value === undefined ? null : value;

/**
 * Apply a PATCH and store the result. 422 for a rule it breaks (nothing is stored then):
 * an unusable issuer URL, `default-team` not a team of the organization or `owners`,
 * `auto-provision` without `default-team`, `team-sync` without `groups-claim`, and
 * `enabled: true` without the client fields or with a discovery document that cannot be read.
 */
export async function updateConfiguration(
  env: Pick<Env, "KEYWAY_KEK">,
  db: Db,
  organization: string,
  patch: ConfigurationPatch,
): Promise<SsoConfigurationRow> {
  const current = await readConfiguration(db, organization);
  const next: SsoConfigurationRow = { ...current, updatedAt: Date.now() };
  if (patch.enabled !== undefined) next.enabled = patch.enabled;
  if (patch.issuer !== undefined) next.issuer = orNull(patch.issuer?.trim());
  if (patch.clientId !== undefined) next.clientId = orNull(patch.clientId);
  if (patch.groupsClaim !== undefined) next.groupsClaim = orNull(patch.groupsClaim);
  if (patch.autoProvision !== undefined) next.autoProvision = patch.autoProvision;
  if (patch.defaultTeam !== undefined) next.defaultTeam = orNull(patch.defaultTeam);
  if (patch.teamSync !== undefined) next.teamSync = patch.teamSync;

  if (next.issuer !== null) {
    if (next.issuer.length > MAX_ISSUER_LENGTH)
      throw invalidAttribute("issuer", `Issuer is too long (maximum is ${MAX_ISSUER_LENGTH} characters)`);
    // S25: https://, or http:// to a loopback host.
    const bad = checkFetchableUrl(next.issuer);
    if (bad !== null) throw invalidAttribute("issuer", `Issuer ${bad}`);
  }
  if (next.clientId !== null && next.clientId.length > MAX_CLIENT_ID_LENGTH)
    throw invalidAttribute("client-id", `Client id is too long (maximum is ${MAX_CLIENT_ID_LENGTH} characters)`);
  if (
    patch.clientSecret !== undefined &&
    patch.clientSecret !== null &&
    patch.clientSecret.length > MAX_CLIENT_SECRET_LENGTH
  )
    throw invalidAttribute(
      "client-secret",
      `Client secret is too long (maximum is ${MAX_CLIENT_SECRET_LENGTH} characters)`,
    );
  if (next.groupsClaim !== null && next.groupsClaim.length > MAX_CLAIM_NAME_LENGTH)
    throw invalidAttribute("groups-claim", `Groups claim is too long (maximum is ${MAX_CLAIM_NAME_LENGTH} characters)`);
  if (next.defaultTeam !== null) {
    if (next.defaultTeam === OWNERS_TEAM)
      throw invalidAttribute("default-team", "Default team cannot be the owners team");
    if (!(await findTeamByName(db, organization, next.defaultTeam)))
      throw invalidAttribute("default-team", "Default team must be a team of the organization");
  }
  if (next.autoProvision && next.defaultTeam === null)
    throw invalidAttribute("default-team", "Default team is required when auto-provision is true");
  if (next.teamSync && next.groupsClaim === null)
    throw invalidAttribute("groups-claim", "Groups claim is required when team-sync is true");

  const secretChanged = patch.clientSecret !== undefined;
  const hasSecret = secretChanged ? orNull(patch.clientSecret) !== null : current.clientSecretEncrypted !== null;
  const issuerChanged = next.issuer !== current.issuer;
  if (next.enabled) {
    if (next.issuer === null) throw invalidAttribute("issuer", "Issuer is required when SSO is enabled");
    if (next.clientId === null) throw invalidAttribute("client-id", "Client id is required when SSO is enabled");
    if (!hasSecret) throw invalidAttribute("client-secret", "Client secret is required when SSO is enabled");
    // N16: enabling, or moving an enabled configuration to another issuer, reads discovery.
    if (patch.enabled === true || issuerChanged || next.discovered === null) {
      let discovered: DiscoveredProvider;
      try {
        discovered = await discoverProvider(next.issuer);
      } catch (err) {
        throw unprocessable(`Issuer: the discovery document could not be read: ${(err as Error).message}`);
      }
      if (!discovered.authorizationEndpoint || !discovered.tokenEndpoint)
        throw unprocessable("Issuer: the discovery document names no authorization or token endpoint");
      for (const endpoint of [
        discovered.authorizationEndpoint,
        discovered.tokenEndpoint,
        discovered.userinfoEndpoint,
      ]) {
        const bad = endpoint === "" ? null : checkFetchableUrl(endpoint);
        if (bad !== null) throw unprocessable(`Issuer: the discovery document's endpoint ${bad}`);
      }
      next.discovered = JSON.stringify(discovered);
    }
  }
  if (issuerChanged) {
    // Endpoints read for another issuer are never used for this one.
    if (!next.enabled) next.discovered = null;
  }
  if (secretChanged) {
    const secret = orNull(patch.clientSecret);
    next.clientSecretEncrypted = secret === null ? null : await encryptClientSecret(env, organization, secret);
  }
  // N16: a new issuer, client or on/off state ends every open SSO session of the organization.
  if (issuerChanged || next.clientId !== current.clientId || next.enabled !== current.enabled) {
    next.generation = current.generation + 1;
  }
  await saveSsoConfiguration(db, next);
  return next;
}
