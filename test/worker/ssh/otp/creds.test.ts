/**
 * `POST ssh/creds/:name` (Vault's path_creds_create.go, decisions S4, S13): the
 * cases of Vault's backend_test.go (TestBackend_AllowedUsers, zero-address roles, the answer's shape, errors).
 */
import { describe, expect, it } from "vitest";
import { uniqueName, vault } from "../../../helpers/vault";
import { issueOtp, writeOtpRole, writeRole } from "./helpers";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe("creds", () => {
  it("allowed_users decides which usernames get an OTP; the default user always does", async () => {
    const role = uniqueName("allowed");
    const base = { key_type: "otp", default_user: "ubuntu", cidr_list: "52.207.235.245/16" };
    await writeRole(role, { ...base, allowed_users: "test" });
    const creds = (username: string) =>
      vault("POST", `ssh/creds/${role}`, { body: { ip: "52.207.235.245", username } });

    const ubuntu = await creds("ubuntu");
    expect(ubuntu.status).toBe(200);
    expect(ubuntu.json.data).toMatchObject({ key_type: "otp", ip: "52.207.235.245", username: "ubuntu" });
    expect(ubuntu.json.data.key).not.toBe("");
    expect((await creds("test")).status).toBe(200);
    const random = await creds("random");
    expect(random.status).toBe(400);
    expect(random.json).toEqual({ errors: ["Username is not present is allowed users list"] });

    // Without allowed_users only the default user.
    await writeRole(role, base);
    expect((await creds("ubuntu")).status).toBe(200);
    const test = await creds("test");
    expect(test.status).toBe(400);
    expect(test.json).toEqual({
      errors: ["Username has to be either in allowed users list or has to be a default username"],
    });

    // `*` allows anyone.
    await writeRole(role, { ...base, allowed_users: "*" });
    expect((await creds("test")).status).toBe(200);
  });

  it("allowed_users entries are trimmed and matched exactly", async () => {
    const role = uniqueName("trim");
    await writeOtpRole(role, { allowed_users: "alice , bob" });
    expect((await vault("POST", `ssh/creds/${role}`, { body: { ip: "10.1.1.1", username: "bob" } })).status).toBe(200);
    expect((await vault("POST", `ssh/creds/${role}`, { body: { ip: "10.1.1.1", username: "Bob" } })).status).toBe(400);
  });

  it("an empty username falls back to the role's default_user", async () => {
    const role = uniqueName("default");
    await writeOtpRole(role, { default_user: "deploy" });
    const answer = await issueOtp(role, { ip: "10.2.3.4" });
    expect(answer.data.username).toBe("deploy");
  });

  it("a role without cidr_list needs the zero-address list", async () => {
    const role = uniqueName("zero");
    await writeRole(role, { key_type: "otp", default_user: "ubuntu" });
    const creds = () => vault("POST", `ssh/creds/${role}`, { body: { ip: "127.0.0.1" } });

    const before = await creds();
    expect(before.status).toBe(400);
    expect(before.json).toEqual({ errors: ["Error validating IP: IP does not belong to role"] });

    expect((await vault("POST", "ssh/config/zeroaddress", { body: { roles: role } })).status).toBe(204);
    const during = await creds();
    expect(during.status).toBe(200);
    expect(during.json.data.ip).toBe("127.0.0.1");

    expect((await vault("DELETE", "ssh/config/zeroaddress")).status).toBe(204);
    expect((await creds()).status).toBe(400);
  });

  it("a zero-address role ignores its cidr_list and exclude_cidr_list", async () => {
    const role = uniqueName("zero-excl");
    await writeOtpRole(role, { cidr_list: "10.0.0.0/8", exclude_cidr_list: "10.9.0.0/16" });
    expect((await vault("POST", "ssh/config/zeroaddress", { body: { roles: [role] } })).status).toBe(204);
    expect((await vault("POST", `ssh/creds/${role}`, { body: { ip: "10.9.1.1" } })).status).toBe(200);
    expect((await vault("POST", `ssh/creds/${role}`, { body: { ip: "192.168.7.7" } })).status).toBe(200);
    await vault("DELETE", "ssh/config/zeroaddress");
  });

  it("the answer has a lease of the mount's default TTL and exactly Vault's data keys", async () => {
    const role = uniqueName("shape");
    await writeOtpRole(role, { port: 2222 });
    const res = await vault("POST", `ssh/creds/${role}`, { body: { ip: "10.20.30.40", username: "ubuntu" } });
    expect(res.status).toBe(200);
    expect(res.json.lease_id).toMatch(new RegExp(`^ssh/creds/${role}/[0-9A-Za-z]{24}$`));
    expect(res.json.renewable).toBe(false);
    expect(res.json.lease_duration).toBe(2764800); // 768h, S1
    expect(Object.keys(res.json.data).sort()).toEqual(["ip", "key", "key_type", "port", "username"]);
    expect(res.json.data).toMatchObject({ key_type: "otp", ip: "10.20.30.40", username: "ubuntu", port: 2222 });
    expect(res.json.data.key).toMatch(UUID);
    expect(res.json.warnings).toBeNull();
  });

  it("a role delete and a mount tune apply at the next request (the per-isolate context cache is dropped)", async () => {
    const role = uniqueName("cached");
    await writeOtpRole(role, {}, "ssh-two");
    const creds = () => vault("POST", `ssh-two/creds/${role}`, { body: { ip: "10.1.2.3" } });
    expect((await creds()).json.lease_duration).toBe(2764800);
    expect((await vault("POST", "sys/mounts/ssh-two/tune", { body: { default_lease_ttl: "1h" } })).status).toBe(204);
    expect((await creds()).json.lease_duration).toBe(3600);
    expect((await vault("DELETE", `ssh-two/roles/${role}`)).status).toBe(204);
    const gone = await creds();
    expect(gone.status).toBe(400);
    expect(gone.json).toEqual({ errors: [`Role ${JSON.stringify(role)} not found`] });
  });

  it("every OTP and lease id is new", async () => {
    const role = uniqueName("fresh");
    await writeOtpRole(role);
    const answers = await Promise.all(Array.from({ length: 20 }, () => issueOtp(role, { ip: "10.0.0.1" })));
    expect(new Set(answers.map((a) => a.data.key)).size).toBe(20);
    expect(new Set(answers.map((a) => a.lease_id)).size).toBe(20);
  });

  it("missing ip, unknown role and a bad ip get Vault's messages", async () => {
    const role = uniqueName("errors");
    await writeOtpRole(role);
    const missing = await vault("POST", `ssh/creds/${role}`, { body: { username: "ubuntu" } });
    expect(missing.status).toBe(400);
    expect(missing.json).toEqual({ errors: ["Missing ip"] });

    const unknown = await vault("POST", "ssh/creds/x", { body: { ip: "10.0.0.1" } });
    expect(unknown.status).toBe(400);
    expect(unknown.json).toEqual({ errors: ['Role "x" not found'] });

    const bad = await vault("POST", `ssh/creds/${role}`, { body: { ip: "999.1.1.1" } });
    expect(bad.status).toBe(400);
    expect(bad.json).toEqual({ errors: ['Invalid IP "999.1.1.1"'] });
  });

  it("missing ip is checked before the role, as in Vault", async () => {
    const res = await vault("POST", "ssh/creds/no-such-role", { body: {} });
    expect(res.json).toEqual({ errors: ["Missing ip"] });
  });

  it("honours exclude_cidr_list (Vault's path_creds_create.go)", async () => {
    const role = uniqueName("exclude");
    await writeOtpRole(role, { cidr_list: "10.0.0.0/8, 192.168.0.0/16", exclude_cidr_list: "10.5.0.0/16" });
    expect((await vault("POST", `ssh/creds/${role}`, { body: { ip: "10.4.255.255" } })).status).toBe(200);
    expect((await vault("POST", `ssh/creds/${role}`, { body: { ip: "192.168.1.1" } })).status).toBe(200);
    const excluded = await vault("POST", `ssh/creds/${role}`, { body: { ip: "10.5.0.1" } });
    expect(excluded.status).toBe(400);
    expect(excluded.json).toEqual({ errors: ["Error validating IP: IP does not belong to role"] });
    const outside = await vault("POST", `ssh/creds/${role}`, { body: { ip: "11.0.0.1" } });
    expect(outside.json).toEqual({ errors: ["Error validating IP: IP does not belong to role"] });
  });

  it("returns the IP in Go's canonical form (Vault's path_creds_create.go)", async () => {
    const role = uniqueName("v6");
    await writeOtpRole(role, { cidr_list: "2001:db8::/32,10.0.0.0/8" });
    const v6 = await issueOtp(role, { ip: "2001:0DB8:0000:0000:0001:0000:0000:0001" });
    expect(v6.data.ip).toBe("2001:db8::1:0:0:1");
    const mapped = await issueOtp(role, { ip: "::ffff:10.1.2.3" });
    expect(mapped.data.ip).toBe("10.1.2.3");
  });

  it("does not let an IPv6 block such as ::/0 admit IPv4 addresses (Go's IPNet.Contains)", async () => {
    const role = uniqueName("v6all");
    await writeOtpRole(role, { cidr_list: "::/0" });
    expect((await vault("POST", `ssh/creds/${role}`, { body: { ip: "2001:db8::5" } })).status).toBe(200);
    const v4 = await vault("POST", `ssh/creds/${role}`, { body: { ip: "10.0.0.1" } });
    expect(v4.json).toEqual({ errors: ["Error validating IP: IP does not belong to role"] });
  });

  it("a CA role has no OTPs: 400 without a CIDR match, 400 `key type unknown` on the zero-address list (S4, B3)", async () => {
    const role = uniqueName("ca");
    await writeRole(role, { key_type: "ca", allow_user_certificates: true, default_user: "ubuntu" });
    const res = await vault("POST", `ssh/creds/${role}`, { body: { ip: "10.0.0.1" } });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ errors: ["Error validating IP: IP does not belong to role"] });

    await vault("POST", "ssh/config/zeroaddress", { body: { roles: role } });
    const zero = await vault("POST", `ssh/creds/${role}`, { body: { ip: "10.0.0.1" } });
    expect(zero.status).toBe(400);
    expect(zero.json).toEqual({ errors: ["key type unknown"] });
    await vault("DELETE", "ssh/config/zeroaddress");
  });

  it("warns about unknown parameters and a body `role` replaced by the path (Vault's sdk/framework)", async () => {
    const role = uniqueName("warn");
    await writeOtpRole(role);
    const res = await vault("POST", `ssh/creds/${role}`, { body: { ip: "10.0.0.1", color: "blue", role: "other" } });
    expect(res.status).toBe(200);
    expect(res.json.warnings).toEqual([
      "Endpoint ignored these unrecognized parameters: [color]",
      "Endpoint replaced the value of these parameters with the values captured from the endpoint's path: [role]",
    ]);
  });

  it("keeps mounts apart (S1): a role of one mount is unknown on another", async () => {
    const role = uniqueName("mount");
    await writeOtpRole(role, {}, "ssh-two");
    expect((await vault("POST", `ssh-two/creds/${role}`, { body: { ip: "10.0.0.1" } })).json.lease_id).toMatch(
      new RegExp(`^ssh-two/creds/${role}/`),
    );
    expect((await vault("POST", `ssh/creds/${role}`, { body: { ip: "10.0.0.1" } })).json).toEqual({
      errors: [`Role "${role}" not found`],
    });
  });

  it("accepts PUT as the same write (S2)", async () => {
    const role = uniqueName("put");
    await writeOtpRole(role);
    expect((await vault("PUT", `ssh/creds/${role}`, { body: { ip: "10.0.0.1" } })).status).toBe(200);
    expect((await vault("GET", `ssh/creds/${role}`)).status).toBe(405);
  });
});
