/**
 * End to end (decisions B7, S13, S19): a real sshd on loopback authenticates through PAM,
 * whose `auth` stack runs the shipped host/keyway-ssh-helper against the real Keyway
 * Worker. An OTP from `creds` logs in once; the same OTP again, an OTP for another user,
 * for another IP or for a role the host does not allow, and a made-up OTP, do not.
 *
 * Needs root (useradd, /etc/pam.d) and: openssh-server, openssh-client, sshpass, curl.
 */
import { networkInterfaces } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { vault } from "../../support/client";
import { findBinary, OpensshSandbox, runCommand } from "../../support/openssh";
import { ensureUser, type PamSshd, passwordLogin, removeUser, startPamSshd } from "../../support/sshd-pam";
import { type RunningKeyway, startKeyway } from "../../support/worker";

const HELPER = path.resolve(import.meta.dirname, "../../../host/keyway-ssh-helper");
const USER_A = "kwotp-alice";
const USER_B = "kwotp-bob";
const ROLE = "otp-e2e";
const OTHER_ROLE = "otp-e2e-elsewhere";
/** TEST-NET-2 (RFC 5737): never an address of the test machine. */
const FOREIGN_IP = "198.51.100.77";

let keyway: RunningKeyway;
let sshd: PamSshd;
let client: OpensshSandbox;
let configPath: string;
const createdUsers: string[] = [];

async function otpFor(role: string, username: string, ip: string): Promise<string> {
  const res = await vault(keyway, "POST", `ssh/creds/${role}`, { username, ip });
  expect(res.status, res.text).toBe(200);
  return res.json.data.key as string;
}

async function writeHelperConfig(lines: Record<string, string>): Promise<void> {
  const text = Object.entries(lines)
    .map(([k, v]) => `${k} = "${v}"`)
    .join("\n");
  await client.write("keyway-ssh-helper.conf", `# written by otp-sshd.test.ts\n${text}\n`, 0o644);
}

function defaultConfig(): Record<string, string> {
  return { keyway_addr: keyway.url, ssh_mount_point: "ssh", allowed_cidr_list: "127.0.0.0/8", allowed_roles: ROLE };
}

/** A non-loopback IPv4 address of this machine, if it has one. */
function hostAddress(): string | null {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  }
  return null;
}

beforeAll(async () => {
  for (const [tool, pkg] of [
    ["sshpass", "sshpass"],
    ["curl", "curl"],
    ["useradd", "passwd"],
  ]) {
    findBinary(tool!, pkg!);
  }
  for (const user of [USER_A, USER_B]) if (await ensureUser(user)) createdUsers.push(user);
  keyway = await startKeyway();
  client = await OpensshSandbox.create("keyway-otp-client-");
  configPath = client.path("keyway-ssh-helper.conf");
  await writeHelperConfig(defaultConfig());
  sshd = await startPamSshd({
    authLines: [
      `auth requisite pam_exec.so quiet expose_authtok log=${client.path("helper.log")} ${HELPER} -config=${configPath}`,
    ],
  });
  const host = hostAddress();
  const role = await vault(keyway, "POST", `ssh/roles/${ROLE}`, {
    key_type: "otp",
    default_user: USER_A,
    allowed_users: `${USER_A},${USER_B}`,
    cidr_list: ["127.0.0.0/8", `${FOREIGN_IP}/32`, ...(host ? [`${host}/32`] : [])].join(","),
  });
  expect(role.status, role.text).toBe(204);
  const other = await vault(keyway, "POST", `ssh/roles/${OTHER_ROLE}`, {
    key_type: "otp",
    default_user: USER_A,
    cidr_list: "127.0.0.0/8",
  });
  expect(other.status, other.text).toBe(204);
}, 180_000);

afterAll(async () => {
  await sshd?.stop();
  await keyway?.stop();
  await client?.dispose();
  for (const user of createdUsers) await removeUser(user);
});

describe("OTP login through sshd, PAM and keyway-ssh-helper (S19)", () => {
  it("-verify-only answers 0 when Keyway echoes verify-echo-response", async () => {
    const res = await runCommand(HELPER, [`-config=${configPath}`, "-verify-only"]);
    expect(res.code, res.stderr).toBe(0);
  });

  it("an OTP logs its user in exactly once", async () => {
    const otp = await otpFor(ROLE, USER_A, "127.0.0.1");
    const first = await passwordLogin(sshd.port, USER_A, otp, client);
    expect(first.code, `${first.stderr}\n${sshd.log()}`).toBe(0);
    expect(first.stdout).toContain("keyway-otp-login-ok");
    expect(sshd.log()).toContain(`Accepted keyboard-interactive/pam for ${USER_A}`);

    const second = await passwordLogin(sshd.port, USER_A, otp, client);
    expect(second.code).not.toBe(0);
    expect(second.stdout).not.toContain("keyway-otp-login-ok");
    expect(await client.read("helper.log")).toContain("OTP not found");
  });

  it("an OTP issued for another user does not log in, and is spent by the attempt", async () => {
    const otp = await otpFor(ROLE, USER_B, "127.0.0.1");
    const res = await passwordLogin(sshd.port, USER_A, otp, client);
    expect(res.code).not.toBe(0);
    expect(await client.read("helper.log")).toContain(`the OTP was issued for user ${USER_B}`);
    expect((await passwordLogin(sshd.port, USER_B, otp, client)).code).not.toBe(0);
  });

  it("an OTP issued for another IP does not log in", async () => {
    const otp = await otpFor(ROLE, USER_A, FOREIGN_IP);
    const res = await passwordLogin(sshd.port, USER_A, otp, client);
    expect(res.code).not.toBe(0);
    expect(await client.read("helper.log")).toContain(`issued for ip ${FOREIGN_IP}`);
  });

  it("an OTP of a role outside allowed_roles does not log in", async () => {
    const otp = await otpFor(OTHER_ROLE, USER_A, "127.0.0.1");
    const res = await passwordLogin(sshd.port, USER_A, otp, client);
    expect(res.code).not.toBe(0);
    expect(await client.read("helper.log")).toContain(`role ${OTHER_ROLE} is not in allowed_roles`);
  });

  it("a made-up OTP and a revoked one do not log in", async () => {
    expect((await passwordLogin(sshd.port, USER_A, crypto.randomUUID(), client)).code).not.toBe(0);
    const creds = await vault(keyway, "POST", `ssh/creds/${ROLE}`, { username: USER_A, ip: "127.0.0.1" });
    expect((await vault(keyway, "PUT", "sys/leases/revoke", { lease_id: creds.json.lease_id })).status).toBe(204);
    expect((await passwordLogin(sshd.port, USER_A, creds.json.data.key, client)).code).not.toBe(0);
  });

  it("the other user logs in with an OTP of their own", async () => {
    const otp = await otpFor(ROLE, USER_B, "127.0.0.1");
    const res = await passwordLogin(sshd.port, USER_B, otp, client);
    expect(res.code, `${res.stderr}\n${await client.read("helper.log")}`).toBe(0);
  });

  it("without allowed_cidr_list only an OTP for one of the host's own addresses logs in", async () => {
    await writeHelperConfig({ ...defaultConfig(), allowed_cidr_list: "" });
    try {
      const loopback = await otpFor(ROLE, USER_A, "127.0.0.1");
      expect((await passwordLogin(sshd.port, USER_A, loopback, client)).code).not.toBe(0);
      const host = hostAddress();
      if (host !== null) {
        const otp = await otpFor(ROLE, USER_A, host);
        const res = await passwordLogin(sshd.port, USER_A, otp, client);
        expect(res.code, `${res.stderr}\n${await client.read("helper.log")}`).toBe(0);
      }
    } finally {
      await writeHelperConfig(defaultConfig());
    }
  });
});
