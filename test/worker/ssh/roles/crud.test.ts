/**
 * Roles (decisions S1, S2, S12): the cases of Vault's backend_test.go
 * (CRUD, list, the CA role's read) and deletion. Storage is per file: each test uses its
 * own role names; only the list test uses the `ssh-two` mount, which it needs empty (no other
 * roles test file writes there). Input checks: input.test.ts; PATCH: patch.test.ts.
 */
import { describe, expect, it } from "vitest";
import { CA_ROLE, readRole, writeRole } from "../../../helpers/ssh-roles";
import { uniqueName, vault } from "../../../helpers/vault";

describe("OTP role CRUD (TestSSHBackend_OTPRoleCrud)", () => {
  for (const name of ["testOTPRoleName", "test@RoleName"]) {
    it(`writes, reads, deletes ${name}`, async () => {
      const write = await writeRole(name, { key_type: "otp", default_user: "vaultssh", cidr_list: "127.0.0.1/32" });
      expect(write.status).toBe(204);
      expect(write.text).toBe("");

      const read = await readRole(name);
      expect(read.status).toBe(200);
      // Vault's six OTP fields, exactly (S12).
      expect(read.json.data).toEqual({
        key_type: "otp",
        default_user: "vaultssh",
        cidr_list: "127.0.0.1/32",
        exclude_cidr_list: "",
        port: 22,
        allowed_users: "",
      });
      expect(read.json.lease_id).toBe("");
      expect(read.json.warnings).toBeNull();

      expect((await vault("DELETE", `ssh/roles/${name}`)).status).toBe(204);
      const gone = await readRole(name);
      expect(gone.status).toBe(404);
      expect(gone.json).toEqual({ errors: [] });
    });
  }

  it("deleting an absent role is 204", async () => {
    expect((await vault("DELETE", `ssh/roles/${uniqueName()}`)).status).toBe(204);
  });

  it("an OTP role keeps only the OTP fields (CA fields sent with it are discarded)", async () => {
    const name = uniqueName();
    await writeRole(name, { key_type: "OTP", default_user: "u", allow_user_certificates: true, ttl: "1h", port: 2222 });
    const read = await readRole(name);
    expect(Object.keys(read.json.data).sort()).toEqual(
      ["allowed_users", "cidr_list", "default_user", "exclude_cidr_list", "key_type", "port"].sort(),
    );
    expect(read.json.data.port).toBe(2222);
    expect(read.json.data.key_type).toBe("otp");
  });
});

describe("list (TestSSHBackend_RoleList, S2 list flag)", () => {
  it("lists names and key types, sorted; 404 when empty", async () => {
    const empty = await vault("GET", "ssh-two/roles?list=true");
    expect(empty.status).toBe(404);
    expect(empty.json).toEqual({ errors: [] });

    await writeRole(
      "testOTPRoleName",
      { key_type: "otp", default_user: "vaultssh", cidr_list: "127.0.0.1/32" },
      "ssh-two",
    );
    let list = await vault("GET", "ssh-two/roles?list=true");
    expect(list.status).toBe(200);
    expect(list.json.data).toEqual({ keys: ["testOTPRoleName"], key_info: { testOTPRoleName: { key_type: "otp" } } });

    await writeRole(
      "test@RoleName",
      { key_type: "otp", default_user: "vaultssh", cidr_list: "127.0.0.1/32" },
      "ssh-two",
    );
    list = await vault("GET", "ssh-two/roles/?list=true");
    // Byte order: '@' (0x40) sorts before 'O' (0x4f).
    expect(list.json.data).toEqual({
      keys: ["test@RoleName", "testOTPRoleName"],
      key_info: { "test@RoleName": { key_type: "otp" }, testOTPRoleName: { key_type: "otp" } },
    });

    await vault("DELETE", "ssh-two/roles/test@RoleName");
    list = await vault("GET", "ssh-two/roles?list=1");
    expect(list.json.data.keys).toEqual(["testOTPRoleName"]);
    await vault("DELETE", "ssh-two/roles/testOTPRoleName");
    expect((await vault("GET", "ssh-two/roles?list=true")).status).toBe(404);
  });

  it("key_info carries ca and the issuer reference (S20) for CA roles", async () => {
    const name = uniqueName("list-ca");
    await writeRole(name, CA_ROLE);
    const list = await vault("GET", "ssh/roles?list=True");
    expect(list.json.data.key_info[name]).toEqual({ key_type: "ca", issuer_ref: "default" });
  });

  it("parses the flag like strconv.ParseBool; anything else is 400; no flag or false is a read (405)", async () => {
    await writeRole(uniqueName(), CA_ROLE);
    for (const flag of ["1", "t", "T", "true", "TRUE", "True"]) {
      expect((await vault("GET", `ssh/roles?list=${flag}`)).status, flag).toBe(200);
    }
    for (const flag of ["yes", "on", "2", ""]) {
      const res = await vault("GET", `ssh/roles?list=${flag}`);
      expect(res.status, flag).toBe(400);
      expect(res.json.errors[0]).toContain("error parsing list flag");
    }
    for (const path of ["ssh/roles", "ssh/roles?list=false", "ssh/roles?list=0"]) {
      const res = await vault("GET", path);
      expect(res.status, path).toBe(405);
      expect(res.json).toEqual({ errors: ["unsupported operation"] });
    }
  });

  it("keeps mounts apart (S1)", async () => {
    const name = uniqueName("mount");
    await writeRole(name, CA_ROLE);
    expect((await readRole(name)).status).toBe(200);
    expect((await readRole(name, "ssh-two")).status).toBe(404);
  });
});

describe("CA role read (S12: 23 Vault fields + allow_empty_principals + S20's issuer_ref + S22's store_certificates, compact durations)", () => {
  it("returns every field with defaults", async () => {
    const name = uniqueName("ca");
    await writeRole(name, { ...CA_ROLE, allowed_user_key_lengths: { rsa: 2048 } });
    const read = await readRole(name);
    expect(read.status).toBe(200);
    expect(read.json.data).toEqual({
      allowed_users: "",
      allowed_users_template: false,
      allowed_domains: "",
      allowed_domains_template: false,
      default_user: "",
      default_user_template: false,
      ttl: "0s",
      max_ttl: "0s",
      allowed_critical_options: "",
      allowed_extensions: "",
      allow_user_certificates: true,
      allow_host_certificates: false,
      allow_bare_domains: false,
      allow_subdomains: false,
      allow_user_key_ids: false,
      key_id_format: "",
      key_type: "ca",
      default_critical_options: {},
      default_extensions: {},
      default_extensions_template: false,
      allowed_user_key_lengths: { rsa: [2048] },
      algorithm_signer: "default",
      not_before_duration: "30s",
      allow_empty_principals: false,
      issuer_ref: "default",
      store_certificates: false,
    });
    expect(Object.keys(read.json.data)).toHaveLength(26);
  });

  it("reads every written value back, durations in compact form", async () => {
    const name = uniqueName("ca");
    const body = {
      key_type: "ca",
      allow_user_certificates: true,
      allow_host_certificates: true,
      allowed_users: "alice,bob",
      allowed_users_template: true,
      allowed_domains: "example.com",
      allowed_domains_template: true,
      default_user: "alice",
      default_user_template: true,
      ttl: "1h30m",
      max_ttl: "4h",
      allowed_critical_options: "force-command",
      allowed_extensions: "permit-pty",
      allow_bare_domains: true,
      allow_subdomains: true,
      allow_user_key_ids: true,
      key_id_format: "{{role_name}}",
      default_critical_options: { "force-command": "/bin/true" },
      default_extensions: [{ "permit-pty": "" }, { "permit-agent-forwarding": "" }],
      default_extensions_template: true,
      allowed_user_key_lengths: { "ssh-rsa": [2048, 4096], ec: "256,384", ed25519: "" },
      algorithm_signer: "rsa-sha2-512",
      not_before_duration: 45,
      allow_empty_principals: true,
      store_certificates: true,
    };
    expect((await writeRole(name, body)).status).toBe(204);
    const data = (await readRole(name)).json.data;
    expect(data).toMatchObject({
      ttl: "1h30m",
      max_ttl: "4h",
      not_before_duration: "45s",
      default_extensions: { "permit-pty": "", "permit-agent-forwarding": "" },
      allowed_user_key_lengths: { "ssh-rsa": [2048, 4096], ec: [256, 384], ed25519: [0] },
      algorithm_signer: "rsa-sha2-512",
      allow_empty_principals: true,
      store_certificates: true,
      key_id_format: "{{role_name}}",
    });
  });

  it("blank algorithm_signer reads back default; not_before_duration 0 reads 0s", async () => {
    const name = uniqueName("ca");
    await writeRole(name, { ...CA_ROLE, algorithm_signer: "", not_before_duration: 0 });
    const data = (await readRole(name)).json.data;
    expect(data.algorithm_signer).toBe("default");
    expect(data.not_before_duration).toBe("0s");
  });
});

describe("role deletion and the zero-address list (Vault's path_roles.go)", () => {
  it("removes the deleted role's name from the mount's zero-address list", async () => {
    const a = uniqueName("za");
    const b = uniqueName("zb");
    await writeRole(a, { key_type: "otp", default_user: "u" });
    await writeRole(b, { key_type: "otp", default_user: "u" });
    expect((await vault("POST", "ssh/config/zeroaddress", { body: { roles: `${a},${b}` } })).status).toBe(204);
    await vault("DELETE", `ssh/roles/${a}`);
    expect((await vault("GET", "ssh/config/zeroaddress")).json.data.roles).toEqual([b]);
    await vault("DELETE", `ssh/roles/${b}`);
    expect((await vault("GET", "ssh/config/zeroaddress")).json.data.roles).toEqual([]);
    await vault("DELETE", "ssh/config/zeroaddress");
  });
});
