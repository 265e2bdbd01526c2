import { describe, expect, it } from "vitest";
import { uniqueName, vault } from "../../../helpers/vault";

describe("identity entities and aliases (S5a)", () => {
  it("creates, reads by id and name, updates, lists and deletes an entity", async () => {
    const name = uniqueName("ent");
    const created = await vault("POST", "identity/entity", {
      body: { name, metadata: { team: "ops" }, policies: ["default"] },
    });
    expect(created.status).toBe(200);
    const id = created.json.data.id as string;
    const byId = await vault("GET", `identity/entity/id/${id}`);
    expect(byId.json.data).toMatchObject({
      id,
      name,
      metadata: { team: "ops" },
      policies: ["default"],
      disabled: false,
    });
    expect((await vault("GET", `identity/entity/name/${name}`)).json.data.id).toBe(id);
    expect((await vault("POST", `identity/entity/id/${id}`, { body: { metadata: { team: "dev" } } })).status).toBe(200);
    expect((await vault("GET", `identity/entity/id/${id}`)).json.data.metadata).toEqual({ team: "dev" });
    const list = await vault("GET", "identity/entity/id?list=true");
    expect(list.json.data.keys).toContain(id);
    expect(list.json.data.key_info[id].name).toBe(name);
    expect((await vault("DELETE", `identity/entity/id/${id}`)).status).toBe(204);
    expect((await vault("GET", `identity/entity/id/${id}`)).status).toBe(404);
  });

  it("refuses a taken name", async () => {
    const name = uniqueName("dup");
    await vault("POST", "identity/entity", { body: { name } });
    const again = await vault("POST", "identity/entity", { body: { name } });
    expect(again.status).toBe(400);
    expect(again.json.errors[0]).toBe("entity name is already in use");
  });

  it("creates an alias on the token store accessor shown by sys/auth", async () => {
    const auth = await vault("GET", "sys/auth");
    const accessor = auth.json.data["token/"].accessor as string;
    expect(accessor).toMatch(/^auth_token_[0-9a-f]{8}$/);
    expect(auth.json["token/"].accessor).toBe(accessor);
    const id = (await vault("POST", "identity/entity", { body: { name: uniqueName("al") } })).json.data.id;
    const alias = await vault("POST", "identity/entity-alias", {
      body: { name: "alice", canonical_id: id, mount_accessor: accessor },
    });
    expect(alias.status).toBe(200);
    expect(alias.json.data.canonical_id).toBe(id);
    const entity = await vault("GET", `identity/entity/id/${id}`);
    expect(entity.json.data.aliases[0]).toMatchObject({ name: "alice", mount_accessor: accessor, canonical_id: id });
    const bad = await vault("POST", "identity/entity-alias", {
      body: { name: "x", canonical_id: id, mount_accessor: "auth_nope" },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.errors[0]).toBe("invalid mount accessor");
  });

  it("resolves the entity of a token created with entity_id and adds its policies", async () => {
    const policy = uniqueName("entpol");
    await vault("PUT", `sys/policies/acl/${policy}`, {
      body: { policy: JSON.stringify({ path: { "sys/policies/acl/default": { capabilities: ["read"] } } }) },
    });
    const id = (await vault("POST", "identity/entity", { body: { name: uniqueName("tok"), policies: [policy] } })).json
      .data.id;
    const created = await vault("POST", "auth/token/create", { body: { entity_id: id, policies: ["default"] } });
    expect(created.json.auth.entity_id).toBe(id);
    expect(created.json.auth.identity_policies).toEqual([policy]);
    const token = created.json.auth.client_token;
    const self = await vault("GET", "auth/token/lookup-self", { token });
    expect(self.json.data.entity_id).toBe(id);
    expect((await vault("GET", "sys/policies/acl/default", { token })).status).toBe(200);
  });

  it("drops a disabled entity's policies from its tokens' ACL at the next request", async () => {
    const policy = uniqueName("entpol");
    await vault("PUT", `sys/policies/acl/${policy}`, {
      body: { policy: JSON.stringify({ path: { "sys/policies/acl/default": { capabilities: ["read"] } } }) },
    });
    const id = (await vault("POST", "identity/entity", { body: { name: uniqueName("tok"), policies: [policy] } })).json
      .data.id;
    const token = (await vault("POST", "auth/token/create", { body: { entity_id: id, policies: ["default"] } })).json
      .auth.client_token;
    expect((await vault("GET", "sys/policies/acl/default", { token })).status).toBe(200);

    expect((await vault("POST", `identity/entity/id/${id}`, { body: { disabled: true } })).status).toBeLessThan(300);
    expect((await vault("GET", "sys/policies/acl/default", { token })).status).toBe(403);
    // The token's own policies still apply.
    expect((await vault("GET", "auth/token/lookup-self", { token })).status).toBe(200);
  });

  it("applies a policy rewrite to existing tokens at their next request", async () => {
    const policy = uniqueName("livepol");
    const write = (capabilities: string[]) =>
      vault("PUT", `sys/policies/acl/${policy}`, {
        body: { policy: JSON.stringify({ path: { "sys/policies/acl/default": { capabilities } } }) },
      });
    await write(["deny"]);
    const token = (await vault("POST", "auth/token/create", { body: { policies: [policy] } })).json.auth.client_token;
    expect((await vault("GET", "sys/policies/acl/default", { token })).status).toBe(403);
    await write(["read"]);
    expect((await vault("GET", "sys/policies/acl/default", { token })).status).toBe(200);
  });
});
