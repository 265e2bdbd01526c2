/**
 * The permission model of decision N10, row by row: directly through hasOrgPermission /
 * orgCallerPermissions / requireOrgPermission, and through the HTTP endpoints (401 for a
 * missing or invalid token, 404 for a valid token that is not permitted).
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDb } from "../../../../src/db/client";
import type { NocodeCaller } from "../../../../src/nocode/access/auth";
import {
  ADMIN_BOOTSTRAP_RIGHTS,
  ALL_ORG_PERMISSIONS,
  hasOrgPermission,
  ORGANIZATION_TOKEN_RIGHTS,
  orgCallerPermissions,
  requireOrgPermission,
} from "../../../../src/nocode/access/permissions";
import { NocodeError } from "../../../../src/nocode/errors";
import {
  ADMIN,
  addTeamMembers,
  bootstrapOrg,
  createMember,
  createOrgToken,
  createTeam,
  createTeamToken,
  createUser,
  tfe,
  uniqueName,
} from "../../../helpers/nocode";

const db = () => createDb(env.DB);
const sorted = (set: Set<string>) => [...set].sort();
const userCaller = (u: { id: string; username: string }): NocodeCaller => ({
  kind: "user",
  userId: u.id,
  username: u.username,
});

describe("N10 via hasOrgPermission and orgCallerPermissions", () => {
  it("owners may do everything in their organization, and nothing in another", async () => {
    const { org, owner, ownersTeamId } = await bootstrapOrg();
    const other = await bootstrapOrg();
    expect(sorted(await orgCallerPermissions(db(), userCaller(owner), org))).toEqual([...ALL_ORG_PERMISSIONS].sort());
    expect(
      sorted(await orgCallerPermissions(db(), { kind: "team", teamId: ownersTeamId, organization: org }, org)),
    ).toEqual([...ALL_ORG_PERMISSIONS].sort());
    expect(await orgCallerPermissions(db(), userCaller(owner), other.org)).toEqual(new Set());
  });

  it("a user's rights are the union of its teams'", async () => {
    const { org } = await bootstrapOrg();
    const user = await createUser();
    await addTeamMembers(await createTeam(org, { "manage-projects": true }), [user.username]);
    await addTeamMembers(await createTeam(org, { "manage-agent-pools": true }), [user.username]);
    expect(sorted(await orgCallerPermissions(db(), userCaller(user), org))).toEqual([
      "manage-agent-pools",
      "manage-projects",
      "member",
    ]);
    expect(await hasOrgPermission(db(), userCaller(user), org, "manage-registry-modules")).toBe(false);
    expect(await hasOrgPermission(db(), userCaller(user), org, "owner")).toBe(false);
  });

  it("manage-workspaces implies read-workspaces; read-workspaces alone is read-only", async () => {
    const { org } = await bootstrapOrg();
    const managers = await createTeam(org, { "manage-workspaces": true });
    const readers = await createTeam(org, { "read-workspaces": true });
    const m = { kind: "team", teamId: managers, organization: org } as const;
    const r = { kind: "team", teamId: readers, organization: org } as const;
    expect(sorted(await orgCallerPermissions(db(), m, org))).toEqual([
      "member",
      "read-upgrades",
      "read-workspaces",
      "run-workspaces",
      "write-vars",
    ]);
    expect(sorted(await orgCallerPermissions(db(), r, org))).toEqual(["member", "read-upgrades", "read-workspaces"]);
  });

  it("each organization-access flag grants exactly its right (read-projects adds nothing beyond membership)", async () => {
    const { org } = await bootstrapOrg();
    const cases: [string, string[]][] = [
      ["manage-modules", ["manage-no-code-modules", "manage-registry-modules", "member"]],
      ["manage-projects", ["manage-projects", "member"]],
      ["manage-agent-pools", ["manage-agent-pools", "member"]],
      ["read-projects", ["member"]],
    ];
    for (const [flag, expected] of cases) {
      const teamId = await createTeam(org, { [flag]: true });
      expect(sorted(await orgCallerPermissions(db(), { kind: "team", teamId, organization: org }, org))).toEqual(
        expected,
      );
    }
  });

  it("any member — even of a team without access — is a member; a user in no team is not", async () => {
    const { org } = await bootstrapOrg();
    const member = await createMember(org, {});
    expect(sorted(await orgCallerPermissions(db(), userCaller(member), org))).toEqual(["member"]);
    const stranger = await createUser();
    expect(await hasOrgPermission(db(), userCaller(stranger), org, "member")).toBe(false);
  });

  it("the organization token holds everything in its organization but E1/E2/E4–E7/run rights and owner (N10, N10a)", async () => {
    const { org } = await bootstrapOrg();
    const other = await bootstrapOrg();
    const caller: NocodeCaller = { kind: "organization", organization: org };
    expect(sorted(await orgCallerPermissions(db(), caller, org))).toEqual([
      "manage-agent-pools",
      "manage-projects",
      "manage-registry-modules",
      "manage-teams",
      "member",
      "read-workspaces",
      "write-vars",
    ]);
    expect(sorted(new Set(ORGANIZATION_TOKEN_RIGHTS))).toEqual(sorted(await orgCallerPermissions(db(), caller, org)));
    for (const p of ALL_ORG_PERMISSIONS) expect(await hasOrgPermission(db(), caller, other.org, p)).toBe(false);
  });

  it("owners and manage-modules members keep E1/E2 rights the organization token lacks", async () => {
    const { org, owner } = await bootstrapOrg();
    const modules = await createMember(org, { "manage-modules": true });
    expect(await hasOrgPermission(db(), userCaller(owner), org, "manage-no-code-modules")).toBe(true);
    expect(await hasOrgPermission(db(), userCaller(modules), org, "manage-no-code-modules")).toBe(true);
    expect(
      await hasOrgPermission(
        db(),
        { kind: "team", teamId: modules.teamId, organization: org },
        org,
        "manage-no-code-modules",
      ),
    ).toBe(true);
  });

  it("ADMIN_TOKEN holds only the bootstrap right (manage-teams) in an organization (N10a)", async () => {
    const { org } = await bootstrapOrg();
    expect(sorted(await orgCallerPermissions(db(), { kind: "admin" }, org))).toEqual([...ADMIN_BOOTSTRAP_RIGHTS]);
    expect([...ADMIN_BOOTSTRAP_RIGHTS]).toEqual(["manage-teams"]);
  });

  it("a team caller claiming another organization gets nothing", async () => {
    const { org, ownersTeamId } = await bootstrapOrg();
    const other = await bootstrapOrg();
    expect(
      await orgCallerPermissions(db(), { kind: "team", teamId: ownersTeamId, organization: org }, other.org),
    ).toEqual(new Set());
    expect(
      await orgCallerPermissions(db(), { kind: "team", teamId: ownersTeamId, organization: other.org }, other.org),
    ).toEqual(new Set());
  });

  it("requireOrgPermission throws 404 not found when not permitted, and passes otherwise", async () => {
    const { org, owner } = await bootstrapOrg();
    const member = await createMember(org, {});
    await expect(requireOrgPermission(db(), userCaller(owner), org, "owner")).resolves.toBeUndefined();
    const err = await requireOrgPermission(db(), userCaller(member), org, "manage-projects").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NocodeError);
    expect((err as NocodeError).code).toBe("not_found");
    await expect(
      requireOrgPermission(db(), { kind: "organization", organization: org }, org, "manage-no-code-modules"),
    ).rejects.toBeInstanceOf(NocodeError);
  });
});

describe("N10 over HTTP: 401 for token problems, 404 for not permitted", () => {
  it("missing and invalid tokens get the identical 401 on every endpoint, known or not (N2a)", async () => {
    const { org, ownersTeamId, defaultProjectId } = await bootstrapOrg();
    const paths: [string, string][] = [
      ["GET", `organizations/${org}`],
      ["POST", "organizations"],
      ["POST", "admin/users"],
      ["GET", `organizations/${org}/teams`],
      ["GET", `teams/${ownersTeamId}`],
      ["POST", `teams/${ownersTeamId}/authentication-token`],
      ["GET", `projects/${defaultProjectId}`],
      ["GET", `organizations/${org}/agent-pools`],
      ["GET", "admin/terraform-versions"],
      ["GET", "definitely/not/a/route"],
    ];
    for (const [method, path] of paths) {
      for (const token of [null, "not-a-token", `${"A".repeat(14)}.atlasv1.${"B".repeat(67)}`]) {
        const res = await tfe(method, path, { token });
        expect(res.status, `${method} ${path}`).toBe(401);
        expect(res.text).toBe('{"errors":[{"status":"401","title":"unauthorized"}]}');
      }
    }
  });

  it("a non-member user gets 404 on the organization and everything in it", async () => {
    const { org, ownersTeamId, defaultProjectId } = await bootstrapOrg();
    const stranger = await createUser();
    for (const [method, path] of [
      ["GET", `organizations/${org}`],
      ["GET", `organizations/${org}/teams`],
      ["GET", `teams/${ownersTeamId}`],
      ["GET", `organizations/${org}/projects`],
      ["GET", `projects/${defaultProjectId}`],
      ["GET", `organizations/${org}/agent-pools`],
      ["POST", `organizations/${org}/teams`],
      ["POST", `organizations/${org}/projects`],
      ["POST", `organizations/${org}/authentication-token`],
    ] as const) {
      const body = method === "GET" ? undefined : { data: { attributes: { name: uniqueName("x") } } };
      const res = await tfe(method, path, { token: stranger.token, body });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.json).toEqual({ errors: [{ status: "404", title: "not found" }] });
    }
  });

  it("a read-workspaces team token reads but cannot create projects, agent pools or teams", async () => {
    const { org } = await bootstrapOrg();
    const token = await createTeamToken(await createTeam(org, { "read-workspaces": true }));
    const body = { data: { attributes: { name: uniqueName("x") } } };
    expect((await tfe("GET", `organizations/${org}`, { token })).status).toBe(200);
    expect((await tfe("GET", `organizations/${org}/projects`, { token })).status).toBe(200);
    expect((await tfe("GET", `organizations/${org}/agent-pools`, { token })).status).toBe(200);
    expect((await tfe("GET", `organizations/${org}/teams`, { token })).status).toBe(200);
    expect((await tfe("POST", `organizations/${org}/projects`, { token, body })).status).toBe(404);
    expect((await tfe("POST", `organizations/${org}/agent-pools`, { token, body })).status).toBe(404);
    expect((await tfe("POST", `organizations/${org}/teams`, { token, body })).status).toBe(404);
  });

  it("the organization token can create teams, projects and agent pools and mint team tokens", async () => {
    const { org } = await bootstrapOrg();
    const token = await createOrgToken(org);
    const team = await tfe("POST", `organizations/${org}/teams`, {
      token,
      body: { data: { attributes: { name: uniqueName("t") } } },
    });
    expect(team.status).toBe(201);
    expect((await tfe("POST", `teams/${team.json.data.id}/authentication-token`, { token })).status).toBe(201);
    expect(
      (
        await tfe("POST", `organizations/${org}/projects`, {
          token,
          body: { data: { attributes: { name: uniqueName("p") } } },
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await tfe("POST", `organizations/${org}/agent-pools`, {
          token,
          body: { data: { attributes: { name: uniqueName("a") } } },
        })
      ).status,
    ).toBe(201);
  });

  it("ADMIN_TOKEN works on the bootstrap endpoints and the release list only", async () => {
    // Bootstrap: organizations, users, user tokens, organization token, teams, team tokens, memberships.
    const name = uniqueName("org");
    const org = await tfe("POST", "organizations", { body: { data: { attributes: { name, email: "a@b.c" } } } });
    expect(org.status).toBe(201);
    const user = await tfe("POST", "admin/users", {
      body: { data: { attributes: { username: uniqueName("u"), email: "u@b.c" } } },
    });
    expect(user.status).toBe(201);
    expect((await tfe("POST", `users/${user.json.data.id}/authentication-tokens`)).status).toBe(201);
    expect((await tfe("POST", `organizations/${name}/authentication-token`)).status).toBe(201);
    const team = await tfe("POST", `organizations/${name}/teams`, {
      body: { data: { attributes: { name: "admins-team" } } },
    });
    expect(team.status).toBe(201);
    expect((await tfe("POST", `teams/${team.json.data.id}/authentication-token`)).status).toBe(201);
    expect(
      (
        await tfe("POST", `teams/${team.json.data.id}/relationships/users`, {
          body: { data: [{ type: "users", id: user.json.data.id }] },
        })
      ).status,
    ).toBe(204);
    expect((await tfe("GET", "admin/terraform-versions")).status).toBe(200);
    // Everything else: 404.
    const projectId = org.json.data.relationships["default-project"].data.id;
    for (const [method, path] of [
      ["GET", `organizations/${name}`],
      ["GET", `organizations/${name}/teams`],
      ["GET", `teams/${team.json.data.id}`],
      ["GET", `organizations/${name}/projects`],
      ["POST", `organizations/${name}/projects`],
      ["GET", `projects/${projectId}`],
      ["GET", `organizations/${name}/agent-pools`],
      ["POST", `organizations/${name}/agent-pools`],
      ["GET", "account/details"],
    ] as const) {
      const body = method === "GET" ? undefined : { data: { attributes: { name: uniqueName("x") } } };
      const res = await tfe(method, path, { token: ADMIN, body });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
  });

  it("membership changes take effect on the next request", async () => {
    const { org } = await bootstrapOrg();
    const user = await createUser();
    const teamId = await createTeam(org, { "manage-projects": true });
    const body = { data: { attributes: { name: uniqueName("p") } } };
    expect((await tfe("POST", `organizations/${org}/projects`, { token: user.token, body })).status).toBe(404);
    await addTeamMembers(teamId, [user.username]);
    expect((await tfe("POST", `organizations/${org}/projects`, { token: user.token, body })).status).toBe(201);
    await tfe("DELETE", `teams/${teamId}/relationships/users`, {
      body: { data: [{ type: "users", id: user.username }] },
    });
    expect(
      (
        await tfe("POST", `organizations/${org}/projects`, {
          token: user.token,
          body: { data: { attributes: { name: uniqueName("p") } } },
        })
      ).status,
    ).toBe(404);
  });
});
