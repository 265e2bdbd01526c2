/**
 * Identity templates in sign (Vault's ACL templating; decision S5a): Vault's template cases with a
 * token created with `entity_id` after `POST identity/entity`, plus the mount's TTL fallbacks
 * (each test that depends on the mount's TTLs tunes `ssh-two` itself first).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { uniqueName, vault } from "../../../helpers/vault";
import { CA_KEYS, decodeSignedKey, type EntityToken, entityToken, optionsOf, SUBJECT_KEYS } from "../ca-fixtures";

beforeAll(async () => {
  for (const mount of ["ssh", "ssh-two"]) {
    const res = await vault("POST", `${mount}/config/ca`, {
      body: { private_key: CA_KEYS.ecdsa256.privateKey, public_key: CA_KEYS.ecdsa256.publicKey },
    });
    if (res.status !== 204) throw new Error(`CA import failed: ${res.status} ${res.text}`);
  }
});

async function role(body: Record<string, unknown>, mount = "ssh"): Promise<string> {
  const name = uniqueName("tpl");
  const res = await vault("POST", `${mount}/roles/${name}`, { body });
  if (res.status !== 204) throw new Error(`role write failed: ${res.status} ${res.text}`);
  return name;
}

async function sign(name: string, body: Record<string, unknown>, token?: string, mount = "ssh") {
  return vault("POST", `${mount}/sign/${name}`, {
    body: { public_key: SUBJECT_KEYS.ed25519, ...body },
    ...(token ? { token } : {}),
  });
}

async function tune(mount: string, defaultTtl: string, maxTtl: string) {
  const res = await vault("POST", `sys/mounts/${mount}/tune`, {
    body: { max_lease_ttl: "768h", default_lease_ttl: "1h" },
  });
  if (res.status !== 204) throw new Error(`tune failed: ${res.text}`);
  const res2 = await vault("POST", `sys/mounts/${mount}/tune`, {
    body: { max_lease_ttl: maxTtl, default_lease_ttl: defaultTtl },
  });
  if (res2.status !== 204) throw new Error(`tune failed: ${res2.text}`);
}

const META = "{{identity.entity.metadata.ssh_username}}";
const SPACED_META = "{{ identity.entity.metadata.ssh_username }}";

describe("default extension templating disabled (TestBackend_DefExtTemplatingDisabled)", () => {
  it("signs exactly the caller's extensions, key ID = display name (S7), TTL = mount default", async () => {
    await tune("ssh-two", "16h", "768h");
    const who = await entityToken({ ssh_username: "vaultssh" });
    const name = await role(
      {
        key_type: "ca",
        allow_user_certificates: true,
        allowed_users: "*",
        allowed_extensions: "*",
        default_extensions_template: false,
        default_extensions: { "login@foobar.com": `{{identity.entity.aliases.${who.accessor}.name}}` },
      },
      "ssh-two",
    );
    const res = await sign(
      name,
      { valid_principals: "vaultssh", extensions: { "login@foobar.com": "zipzap", "login@foobar2.com": "zipzap2" } },
      who.token,
      "ssh-two",
    );
    expect(res.status).toBe(200);
    const cert = decodeSignedKey(res.json.data.signed_key);
    expect(optionsOf(cert.extensions)).toEqual({ "login@foobar.com": "zipzap", "login@foobar2.com": "zipzap2" });
    expect(cert.keyId).toBe("token-vaultssh");
    expect(cert.validBefore - cert.validAfter).toBe(BigInt(16 * 3600 + 30));
    expect(res.json.lease_duration).toBe(16 * 3600);

    // Template off: a template-looking default is copied literally.
    const defaults = await sign(name, { valid_principals: "vaultssh" }, who.token, "ssh-two");
    expect(optionsOf(decodeSignedKey(defaults.json.data.signed_key).extensions)).toEqual({
      "login@foobar.com": `{{identity.entity.aliases.${who.accessor}.name}}`,
    });
  });
});

describe("default extension templating enabled (TestBackend_DefExtTemplatingEnabled)", () => {
  let who: EntityToken;
  let name: string;
  beforeAll(async () => {
    who = await entityToken({ ssh_username: "vaultssh" });
    const alias = `{{identity.entity.aliases.${who.accessor}.name}}`;
    name = await role({
      key_type: "ca",
      allow_user_certificates: true,
      allowed_users: "*",
      allowed_extensions: "login@zipzap.com",
      default_extensions_template: true,
      default_extensions: {
        "login@foobar.com": alias,
        "login@foobar2.com": `${alias}, ${alias}_foobar`,
        "permit-pty": "",
      },
    });
  });

  it("renders the defaults from the caller's entity, keeping surrounding text", async () => {
    const res = await sign(name, { valid_principals: "vaultssh" }, who.token);
    expect(res.status).toBe(200);
    expect(optionsOf(decodeSignedKey(res.json.data.signed_key).extensions)).toEqual({
      "login@foobar.com": who.aliasName,
      "login@foobar2.com": `${who.aliasName}, ${who.aliasName}_foobar`,
      "permit-pty": "",
    });
  });

  it("an allowed caller extension replaces them all; a refused one is 400", async () => {
    const ok = await sign(
      name,
      { valid_principals: "vaultssh", extensions: { "login@zipzap.com": "some_other_user_name" } },
      who.token,
    );
    expect(optionsOf(decodeSignedKey(ok.json.data.signed_key).extensions)).toEqual({
      "login@zipzap.com": "some_other_user_name",
    });
    const refused = await sign(
      name,
      { valid_principals: "vaultssh", extensions: { "login@foobar.com": "x" } },
      who.token,
    );
    expect(refused.status).toBe(400);
    expect(refused.json.errors).toEqual(["extensions [login@foobar.com] are not on allowed list"]);
  });

  it("a default that cannot be rendered is 400 with Vault's text", async () => {
    const broken = await role({
      key_type: "ca",
      allow_user_certificates: true,
      allowed_users: "*",
      default_extensions_template: true,
      default_extensions: { "login@x": "{{identity.entity.metadata.missing}}" },
    });
    const res = await sign(broken, { valid_principals: "a" }, who.token);
    expect(res.status).toBe(400);
    expect(res.json.errors).toEqual([
      "template '{{identity.entity.metadata.missing}}' could not be rendered -> no value could be found for one of the template directives",
    ]);
  });

  it("an alias of another accessor is `alias not found`", async () => {
    const other = await role({
      key_type: "ca",
      allow_user_certificates: true,
      allowed_users: "*",
      default_extensions_template: true,
      default_extensions: { "login@x": "{{identity.entity.aliases.auth_userpass_0000.name}}" },
    });
    const res = await sign(other, { valid_principals: "a" }, who.token);
    expect(res.json.errors).toEqual([
      "template '{{identity.entity.aliases.auth_userpass_0000.name}}' could not be rendered -> alias not found",
    ]);
  });
});

describe("templated default extensions without an entity", () => {
  it("drops them and warns (root token has no entity)", async () => {
    const name = await role({
      key_type: "ca",
      allow_user_certificates: true,
      allowed_users: "*",
      default_extensions_template: true,
      default_extensions: { "login@foobar.com": "{{identity.entity.name}}", "permit-pty": "" },
    });
    const res = await sign(name, { valid_principals: "a" });
    expect(res.status).toBe(200);
    expect(optionsOf(decodeSignedKey(res.json.data.signed_key).extensions)).toEqual({ "permit-pty": "" });
    expect(res.json.warnings).toEqual([
      "default_extension templating enabled with at least one extension requiring identity templating. However, this request lacked identity entity information, causing one or more extensions to be skipped from the generated certificate.",
    ]);
  });
});

describe("allowed_users templates (TestBackend_AllowedUsersTemplate*)", () => {
  it("renders allowed_users from entity metadata (whitespace inside braces ignored)", async () => {
    const who = await entityToken({ ssh_username: "vaultssh" });
    const name = await role({
      key_type: "ca",
      allow_user_certificates: true,
      allowed_users_template: true,
      allowed_users: SPACED_META,
    });
    const ok = await sign(name, { valid_principals: "vaultssh" }, who.token);
    expect(ok.status).toBe(200);
    expect(decodeSignedKey(ok.json.data.signed_key).principals).toEqual(["vaultssh"]);
    const other = await sign(name, { valid_principals: "root" }, who.token);
    expect(other.json.errors).toEqual(["root is not a valid value for valid_principals"]);
  });

  it("keeps a static prefix", async () => {
    const who = await entityToken({ ssh_username: "vaultssh" });
    const name = await role({
      key_type: "ca",
      allow_user_certificates: true,
      allowed_users_template: true,
      allowed_users: `ssh-${SPACED_META}`,
    });
    const res = await sign(name, { valid_principals: "ssh-vaultssh" }, who.token);
    expect(decodeSignedKey(res.json.data.signed_key).principals).toEqual(["ssh-vaultssh"]);
  });

  it("a rendered value holding commas allows each name", async () => {
    const who = await entityToken({ ssh_username: "vaultssh,otherssh" });
    const name = await role({
      key_type: "ca",
      allow_user_certificates: true,
      allowed_users_template: true,
      allowed_users: `${META},static`,
    });
    for (const principal of ["vaultssh", "otherssh", "static"]) {
      expect((await sign(name, { valid_principals: principal }, who.token)).status, principal).toBe(200);
    }
  });

  it("a template whose value is missing is 400", async () => {
    const who = await entityToken({ other: "x" });
    const name = await role({
      key_type: "ca",
      allow_user_certificates: true,
      allowed_users_template: true,
      allowed_users: META,
    });
    const res = await sign(name, { valid_principals: "x" }, who.token);
    expect(res.status).toBe(400);
    expect(res.json.errors).toEqual([
      `template '${META}' could not be rendered -> no value could be found for one of the template directives`,
    ]);
  });

  it("entity id and name render too", async () => {
    const who = await entityToken({});
    const name = await role({
      key_type: "ca",
      allow_user_certificates: true,
      allowed_users_template: true,
      allowed_users: "{{identity.entity.id}}",
    });
    expect((await sign(name, { valid_principals: who.entityId }, who.token)).status).toBe(200);
  });
});

describe("allowed_domains templates (TestBackend_AllowedDomainsTemplate)", () => {
  it("renders a templated domain for host certificates", async () => {
    const who = await entityToken({ ssh_username: "vaultssh" });
    const name = await role({
      key_type: "ca",
      allow_host_certificates: true,
      allowed_domains_template: true,
      allowed_domains: `${SPACED_META}.example.com`,
      allow_subdomains: true,
    });
    const res = await sign(name, { cert_type: "host", valid_principals: "foo.vaultssh.example.com" }, who.token);
    expect(res.status).toBe(200);
    expect(decodeSignedKey(res.json.data.signed_key).principals).toEqual(["foo.vaultssh.example.com"]);
    const wrong = await sign(name, { cert_type: "host", valid_principals: "foo.other.example.com" }, who.token);
    expect(wrong.status).toBe(400);
  });
});

describe("default_user templates (TestBackend_DefaultUserTemplate)", () => {
  it("signs for the rendered default user when no principals are sent", async () => {
    const who = await entityToken({ ssh_username: "vaultssh" });
    const name = await role({
      key_type: "ca",
      allow_user_certificates: true,
      default_user_template: true,
      default_user: SPACED_META,
      allowed_users_template: true,
      allowed_users: SPACED_META,
    });
    const res = await sign(name, {}, who.token);
    expect(res.status).toBe(200);
    expect(decodeSignedKey(res.json.data.signed_key).principals).toEqual(["vaultssh"]);
  });

  it("with a static prefix", async () => {
    const who = await entityToken({ ssh_username: "vaultssh" });
    const name = await role({
      key_type: "ca",
      allow_user_certificates: true,
      default_user_template: true,
      default_user: `user-${META}`,
      allowed_users_template: true,
      allowed_users: `user-${META}`,
    });
    const res = await sign(name, { valid_principals: "" }, who.token);
    expect(decodeSignedKey(res.json.data.signed_key).principals).toEqual(["user-vaultssh"]);
  });

  it("a default_user template that cannot be rendered is 400 (B3: Vault's 500)", async () => {
    const who = await entityToken({});
    const name = await role({
      key_type: "ca",
      allow_user_certificates: true,
      allowed_users: "*",
      default_user_template: true,
      default_user: META,
    });
    const res = await sign(name, {}, who.token);
    expect(res.status).toBe(400);
    expect(res.json.errors[0]).toBe(
      `template '${META}' could not be rendered -> no value could be found for one of the template directives`,
    );
  });

  it("without an entity (root) the template is used literally", async () => {
    const name = await role({
      key_type: "ca",
      allow_user_certificates: true,
      default_user_template: true,
      default_user: META,
      allowed_users_template: true,
      allowed_users: META,
    });
    const res = await sign(name, {});
    expect(decodeSignedKey(res.json.data.signed_key).principals).toEqual([META]);
  });
});

describe("templates only where the flag is on", () => {
  it("33: default_user not templated + allowed_users templated → the literal default is refused", async () => {
    const who = await entityToken({ ssh_username: "vaultssh" });
    const name = await role({
      key_type: "ca",
      allow_user_certificates: true,
      default_user: META,
      default_user_template: false,
      allowed_users: META,
      allowed_users_template: true,
    });
    const res = await sign(name, {}, who.token);
    expect(res.status).toBe(400);
    expect(res.json.errors[0]).toContain(`${META} is not a valid value for valid_principals`);
  });

  it("34: neither templated → one literal principal", async () => {
    const who = await entityToken({ ssh_username: "vaultssh" });
    const name = await role({ key_type: "ca", allow_user_certificates: true, default_user: META, allowed_users: META });
    const res = await sign(name, {}, who.token);
    expect(res.status).toBe(200);
    expect(decodeSignedKey(res.json.data.signed_key).principals).toEqual([META]);
  });

  it("identity templates are never applied to valid_principals or key_id_format", async () => {
    const who = await entityToken({ ssh_username: "vaultssh" });
    const name = await role({
      key_type: "ca",
      allow_user_certificates: true,
      allowed_users: "*",
      key_id_format: "{{identity.entity.name}}",
    });
    const res = await sign(name, { valid_principals: META }, who.token);
    const cert = decodeSignedKey(res.json.data.signed_key);
    expect(cert.principals).toEqual([META]);
    expect(cert.keyId).toBe("{{identity.entity.name}}");
  });
});

describe("TTL fallbacks to the tuned mount (S1)", () => {
  it("a role ttl above the mount maximum is clamped silently when the caller sends none", async () => {
    await tune("ssh-two", "30m", "1h");
    const name = await role(
      { key_type: "ca", allow_user_certificates: true, allowed_users: "*", ttl: "2h" },
      "ssh-two",
    );
    const res = await sign(name, { valid_principals: "a" }, undefined, "ssh-two");
    expect(res.status).toBe(200);
    expect(res.json.lease_duration).toBe(3600);
    const cert = decodeSignedKey(res.json.data.signed_key);
    expect(cert.validBefore - cert.validAfter).toBe(BigInt(3600 + 30));
    const asked = await sign(name, { valid_principals: "a", ttl: "2h" }, undefined, "ssh-two");
    expect(asked.json.errors).toEqual(["ttl is larger than maximum allowed 3600"]);
  });

  it("without role TTLs the mount default applies", async () => {
    await tune("ssh-two", "30m", "1h");
    const name = await role({ key_type: "ca", allow_user_certificates: true, allowed_users: "*" }, "ssh-two");
    const res = await sign(name, { valid_principals: "a" }, undefined, "ssh-two");
    expect(res.json.lease_duration).toBe(1800);
  });
});
