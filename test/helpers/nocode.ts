/**
 * Request builders for the no-code API (/api/v2), driving the Worker's app inside workerd
 * with its real bindings (see ./worker-request.ts), plus bootstrap helpers (N9) that
 * create an organization, users, teams and tokens through the public endpoints.
 */
import { env } from "cloudflare:workers";
import { workerRequest } from "./worker-request";

/** The site-admin token (N9: bootstrap endpoints and the release list only). */
export const ADMIN = env.ADMIN_TOKEN;

export interface TfeCall {
  /** Bearer token; default ADMIN_TOKEN; null sends none. */
  token?: string | null;
  /** JSON body (serialized, Content-Type application/vnd.api+json). */
  body?: unknown;
  /** A raw body sent as is (for malformed JSON and size limits). */
  rawBody?: BodyInit;
  headers?: Record<string, string>;
  /** Why this answer is deliberately outside the /api/v2 OpenAPI document (B14); skips that check. Keep rare. */
  outsideContract?: string;
}

export interface TfeAnswer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: test assertions walk arbitrary JSON
  json: any;
  text: string;
  headers: Headers;
}

/** Call /api/v2/<path> (path with or without the leading `/api/v2`). */
export async function tfe(method: string, path: string, call: TfeCall = {}): Promise<TfeAnswer> {
  const headers: Record<string, string> = { Accept: "application/vnd.api+json", ...call.headers };
  const token = call.token === undefined ? ADMIN : call.token;
  if (token !== null) headers["Authorization"] = `Bearer ${token}`;
  let body: BodyInit | undefined = call.rawBody;
  if (call.body !== undefined) body = JSON.stringify(call.body);
  if (body !== undefined && !Object.keys(headers).some((k) => k.toLowerCase() === "content-type")) {
    headers["Content-Type"] = "application/vnd.api+json";
  }
  const rel = path.replace(/^\/?(api\/v2\/?)?/, "");
  return workerRequest(
    `http://keyway.test/api/v2/${rel}`,
    { method, headers, body },
    { outsideContract: call.outsideContract },
  );
}

/** A unique lower-case name (letters, digits, `-`), usable for orgs, users, teams, projects. */
export function uniqueName(prefix = "n"): string {
  return `${prefix}-${crypto.randomUUID().replaceAll("-", "").slice(0, 10)}`;
}

function expectStatus(answer: TfeAnswer, status: number, what: string): void {
  if (answer.status !== status) throw new Error(`${what}: expected ${status}, got ${answer.status} ${answer.text}`);
}

/** Team organization-access flags (N9). */
export interface OrganizationAccess {
  "manage-workspaces"?: boolean;
  "manage-projects"?: boolean;
  "manage-modules"?: boolean;
  "manage-agent-pools"?: boolean;
  "read-workspaces"?: boolean;
  "read-projects"?: boolean;
}

export interface CreatedUser {
  id: string;
  username: string;
  token: string;
}

/** Create a user (ADMIN_TOKEN) and a user token for it. */
export async function createUser(username = uniqueName("user")): Promise<CreatedUser> {
  const created = await tfe("POST", "admin/users", {
    body: { data: { type: "users", attributes: { username, email: `${username}@example.test` } } },
  });
  expectStatus(created, 201, "create user");
  const id = created.json.data.id as string;
  const tok = await tfe("POST", `users/${id}/authentication-tokens`, {
    body: { data: { type: "authentication-tokens" } },
  });
  expectStatus(tok, 201, "create user token");
  return { id, username, token: tok.json.data.attributes.token as string };
}

/** Create a team in `org` (ADMIN_TOKEN unless `token` is given); returns its id. */
export async function createTeam(
  org: string,
  access: OrganizationAccess = {},
  options: { name?: string; token?: string } = {},
): Promise<string> {
  const created = await tfe("POST", `organizations/${org}/teams`, {
    token: options.token ?? ADMIN,
    body: {
      data: { type: "teams", attributes: { name: options.name ?? uniqueName("team"), "organization-access": access } },
    },
  });
  expectStatus(created, 201, "create team");
  return created.json.data.id as string;
}

/** Add users (by username) to a team (ADMIN_TOKEN unless `token` is given). */
export async function addTeamMembers(teamId: string, usernames: string[], token: string = ADMIN): Promise<void> {
  const res = await tfe("POST", `teams/${teamId}/relationships/users`, {
    token,
    body: { data: usernames.map((id) => ({ type: "users", id })) },
  });
  expectStatus(res, 204, "add team members");
}

/** Create (or replace) a team's token. */
export async function createTeamToken(teamId: string, token: string = ADMIN): Promise<string> {
  const res = await tfe("POST", `teams/${teamId}/authentication-token`, { token });
  expectStatus(res, 201, "create team token");
  return res.json.data.attributes.token as string;
}

/** Create (or replace) an organization's token. */
export async function createOrgToken(org: string, token: string = ADMIN): Promise<string> {
  const res = await tfe("POST", `organizations/${org}/authentication-token`, { token });
  expectStatus(res, 201, "create organization token");
  return res.json.data.attributes.token as string;
}

/** A member of `org` in a new team with the given access; returns the user and its team. */
export async function createMember(
  org: string,
  access: OrganizationAccess = {},
): Promise<CreatedUser & { teamId: string }> {
  const user = await createUser();
  const teamId = await createTeam(org, access);
  await addTeamMembers(teamId, [user.username]);
  return { ...user, teamId };
}

/** Tokens holding an organization's workspace rights, and the organization token (N10). */
export interface WorkspaceRightsTokens {
  /** A team with manage-workspaces. */
  manageTeam: string;
  /** A member of a team with manage-workspaces. */
  manageUser: string;
  /** A team with read-workspaces. */
  readTeam: string;
  orgToken: string;
}

/** Create the tokens of {@link WorkspaceRightsTokens} in `org`. */
export async function workspaceRightsTokens(org: string): Promise<WorkspaceRightsTokens> {
  return {
    manageTeam: await createTeamToken(await createTeam(org, { "manage-workspaces": true })),
    manageUser: (await createMember(org, { "manage-workspaces": true })).token,
    readTeam: await createTeamToken(await createTeam(org, { "read-workspaces": true })),
    orgToken: await createOrgToken(org),
  };
}

export interface BootstrappedOrg {
  /** The organization name (= its id). */
  org: string;
  /** Id of the team `owners`. */
  ownersTeamId: string;
  /** Id of the `Default Project`. */
  defaultProjectId: string;
  /** A user in `owners`, with a user token. */
  owner: CreatedUser;
  /** Shorthand for owner.token. */
  ownerToken: string;
}

/**
 * Create an organization (ADMIN_TOKEN), a user in its `owners` team and a token for
 * that user. Names are unique per call.
 */
export async function bootstrapOrg(name = uniqueName("org")): Promise<BootstrappedOrg> {
  const created = await tfe("POST", "organizations", {
    body: { data: { type: "organizations", attributes: { name, email: `admin@${name}.example.test` } } },
  });
  expectStatus(created, 201, "create organization");
  const ownersTeamId = created.json.data.relationships["owners-team"].data.id as string;
  const defaultProjectId = created.json.data.relationships["default-project"].data.id as string;
  const owner = await createUser();
  await addTeamMembers(ownersTeamId, [owner.username]);
  return { org: name, ownersTeamId, defaultProjectId, owner, ownerToken: owner.token };
}

/**
 * A plan's JSON output as a client reads it (N20): `GET /plans/:id/json-output` answers 204
 * until the plan finishes, then 307 to a signed link, which this follows without a token.
 */
export async function jsonOutputOf(planId: string, token: string): Promise<TfeAnswer> {
  const first = await tfe("GET", `plans/${planId}/json-output`, { token });
  if (first.status !== 307) return first;
  return workerRequest(first.headers.get("location")!, { method: "GET" });
}
