/**
 * Role input (decisions S4, S12): Vault's backend_test.go (Vault's error texts, S4's
 * 400s), coercion as Vault's framework does it, bad input that changes nothing, and the
 * warning about default critical options a caller may replace. Uses the `ssh` mount only.
 */
import { describe, expect, it } from "vitest";
import { CA_ROLE, readRole, writeRole } from "../../../helpers/ssh-roles";
import { uniqueName, vault } from "../../../helpers/vault";

describe("role write errors (Vault's texts; S4 makes the 500s 400)", () => {
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
    [
      "cidr_list validated for CA roles too",
      { ...CA_ROLE, cidr_list: "nope" },
      "failed to validate cidr_list: invalid CIDR address: nope",
    ],
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
    expect((await writeRole(uniqueName(), { cidr_list: "x" })).json.errors[0]).toContain(
      "failed to validate cidr_list",
    );
    expect((await writeRole(uniqueName(), { key_type: "ca", algorithm_signer: "x" })).json.errors[0]).toBe(
      'unknown algorithm signer "x"',
    );
    // Equal ttl and max_ttl is allowed.
    expect((await writeRole(uniqueName(), { ...CA_ROLE, ttl: "1h", max_ttl: 3600 })).status).toBe(204);
  });
});

describe("coercion of inputs as Vault's framework does (Vault's sdk/framework/field_data.go)", () => {
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
    [
      "bool from garbage",
      { allow_user_certificates: "maybe" },
      /^Field validation failed: error converting input maybe for field "allow_user_certificates"/,
    ],
    [
      "duration from garbage",
      { ttl: "abc" },
      /^Field validation failed: error converting input abc for field "ttl": time: invalid duration/,
    ],
    [
      "negative duration",
      { ttl: -5 },
      "Field validation failed: error converting input -5 for field \"ttl\": cannot provide negative value '-5'",
    ],
    [
      "huge duration",
      { max_ttl: "99999999999" },
      /^Field validation failed: error converting input 99999999999 for field "max_ttl": duration is larger than the maximum/,
    ],
    ["huge not_before_duration", { not_before_duration: 1e13 }, /^Field validation failed: .*"not_before_duration"/],
    [
      "string where a map goes",
      { default_extensions: "permit-pty" },
      /^Field validation failed: error converting input permit-pty for field "default_extensions"/,
    ],
    ["object where a string goes", { allowed_users: { a: 1 } }, /^Field validation failed: .*"allowed_users"/],
    ["array where a string goes", { cidr_list: ["10.0.0.0/8"] }, /^Field validation failed: .*"cidr_list"/],
    ["port from garbage", { port: "ssh" }, /^Field validation failed: .*"port"/],
    [
      "key lengths not numbers",
      { allowed_user_key_lengths: { rsa: "big" } },
      'error processing allowed_user_key_lengths: strconv.ParseInt: parsing "big": invalid syntax',
    ],
    [
      "key lengths not a map",
      { allowed_user_key_lengths: [2048] },
      /^Field validation failed: .*"allowed_user_key_lengths"/,
    ],
    [
      "key lengths with a fraction",
      { allowed_user_key_lengths: { rsa: 2048.5 } },
      /^error processing allowed_user_key_lengths:/,
    ],
    [
      "unbalanced template",
      { allowed_users_template: true, allowed_users: "{{identity.entity.name" },
      /^invalid identity template in allowed_users: .*unbalanced templating characters$/,
    ],
    [
      "unknown template directive",
      { default_user_template: true, default_user: "{{identity.nope}}" },
      /^invalid identity template in default_user: .*unknown template directive/,
    ],
    [
      "bogus extension template",
      { default_extensions_template: true, default_extensions: { "login@x": "{{ }}}" } },
      /^invalid identity template in default_extensions/,
    ],
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
    const res = await vault("POST", `ssh/roles/${name}`, {
      rawBody: "[1,2]",
      headers: { "Content-Type": "application/json" },
    });
    expect(res.status).toBe(400);
    const broken = await vault("POST", `ssh/roles/${name}`, {
      rawBody: "{nope",
      headers: { "Content-Type": "application/json" },
    });
    expect(broken.status).toBe(400);
    expect(broken.json.errors[0]).toMatch(/^failed to parse JSON input/);
    expect((await readRole(name)).status).toBe(404);
  });

  it("a role name outside Vault's grammar is an unknown path", async () => {
    expect((await vault("POST", "ssh/roles/-bad-", { body: CA_ROLE })).status).toBe(404);
    expect((await vault("POST", "ssh/roles/a/b", { body: CA_ROLE })).status).toBe(404);
  });
});

describe("default critical options a caller may replace", () => {
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
