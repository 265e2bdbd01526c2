/**
 * Roles (seed rows 1–4, decisions S1, S2, S4, S12): vault-ssh-behaviour §8 items 1, 2, 6, 7
 * plus coercion, list flags, PATCH and bad input. Storage is per file: each test uses its
 * own role names; only item 2 uses the `ssh-two` mount, which it needs empty.
 */
import { describe, expect, it } from "vitest";
import { uniqueName, vault } from "../../helpers/vault";

const CA_ROLE = { key_type: "ca", allow_user_certificates: true };

async function writeRole(name: string, body: Record<string, unknown>, mount = "ssh") {
  return vault("POST", `${mount}/roles/${name}`, { body });
}

async function readRole(name: string, mount = "ssh") {
  return vault("GET", `${mount}/roles/${name}`);
}

describe("§8 item 1: OTP role CRUD (TestSSHBackend_OTPRoleCrud)", () => {
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

describe("§8 item 2: list (TestSSHBackend_RoleList, S2 list flag)", () => {
  it("lists names and key types, sorted; 404 when empty", async () => {
    const empty = await vault("GET", "ssh-two/roles?list=true");
    expect(empty.status).toBe(404);
    expect(empty.json).toEqual({ errors: [] });

    await writeRole("testOTPRoleName", { key_type: "otp", default_user: "vaultssh", cidr_list: "127.0.0.1/32" }, "ssh-two");
    let list = await vault("GET", "ssh-two/roles?list=true");
    expect(list.status).toBe(200);
    expect(list.json.data).toEqual({ keys: ["testOTPRoleName"], key_info: { testOTPRoleName: { key_type: "otp" } } });

    await writeRole("test@RoleName", { key_type: "otp", default_user: "vaultssh", cidr_list: "127.0.0.1/32" }, "ssh-two");
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

describe("§8 item 6: role write errors (Vault's texts; S4 makes the 500s 400)", () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ["no key_type", { default_user: "u" }, "missing key type"],
    ["key_type foo", { key_type: "foo" }, "invalid key type"],
    ["key_type dynamic", { key_type: "dynamic" }, "dynamic key type roles are no longer supported"],
    ["OTP without default_user", { key_type: "otp" }, "missing default user"],
    [
      "CA with neither allow flag",
      { key_type: "ca" },
      "Either 'allow_user_certificates' or 'allow_host_certificates' must be set to 'true'",
    ],
    [
      "CA ttl 2h > max_ttl 1h",
      { ...CA_ROLE, ttl: "2h", max_ttl: "1h" },
      '"ttl" value must be less than "max_ttl" when both are specified',
    ],
    ["algorithm_signer foo (S4: 400)", { ...CA_ROLE, algorithm_signer: "foo" }, 'unknown algorithm signer "foo"'],
    [
      "cidr_list bogus (S4: 400)",
      { key_type: "otp", default_user: "u", cidr_list: "bogus" },
      "failed to validate cidr_list: invalid CIDR address: bogus",
    ],
    [
      "cidr_list of separators only",
      { key_type: "otp", default_user: "u", cidr_list: " , ," },
      "failed to validate cidr_list: missing CIDR blocks that needs validation",
    ],
    [
      "exclude_cidr_list bogus",
      { key_type: "otp", default_user: "u", cidr_list: "10.0.0.0/8", exclude_cidr_list: "10.0.0.1" },
      "failed to validate exclude_cidr_list entry: invalid CIDR address: 10.0.0.1",
    ],
    ["cidr_list validated for CA roles too", { ...CA_ROLE, cidr_list: "nope" }, "failed to validate cidr_list: invalid CIDR address: nope"],
  ];
  for (const [what, body, message] of cases) {
    it(what, async () => {
      const name = uniqueName();
      const res = await writeRole(name, body);
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ errors: [message] });
      expect((await readRole(name)).status).toBe(404);
    });
  }

  it("checks in Vault's order: cidr_list before key_type, algorithm_signer before the allow flags", async () => {
    expect((await writeRole(uniqueName(), { cidr_list: "x" })).json.errors[0]).toContain("failed to validate cidr_list");
    expect((await writeRole(uniqueName(), { key_type: "ca", algorithm_signer: "x" })).json.errors[0]).toBe(
      'unknown algorithm signer "x"',
    );
    // Equal ttl and max_ttl is allowed.
    expect((await writeRole(uniqueName(), { ...CA_ROLE, ttl: "1h", max_ttl: 3600 })).status).toBe(204);
  });
});

describe("§8 item 7: CA role read (S12: 23 Vault fields + allow_empty_principals + S20's issuer_ref + S22's store_certificates, compact durations)", () => {
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

describe("coercion of inputs as Vault's framework does (reference §1.6)", () => {
  it("accepts string bools, numeric strings, Go durations and day suffixes", async () => {
    const name = uniqueName("co");
    const res = await writeRole(name, {
      key_type: "ca",
      allow_user_certificates: "true",
      allow_host_certificates: "t",
      allow_bare_domains: 1,
      allow_subdomains: "0",
      ttl: "90",
      max_ttl: "1d",
      not_before_duration: "1m0s",
    });
    expect(res.status).toBe(204);
    const data = (await readRole(name)).json.data;
    expect(data).toMatchObject({
      allow_user_certificates: true,
      allow_host_certificates: true,
      allow_bare_domains: true,
      allow_subdomains: false,
      ttl: "1m30s",
      max_ttl: "24h",
      not_before_duration: "1m",
    });
  });

  it("port: numeric string; 0 means 22; out of range is 400", async () => {
    const name = uniqueName("port");
    await writeRole(name, { key_type: "otp", default_user: "u", port: "2022" });
    expect((await readRole(name)).json.data.port).toBe(2022);
    await writeRole(name, { key_type: "otp", default_user: "u", port: 0 });
    expect((await readRole(name)).json.data.port).toBe(22);
    const bad = await writeRole(name, { key_type: "otp", default_user: "u", port: 70000 });
    expect(bad.status).toBe(400);
    expect((await readRole(name)).json.data.port).toBe(22);
  });

  it("cidr_list entries are trimmed and read back joined by ',' (S12)", async () => {
    const name = uniqueName("cidr");
    await writeRole(name, {
      key_type: "otp",
      default_user: "u",
      cidr_list: " 10.0.0.0/8 , 192.168.0.0/16,, ",
      exclude_cidr_list: "10.1.0.0/16 ",
    });
    const data = (await readRole(name)).json.data;
    expect(data.cidr_list).toBe("10.0.0.0/8,192.168.0.0/16");
    expect(data.exclude_cidr_list).toBe("10.1.0.0/16");
  });

  it("unknown fields are ignored with Vault's warning; the role is still written", async () => {
    const name = uniqueName("warn");
    const res = await writeRole(name, { ...CA_ROLE, zeta: 1, alpha: "x", key_bits: 2048 });
    expect(res.status).toBe(200);
    expect(res.json.warnings).toEqual(["Endpoint ignored these unrecognized parameters: [alpha key_bits zeta]"]);
    expect(res.json.data).toBeNull();
    expect((await readRole(name)).status).toBe(200);
  });

  it("a `role` field in the body is replaced by the path, with Vault's warning", async () => {
    const name = uniqueName("path");
    const res = await writeRole(name, { ...CA_ROLE, role: "other" });
    expect(res.json.warnings).toEqual([
      "Endpoint replaced the value of these parameters with the values captured from the endpoint's path: [role]",
    ]);
    expect((await readRole(name)).status).toBe(200);
    expect((await readRole("other")).status).toBe(404);
  });
});

describe("bad input: a 4xx in Vault's format that changes nothing", () => {
  const bad: [string, Record<string, unknown>, string | RegExp][] = [
    ["bool from garbage", { allow_user_certificates: "maybe" }, /^Field validation failed: error converting input maybe for field "allow_user_certificates"/],
    ["duration from garbage", { ttl: "abc" }, /^Field validation failed: error converting input abc for field "ttl": time: invalid duration/],
    ["negative duration", { ttl: -5 }, "Field validation failed: error converting input -5 for field \"ttl\": cannot provide negative value '-5'"],
    ["huge duration", { max_ttl: "99999999999" }, /^Field validation failed: error converting input 99999999999 for field "max_ttl": duration is larger than the maximum/],
    ["huge not_before_duration", { not_before_duration: 1e13 }, /^Field validation failed: .*"not_before_duration"/],
    ["string where a map goes", { default_extensions: "permit-pty" }, /^Field validation failed: error converting input permit-pty for field "default_extensions"/],
    ["object where a string goes", { allowed_users: { a: 1 } }, /^Field validation failed: .*"allowed_users"/],
    ["array where a string goes", { cidr_list: ["10.0.0.0/8"] }, /^Field validation failed: .*"cidr_list"/],
    ["port from garbage", { port: "ssh" }, /^Field validation failed: .*"port"/],
    ["key lengths not numbers", { allowed_user_key_lengths: { rsa: "big" } }, 'error processing allowed_user_key_lengths: strconv.ParseInt: parsing "big": invalid syntax'],
    ["key lengths not a map", { allowed_user_key_lengths: [2048] }, /^Field validation failed: .*"allowed_user_key_lengths"/],
    ["key lengths with a fraction", { allowed_user_key_lengths: { rsa: 2048.5 } }, /^error processing allowed_user_key_lengths:/],
    ["unbalanced template", { allowed_users_template: true, allowed_users: "{{identity.entity.name" }, /^invalid identity template in allowed_users: .*unbalanced templating characters$/],
    ["unknown template directive", { default_user_template: true, default_user: "{{identity.nope}}" }, /^invalid identity template in default_user: .*unknown template directive/],
    ["bogus extension template", { default_extensions_template: true, default_extensions: { "login@x": "{{ }}}" } }, /^invalid identity template in default_extensions/],
  ];

  it.each(bad)("%s → 400 and the previous role stays intact", async (_what, patch, message) => {
    const name = uniqueName("bad");
    const original = { ...CA_ROLE, allowed_users: "alice", ttl: "1h" };
    expect((await writeRole(name, original)).status).toBe(204);
    const before = (await readRole(name)).json.data;

    const res = await writeRole(name, { ...original, ...patch });
    expect(res.status).toBe(400);
    expect(res.json.errors).toHaveLength(1);
    if (typeof message === "string") expect(res.json.errors[0]).toBe(message);
    else expect(res.json.errors[0]).toMatch(message);
    expect((await readRole(name)).json.data).toEqual(before);
  });

  it("a body that is not a JSON object is 400", async () => {
    const name = uniqueName("json");
    const res = await vault("POST", `ssh/roles/${name}`, { rawBody: "[1,2]", headers: { "Content-Type": "application/json" } });
    expect(res.status).toBe(400);
    const broken = await vault("POST", `ssh/roles/${name}`, { rawBody: "{nope", headers: { "Content-Type": "application/json" } });
    expect(broken.status).toBe(400);
    expect(broken.json.errors[0]).toMatch(/^failed to parse JSON input/);
    expect((await readRole(name)).status).toBe(404);
  });

  it("a role name outside Vault's grammar is an unknown path", async () => {
    expect((await vault("POST", "ssh/roles/-bad-", { body: CA_ROLE })).status).toBe(404);
    expect((await vault("POST", "ssh/roles/a/b", { body: CA_ROLE })).status).toBe(404);
  });
});

describe("POST is a full replace; PATCH is a JSON merge patch (S12)", () => {
  it("POST replaces: omitted fields return to their defaults", async () => {
    const name = uniqueName("rep");
    await writeRole(name, { ...CA_ROLE, allowed_users: "alice", default_extensions: { "permit-pty": "" } });
    await writeRole(name, { ...CA_ROLE, allowed_users: "bob" });
    const data = (await readRole(name)).json.data;
    expect(data.allowed_users).toBe("bob");
    expect(data.default_extensions).toEqual({});
  });

  it("PATCH merges maps key by key, removes keys set to null, resets null fields, keeps the rest", async () => {
    const name = uniqueName("patch");
    await writeRole(name, {
      ...CA_ROLE,
      allowed_users: "alice",
      ttl: "1h",
      default_extensions: { "permit-pty": "", "permit-agent-forwarding": "" },
      allowed_user_key_lengths: { rsa: [2048] },
    });
    const res = await vault("PATCH", `ssh/roles/${name}`, {
      body: {
        default_extensions: { "permit-agent-forwarding": null, "permit-X11-forwarding": "" },
        allowed_user_key_lengths: { ed25519: 0 },
        ttl: null,
        allow_host_certificates: true,
      },
    });
    expect(res.status).toBe(204);
    const data = (await readRole(name)).json.data;
    expect(data.default_extensions).toEqual({ "permit-pty": "", "permit-X11-forwarding": "" });
    expect(data.allowed_user_key_lengths).toEqual({ rsa: [2048], ed25519: [0] });
    expect(data.ttl).toBe("0s");
    expect(data.allow_host_certificates).toBe(true);
    expect(data.allowed_users).toBe("alice");
    expect(data.not_before_duration).toBe("30s");
  });

  it("PATCH accepts application/merge-patch+json", async () => {
    const name = uniqueName("patch");
    await writeRole(name, { key_type: "otp", default_user: "u", cidr_list: "10.0.0.0/8" });
    const res = await vault("PATCH", `ssh/roles/${name}`, {
      rawBody: JSON.stringify({ allowed_users: "a,b", port: 2200 }),
      headers: { "Content-Type": "application/merge-patch+json" },
    });
    expect(res.status).toBe(204);
    expect((await readRole(name)).json.data).toEqual({
      key_type: "otp",
      default_user: "u",
      cidr_list: "10.0.0.0/8",
      exclude_cidr_list: "",
      port: 2200,
      allowed_users: "a,b",
    });
  });

  it("PATCH validates the merged role like a write; a failure changes nothing", async () => {
    const name = uniqueName("patch");
    await writeRole(name, { ...CA_ROLE, ttl: "1h", max_ttl: "2h" });
    const before = (await readRole(name)).json.data;
    const tooLong = await vault("PATCH", `ssh/roles/${name}`, { body: { ttl: "3h" } });
    expect(tooLong.status).toBe(400);
    expect(tooLong.json.errors).toEqual(['"ttl" value must be less than "max_ttl" when both are specified']);
    const noFlags = await vault("PATCH", `ssh/roles/${name}`, { body: { allow_user_certificates: null } });
    expect(noFlags.json.errors).toEqual(["Either 'allow_user_certificates' or 'allow_host_certificates' must be set to 'true'"]);
    const badType = await vault("PATCH", `ssh/roles/${name}`, { body: { ttl: "soon" } });
    expect(badType.status).toBe(400);
    expect((await readRole(name)).json.data).toEqual(before);
  });

  it("PATCH warns about unknown fields; PATCH of an absent role is 404", async () => {
    const name = uniqueName("patch");
    await writeRole(name, CA_ROLE);
    const res = await vault("PATCH", `ssh/roles/${name}`, { body: { bogus: 1 } });
    expect(res.status).toBe(200);
    expect(res.json.warnings).toEqual(["Endpoint ignored these unrecognized parameters: [bogus]"]);
    const missing = await vault("PATCH", `ssh/roles/${uniqueName()}`, { body: { ttl: "1h" } });
    expect(missing.status).toBe(404);
    expect(missing.json).toEqual({ errors: [] });
  });

  it("PATCH can change the key type; the result is validated as that type", async () => {
    const name = uniqueName("patch");
    await writeRole(name, { key_type: "otp", default_user: "u", cidr_list: "10.0.0.0/8" });
    const res = await vault("PATCH", `ssh/roles/${name}`, { body: { key_type: "ca", allow_user_certificates: true } });
    expect(res.status).toBe(204);
    const data = (await readRole(name)).json.data;
    expect(data.key_type).toBe("ca");
    expect(data.default_user).toBe("u");
    expect(Object.keys(data)).toHaveLength(26);
  });
});

describe("role deletion and the zero-address list (reference §3.4)", () => {
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

describe("issue 14 finding 14: default critical options a caller may replace", () => {
  const WARNING =
    "default_critical_options are not enforced: allowed_critical_options is empty, so a signing request that sends critical_options replaces the defaults with any options it chooses; set allowed_critical_options to limit what callers may send";

  it("warns on a write and a patch when default_critical_options is set and allowed_critical_options is empty", async () => {
    const name = uniqueName();
    const res = await writeRole(name, { ...CA_ROLE, default_critical_options: { "force-command": "/usr/bin/true" } });
    expect(res.status).toBe(200);
    expect(res.json.warnings).toEqual([WARNING]);
    // The role is stored as Vault stores it.
    expect((await readRole(name)).json.data.default_critical_options).toEqual({ "force-command": "/usr/bin/true" });
    const patched = await vault("PATCH", `ssh/roles/${name}`, { body: { ttl: "1h" } });
    expect(patched.status).toBe(200);
    expect(patched.json.warnings).toEqual([WARNING]);
  });

  it("does not warn when allowed_critical_options lists names, or without defaults", async () => {
    const limited = await writeRole(uniqueName(), {
      ...CA_ROLE,
      default_critical_options: { "force-command": "/usr/bin/true" },
      allowed_critical_options: "force-command",
    });
    expect(limited.status).toBe(204);
    expect((await writeRole(uniqueName(), CA_ROLE)).status).toBe(204);
  });
});
