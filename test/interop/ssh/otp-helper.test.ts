/**
 * host/keyway-ssh-helper on its own (decision S19), the way pam_exec runs it: the OTP on
 * stdin, PAM_USER in the environment, against the real Keyway Worker. Covers what the
 * sshd end-to-end test does not reach cheaply: CIDR matching (IPv4 and IPv6), role and
 * configuration checks, and -verify-only.
 *
 * Needs curl (apt-get install curl).
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { vault } from "../../support/client";
import { findBinary, OpensshSandbox, runCommand } from "../../support/openssh";
import { type RunningKeyway, startKeyway } from "../../support/worker";

const HELPER = path.resolve(import.meta.dirname, "../../../host/keyway-ssh-helper");
const ROLE = "helper-otp";

let keyway: RunningKeyway;
let dir: OpensshSandbox;

async function otpFor(ip: string, username = "deploy", role = ROLE): Promise<string> {
  const res = await vault(keyway, "POST", `ssh/creds/${role}`, { ip, username });
  expect(res.status, res.text).toBe(200);
  return res.json.data.key as string;
}

/** Run the helper as pam_exec would, with a configuration written from `config`. */
async function helper(config: string, options: { otp?: string; user?: string; args?: string[] } = {}) {
  const configPath = await dir.write(`conf-${crypto.randomUUID()}.conf`, config, 0o644);
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, PAM_TYPE: "auth", PAM_SERVICE: "sshd" };
  if (options.user !== undefined) env.PAM_USER = options.user;
  return runCommand(HELPER, [`-config=${configPath}`, ...(options.args ?? [])], { env, input: options.otp ?? "" });
}

const conf = (extra = "") => `keyway_addr = "${keyway.url}"\nssh_mount_point = "ssh"\n${extra}`;

beforeAll(async () => {
  findBinary("curl", "curl");
  keyway = await startKeyway();
  dir = await OpensshSandbox.create("keyway-otp-helper-");
  const role = await vault(keyway, "POST", `ssh/roles/${ROLE}`, {
    key_type: "otp",
    default_user: "deploy",
    allowed_users: "deploy,other",
    cidr_list: "0.0.0.0/0,2001:db8::/32",
  });
  expect(role.status, role.text).toBe(204);
}, 180_000);

afterAll(async () => {
  await keyway?.stop();
  await dir?.dispose();
});

describe("keyway-ssh-helper", () => {
  it("-verify-only exits 0 on verify-echo-response, 1 when Keyway is not there", async () => {
    expect((await helper(conf(), { args: ["-verify-only"] })).code).toBe(0);
    const wrongMount = await helper(`keyway_addr = "${keyway.url}"\nssh_mount_point = "nope"\n`, {
      args: ["-verify-only"],
    });
    expect(wrongMount.code).toBe(1);
    const down = await helper(`keyway_addr = "http://127.0.0.1:9"\n`, { args: ["-verify-only"] });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain("could not reach");
  });

  it("accepts an OTP for the PAM user inside allowed_cidr_list, once; the OTP is consumed", async () => {
    const otp = await otpFor("10.20.30.40");
    const ok = await helper(conf('allowed_cidr_list = "10.20.0.0/16"\n'), { otp, user: "deploy" });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stderr).not.toContain(otp);
    const again = await helper(conf('allowed_cidr_list = "10.20.0.0/16"\n'), { otp, user: "deploy" });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("OTP not found");
  });

  it("accepts the NUL-terminated token older pam_exec versions write", async () => {
    const otp = await otpFor("10.20.30.41");
    const res = await helper(conf('allowed_cidr_list = "10.20.30.41/32"\n'), { otp: `${otp}\0`, user: "deploy" });
    expect(res.code, res.stderr).toBe(0);
  });

  const cidrCases: [string, string, number][] = [
    ["192.168.7.9", "192.168.0.0/16", 0],
    ["192.168.7.9", "192.168.7.8/31", 0],
    ["192.168.7.10", "192.168.7.8/31", 1],
    ["192.168.7.9", "10.0.0.0/8, 192.168.7.9/32", 0],
    ["172.31.255.255", "172.16.0.0/12", 0],
    ["172.32.0.0", "172.16.0.0/12", 1],
    ["8.8.8.8", "0.0.0.0/0", 0],
    ["8.8.8.8", "::/0", 1], // IPv4 addresses match only IPv4 blocks
    ["2001:db8:1:2::5", "2001:db8:1::/48", 0],
    ["2001:db8:2::5", "2001:db8:1::/48", 1],
    ["2001:db8:8000::1", "2001:db8:8000::/33", 0],
    ["2001:db8:7fff::1", "2001:db8:8000::/33", 1],
    ["2001:db8::1", "2001:0db8:0000::1/128", 0],
    ["2001:db8::1", "", 1],
  ];
  for (const [ip, cidrs, code] of cidrCases) {
    it(`OTP for ${ip} with allowed_cidr_list "${cidrs}" → exit ${code}`, async () => {
      const otp = await otpFor(ip);
      const res = await helper(conf(`allowed_cidr_list = "${cidrs}"\n`), { otp, user: "deploy" });
      expect(res.code, res.stderr).toBe(code);
      if (code === 1) expect(res.stderr).toContain(`issued for ip ${ip}`);
    });
  }

  it("refuses an OTP of another user, and of a role outside allowed_roles", async () => {
    const forOther = await otpFor("10.1.1.1", "other");
    const res = await helper(conf('allowed_cidr_list = "10.0.0.0/8"\n'), { otp: forOther, user: "deploy" });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("the OTP was issued for user other");

    const otp = await otpFor("10.1.1.2");
    const roles = await helper(conf('allowed_cidr_list = "10.0.0.0/8"\nallowed_roles = "a, b"\n'), {
      otp,
      user: "deploy",
    });
    expect(roles.code).toBe(1);
    expect(roles.stderr).toContain(`role ${ROLE} is not in allowed_roles`);

    const listed = await otpFor("10.1.1.3");
    const ok = await helper(conf(`allowed_cidr_list = "10.0.0.0/8"\nallowed_roles = "a, ${ROLE}"\n`), {
      otp: listed,
      user: "deploy",
    });
    expect(ok.code, ok.stderr).toBe(0);
  });

  it("refuses what is not an OTP without asking Keyway, and a missing PAM_USER", async () => {
    for (const otp of ["", "hunter2", `${crypto.randomUUID().toUpperCase()}`, `"}{"otp":"x`]) {
      const res = await helper(conf(), { otp, user: "deploy" });
      expect(res.code).toBe(1);
      expect(res.stderr).toContain("the password is not an OTP");
    }
    const noUser = await helper(conf(), { otp: crypto.randomUUID() });
    expect(noUser.code).toBe(1);
    expect(noUser.stderr).toContain("PAM_USER is not set");
  });

  it("checks its configuration: unknown keys, plain http off loopback, vault_addr as a synonym", async () => {
    const typo = await helper(`${conf()}alowed_roles = "x"\n`, { args: ["-verify-only"] });
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain('unknown configuration key "alowed_roles"');

    const remote = await helper(`keyway_addr = "http://192.0.2.1:8200"\n`, { args: ["-verify-only"] });
    expect(remote.code).toBe(1);
    expect(remote.stderr).toContain("must use https://");

    const vaultStyle = await helper(
      `# vault-ssh-helper style\nvault_addr = "${keyway.url}/"\nssh_mount_point = "ssh/"\ntls_skip_verify = false\nallowed_roles = "*" // any\n`,
      { args: ["-verify-only"] },
    );
    expect(vaultStyle.code, vaultStyle.stderr).toBe(0);

    const missing = await runCommand(HELPER, ["-config=/nonexistent/keyway.conf", "-verify-only"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("cannot read configuration file");
  });
});
