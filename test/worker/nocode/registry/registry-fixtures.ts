/**
 * Shared set-up of the registry tests: an organization with one caller of each kind that
 * decision N10 distinguishes, and request builders for modules, versions and uploads.
 */
import { env, exports } from "cloudflare:workers";
import {
  ADMIN,
  bootstrapOrg,
  createMember,
  createOrgToken,
  createTeam,
  createTeamToken,
  type TfeAnswer,
  tfe,
  uniqueName,
} from "../../../helpers/nocode";

/** Callers of one organization, one per kind N10 distinguishes, plus outsiders. */
export interface RegistryCallers {
  /** A user in `owners`. */
  owner: string;
  /** A user whose team has manage-modules. */
  manager: string;
  /** A user whose team has no organization access (a plain member). */
  member: string;
  /** The token of a team with manage-modules. */
  managerTeam: string;
  /** The token of a team without it. */
  memberTeam: string;
  /** The organization token. */
  organization: string;
  /** ADMIN_TOKEN: no organization rights (N10). */
  admin: string;
  /** The owner of another organization. */
  outsider: string;
}

export interface RegistryOrg {
  org: string;
  tokens: RegistryCallers;
}

/** Bootstrap an organization and one caller of each kind. */
export async function registryOrg(): Promise<RegistryOrg> {
  const { org, ownerToken } = await bootstrapOrg();
  const manager = await createMember(org, { "manage-modules": true });
  // Other rights, but not manage-modules: still only a reader of registry modules.
  const member = await createMember(org, { "manage-workspaces": true, "manage-projects": true });
  const managerTeam = await createTeamToken(await createTeam(org, { "manage-modules": true }));
  const memberTeam = await createTeamToken(await createTeam(org, { "read-workspaces": true }));
  const organization = await createOrgToken(org);
  const outsider = (await bootstrapOrg()).ownerToken;
  return {
    org,
    tokens: {
      owner: ownerToken,
      manager: manager.token,
      member: member.token,
      managerTeam,
      memberTeam,
      organization,
      admin: ADMIN,
      outsider,
    },
  };
}

/** A registry-modules create document. */
export function moduleDoc(name: string, provider = "aws", attributes: Record<string, unknown> = {}) {
  return {
    data: { type: "registry-modules", attributes: { name, provider, "registry-name": "private", ...attributes } },
  };
}

/** A registry-module-versions create document. */
export function versionDoc(version: string, attributes: Record<string, unknown> = {}) {
  return { data: { type: "registry-module-versions", attributes: { version, ...attributes } } };
}

/** Path of a module by address. */
export const modulePath = (org: string, name: string, provider = "aws") =>
  `organizations/${org}/registry-modules/private/${org}/${name}/${provider}`;

/** Path of a version read. */
export const versionPath = (org: string, name: string, version: string, provider = "aws") =>
  `${modulePath(org, name, provider)}/version?module_version=${encodeURIComponent(version)}`;

function expectStatus(answer: TfeAnswer, status: number, what: string): void {
  if (answer.status !== status) throw new Error(`${what}: expected ${status}, got ${answer.status} ${answer.text}`);
}

/** Create a module (as `token`) with a unique name; returns its id and name. */
export async function createModule(
  org: string,
  token: string,
  provider = "aws",
): Promise<{ id: string; name: string }> {
  const name = uniqueName("mod");
  const res = await tfe("POST", `organizations/${org}/registry-modules`, { token, body: moduleDoc(name, provider) });
  expectStatus(res, 201, "create module");
  return { id: res.json.data.id as string, name };
}

/** Create a version; returns its id and upload link. */
export async function createVersion(
  org: string,
  name: string,
  version: string,
  token: string,
  provider = "aws",
): Promise<{ id: string; upload: string }> {
  const res = await tfe("POST", `${modulePath(org, name, provider)}/versions`, { token, body: versionDoc(version) });
  expectStatus(res, 201, "create version");
  return { id: res.json.data.id as string, upload: res.json.data.links.upload as string };
}

/** `PUT <links.upload>` with a body and no Authorization header. */
export async function upload(
  link: string,
  body: BodyInit,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string }> {
  const res = await exports.default.fetch(link, {
    method: "PUT",
    headers: { "Content-Type": "application/octet-stream", ...headers },
    body,
  });
  return { status: res.status, text: await res.text() };
}

/** Read a version (as `token`). */
export async function readVersion(
  org: string,
  name: string,
  version: string,
  token: string,
  provider = "aws",
): Promise<TfeAnswer> {
  return tfe("GET", versionPath(org, name, version, provider), { token });
}

export { uniqueName };

/** Keys of the R2 objects stored for a version (B16: one per upload attempt, under the version's prefix). */
export async function storedObjects(moduleId: string, versionId: string): Promise<string[]> {
  const listed = await env.MODULES.list({ prefix: `registry-modules/${moduleId}/${versionId}` });
  return listed.objects.map((o) => o.key);
}

/** The R2 key a version records (B16: the only one ingestion, the download and runs read). */
export async function recordedTarballKey(versionId: string): Promise<string | null> {
  const row = await env.DB.prepare("SELECT tarball_key FROM registry_module_versions WHERE id = ?")
    .bind(versionId)
    .first<{ tarball_key: string | null }>();
  return row?.tarball_key ?? null;
}
