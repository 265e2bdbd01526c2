/**
 * The D1 side of N16's "who you are": usernames for provisioned users, emails matched
 * case-insensitively, and team-sync's membership changes that never touch `owners`.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDb } from "../../../../src/db/client";
import { freeUsername, syncTeams, usersWithEmail } from "../../../../src/nocode/sso/repo";
import { addTeamMembers, bootstrapOrg, createTeam, createUser, tfe, uniqueName } from "../../../helpers/nocode";

const db = () => createDb(env.DB);

async function teamNamesOf(org: string, ownerToken: string, userId: string): Promise<string[]> {
  const list = await tfe("GET", `organizations/${org}/teams`, { token: ownerToken });
  return (list.json.data as { attributes: { name: string }; relationships: { users: { data: { id: string }[] } } }[])
    .filter((t) => t.relationships.users.data.some((u) => u.id === userId))
    .map((t) => t.attributes.name)
    .sort();
}

describe("SSO repo (N16)", () => {
  it("makes a username from the email's local part, unique with a numeric suffix", async () => {
    const base = uniqueName("sso").replaceAll("-", "_");
    expect(await freeUsername(db(), `${base}@corp.example`)).toBe(base);
    await createUser(base);
    expect(await freeUsername(db(), `${base}@other.example`)).toBe(`${base}2`);
    await createUser(`${base}2`);
    expect(await freeUsername(db(), `${base}@other.example`)).toBe(`${base}3`);
    expect(await freeUsername(db(), "Jo.Ann+tag@corp.example")).toMatch(/^JoAnntag\d*$/);
    expect(await freeUsername(db(), "é@corp.example")).toMatch(/^user\d*$/);
  });

  it("finds users by email case-insensitively, at most two", async () => {
    const user = await createUser();
    const found = await usersWithEmail(db(), `${user.username}@EXAMPLE.test`.toUpperCase());
    expect(found.map((u) => u.id)).toEqual([user.id]);
    expect(await usersWithEmail(db(), `nobody-${user.username}@example.test`)).toEqual([]);
  });

  it("team-sync adds and removes memberships by name and never touches owners", async () => {
    const { org, ownerToken, owner } = await bootstrapOrg();
    const devs = uniqueName("devs");
    const ops = uniqueName("ops");
    const devsId = await createTeam(org, {}, { name: devs });
    await createTeam(org, {}, { name: ops });
    await addTeamMembers(devsId, [owner.username]);
    expect(await syncTeams(db(), org, owner.id, [ops, "owners", "unknown"])).toBe(true);
    expect(await teamNamesOf(org, ownerToken, owner.id)).toEqual([ops, "owners"].sort());
    expect(await syncTeams(db(), org, owner.id, [ops])).toBe(false);
    expect(await syncTeams(db(), org, owner.id, [])).toBe(true);
    expect(await teamNamesOf(org, ownerToken, owner.id)).toEqual(["owners"]);
    // Someone outside owners is never added to it by a groups value.
    const user = await createUser();
    expect(await syncTeams(db(), org, user.id, ["owners", devs])).toBe(true);
    expect(await teamNamesOf(org, ownerToken, user.id)).toEqual([devs]);
  });
});
