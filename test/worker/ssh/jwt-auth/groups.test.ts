import { beforeAll, describe, expect, it } from "vitest";
import { configure, enableJwtMount, login, mintJwt, type TestKey, testKey, writeRole } from "../../../helpers/jwt-auth";
import { importSignCas, role, sign } from "../../../helpers/ssh-sign";
import { uniqueName, vault } from "../../../helpers/vault";
import { SUBJECT_KEYS } from "../ca-fixtures";

let key: TestKey;
let path: string;
let accessor: string;

beforeAll(async () => {
  await importSignCas();
  key = await testKey("RS256");
  ({ path, accessor } = await enableJwtMount());
  await configure(path, { jwt_validation_pubkeys: [key.pem] });
  await writeRole(path, "people", {
    role_type: "jwt",
    bound_audiences: ["keyway"],
    user_claim: "email",
    groups_claim: "groups",
    claim_mappings: { login: "unix" },
  });
});

const person = (email: string, groups: string[]) => ({ aud: "keyway", email, login: email.split("@")[0], groups });

async function policy(rules: Record<string, string[]>): Promise<string> {
  const name = uniqueName("pol");
  const path: Record<string, { capabilities: string[] }> = {};
  for (const [p, capabilities] of Object.entries(rules)) path[p] = { capabilities };
  const put = await vault("PUT", `sys/policies/acl/${name}`, { body: { policy: JSON.stringify({ path }) } });
  expect(put.status).toBe(204);
  return name;
}

async function externalGroup(policies: string[], aliasName: string): Promise<string> {
  const created = await vault("POST", "identity/group", {
    body: { name: uniqueName("g"), type: "external", policies },
  });
  expect(created.status).toBe(200);
  const id = created.json.data.id as string;
  const alias = await vault("POST", "identity/group-alias", {
    body: { name: aliasName, mount_accessor: accessor, canonical_id: id },
  });
  expect(alias.status).toBe(200);
  return id;
}

describe("external groups from the groups claim (S27)", () => {
  it("an IdP group grants its policy to every token of the entity, and leaving it revokes that at once", async () => {
    const signRole = await role({
      key_type: "ca",
      allow_user_certificates: true,
      allowed_users: "*",
      default_user: "ops",
    });
    const idpGroup = uniqueName("idp-ssh");
    const groupId = await externalGroup([await policy({ [`ssh/sign/${signRole}`]: ["create", "update"] })], idpGroup);
    const email = `${uniqueName("u")}@example.com`;

    const first = await login(path, { role: "people", jwt: await mintJwt(key, person(email, [idpGroup, "other"])) });
    expect(first.status).toBe(200);
    expect(first.json.auth.identity_policies).toHaveLength(1);
    const second = await login(path, { role: "people", jwt: await mintJwt(key, person(email, [idpGroup])) });
    const tokens = [first.json.auth.client_token as string, second.json.auth.client_token as string];
    for (const token of tokens) {
      expect((await sign(signRole, { public_key: SUBJECT_KEYS.ed25519 }, "ssh", token)).status).toBe(200);
    }
    const group = await vault("GET", `identity/group/id/${groupId}`);
    expect(group.json.data.member_entity_ids).toEqual([first.json.auth.entity_id]);
    expect(group.json.data.alias).toMatchObject({ name: idpGroup, mount_accessor: accessor, mount_type: "jwt" });

    // A login without the group removes the membership; both earlier tokens lose the policy.
    const third = await login(path, { role: "people", jwt: await mintJwt(key, person(email, [])) });
    expect(third.status).toBe(200);
    for (const token of tokens) {
      expect((await sign(signRole, { public_key: SUBJECT_KEYS.ed25519 }, "ssh", token)).status).toBe(403);
    }
    expect((await vault("GET", `identity/group/id/${groupId}`)).json.data.member_entity_ids).toEqual([]);
  });

  it("internal groups nesting an external group lend their policies; a group policy change reaches existing tokens", async () => {
    const idpGroup = uniqueName("idp");
    const inner = await externalGroup([], idpGroup);
    const readPolicy = await policy({ "sys/policies/acl/default": ["read"] });
    const outer = await vault("POST", "identity/group", {
      body: { name: uniqueName("outer"), member_group_ids: [inner], policies: [readPolicy] },
    });
    expect(outer.status).toBe(200);
    const answer = await login(path, {
      role: "people",
      jwt: await mintJwt(key, person(`${uniqueName("n")}@x.io`, [idpGroup])),
    });
    const token = answer.json.auth.client_token as string;
    expect((await vault("GET", "sys/policies/acl/default", { token })).status).toBe(200);
    const entity = (await vault("GET", `identity/entity/id/${answer.json.auth.entity_id}`)).json.data;
    expect(entity.direct_group_ids).toEqual([inner]);
    expect(entity.inherited_group_ids).toEqual([outer.json.data.id]);
    expect((await vault("POST", `identity/group/id/${outer.json.data.id}`, { body: { policies: [] } })).status).toBe(
      204,
    );
    expect((await vault("GET", "sys/policies/acl/default", { token })).status).toBe(403);
  });

  it("disabling the entity refuses its next login (403)", async () => {
    const email = `${uniqueName("d")}@example.com`;
    const ok = await login(path, { role: "people", jwt: await mintJwt(key, person(email, [])) });
    await vault("POST", `identity/entity/id/${ok.json.auth.entity_id}`, { body: { disabled: true } });
    const refused = await login(path, { role: "people", jwt: await mintJwt(key, person(email, [])) });
    expect(refused.status).toBe(403);
  });

  it("identity templates name the login-made alias and its metadata", async () => {
    const email = `${uniqueName("t")}@example.com`;
    const signRole = await role({
      key_type: "ca",
      allow_user_certificates: true,
      allowed_users_template: true,
      allowed_users: `{{identity.entity.aliases.${accessor}.name}},{{identity.entity.aliases.${accessor}.metadata.unix}}`,
    });
    const writer = await policy({ [`ssh/sign/${signRole}`]: ["create", "update"] });
    await writeRole(path, "people", { token_policies: [writer] });
    const answer = await login(path, { role: "people", jwt: await mintJwt(key, person(email, [])) });
    const token = answer.json.auth.client_token as string;
    const unix = email.split("@")[0]!;
    const signed = await sign(
      signRole,
      { public_key: SUBJECT_KEYS.ed25519, valid_principals: `${email},${unix}` },
      "ssh",
      token,
    );
    expect(signed.status).toBe(200);
    expect(
      (await sign(signRole, { public_key: SUBJECT_KEYS.ed25519, valid_principals: "root" }, "ssh", token)).status,
    ).toBe(400);
    await writeRole(path, "people", { token_policies: [] });
  });

  it("identity.groups templates name the entity's groups, external and nested, as the IdP's claim sets them", async () => {
    const email = `${uniqueName("gt")}@example.com`;
    const idpGroup = uniqueName("idp-tpl");
    const externalId = await externalGroup([], idpGroup);
    const externalName = (await vault("GET", `identity/group/id/${externalId}`)).json.data.name as string;
    const parentName = uniqueName("parent");
    const parent = await vault("POST", "identity/group", {
      body: { name: parentName, metadata: { unix: "deployers" }, member_group_ids: [externalId] },
    });
    expect(parent.status).toBe(200);
    const signRole = await role({
      key_type: "ca",
      allow_user_certificates: true,
      allowed_users_template: true,
      allowed_users: `{{identity.groups.names.${parentName}.metadata.unix}},g-{{identity.groups.ids.${externalId}.name}}`,
    });
    const writer = await policy({ [`ssh/sign/${signRole}`]: ["create", "update"] });
    await writeRole(path, "people", { token_policies: [writer] });
    const inGroup = (await login(path, { role: "people", jwt: await mintJwt(key, person(email, [idpGroup])) })).json
      .auth.client_token as string;
    const signAs = (principals: string) =>
      sign(signRole, { public_key: SUBJECT_KEYS.ed25519, valid_principals: principals }, "ssh", inGroup);
    expect((await signAs(`deployers,g-${externalName}`)).status).toBe(200);
    expect((await signAs("root")).status).toBe(400);
    // A login without the IdP group leaves the entity in no group (read at signing): the template cannot render.
    await login(path, { role: "people", jwt: await mintJwt(key, person(email, [])) });
    const outside = await signAs("deployers");
    expect(outside.status).toBe(400);
    expect(outside.json.errors[0]).toContain("string contains groups template directives but no groups were found");
    await writeRole(path, "people", { token_policies: [] });
  });
});

describe("identity/group and group-alias (S27)", () => {
  it("refuses cycles, nesting past 8 levels, members of external groups and aliases of internal groups", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const body = i === 0 ? { name: uniqueName("n") } : { name: uniqueName("n"), member_group_ids: [ids[i - 1]] };
      const created = await vault("POST", "identity/group", { body });
      if (i < 9) {
        expect(created.status, `level ${i}`).toBe(200);
        ids.push(created.json.data.id);
      } else {
        expect(created.status).toBe(400);
        expect(created.json.errors).toEqual(["groups may be nested at most 8 levels deep"]);
      }
    }
    const cycle = await vault("POST", `identity/group/id/${ids[0]}`, { body: { member_group_ids: [ids[2]] } });
    expect(cycle.status).toBe(400);
    expect(cycle.json.errors).toEqual([`cyclic relationship detected for member group ID "${ids[2]}"`]);
    const self = await vault("POST", `identity/group/id/${ids[0]}`, { body: { member_group_ids: [ids[0]] } });
    expect(self.json.errors).toEqual([`member group ID "${ids[0]}" is same as the ID of the group`]);
    const ext = await vault("POST", "identity/group", {
      body: { name: uniqueName("e"), type: "external", member_entity_ids: ["x"] },
    });
    expect(ext.json.errors).toEqual(["member entities can't be set manually for external groups"]);
    const internalAlias = await vault("POST", "identity/group-alias", {
      body: { name: "x", mount_accessor: accessor, canonical_id: ids[0] },
    });
    expect(internalAlias.json.errors).toEqual(["alias can't be set on an internal group"]);
    const badAccessor = await vault("POST", "identity/group-alias", {
      body: { name: "x", mount_accessor: "auth_jwt_00000000", canonical_id: ids[0] },
    });
    expect(badAccessor.json.errors).toEqual(['invalid mount accessor "auth_jwt_00000000"']);
  });

  it("reads, lists, renames and deletes groups and aliases", async () => {
    const name = uniqueName("grp");
    const created = await vault("POST", "identity/group", {
      body: { name, type: "external", policies: ["A"], metadata: { team: "ops" } },
    });
    const id = created.json.data.id as string;
    const byName = await vault("GET", `identity/group/name/${name}`);
    expect(byName.json.data).toMatchObject({ id, name, type: "external", policies: ["a"], metadata: { team: "ops" } });
    expect((await vault("GET", "identity/group/id?list=true")).json.data.keys).toContain(id);
    expect((await vault("GET", "identity/group/name?list=true")).json.data.keys).toContain(name);
    const alias = await vault("POST", "identity/group-alias", {
      body: { name: "devs", mount_accessor: accessor, canonical_id: id },
    });
    const aliasId = alias.json.data.id as string;
    expect((await vault("GET", `identity/group-alias/id/${aliasId}`)).json.data).toMatchObject({
      name: "devs",
      canonical_id: id,
      mount_path: `auth/${path}/`,
    });
    expect((await vault("GET", "identity/group-alias/id?list=true")).json.data.keys).toContain(aliasId);
    const again = await vault("POST", "identity/group", { body: { name: uniqueName("e2"), type: "external" } });
    const clash = await vault("POST", "identity/group-alias", {
      body: { name: "devs", mount_accessor: accessor, canonical_id: again.json.data.id },
    });
    expect(clash.json.errors).toEqual(["combination of mount and group alias name is already in use"]);
    expect((await vault("POST", `identity/group/id/${id}`, { body: { type: "internal" } })).json.errors).toEqual([
      "group type cannot be changed",
    ]);
    expect((await vault("DELETE", `identity/group/id/${id}`)).status).toBe(204);
    expect((await vault("GET", `identity/group/id/${id}`)).status).toBe(404);
    expect((await vault("GET", `identity/group-alias/id/${aliasId}`)).status).toBe(404);
  });
});
