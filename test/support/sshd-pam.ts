/**
 * A real OpenSSH `sshd` on loopback that authenticates through PAM, for the OTP end-to-end
 * test (decisions B7, S19): `UsePAM yes`, keyboard-interactive only, and a PAM service of
 * its own that runs the shipped host helper.
 *
 * sshd names its PAM service after the program name it was started as (Debian's OpenSSH
 * 9.2 is built without a fixed `--with-pam-service`, and has no PAMServiceName option),
 * so sshd is started through a symlink `keyway-otp-<random>` → /usr/sbin/sshd and the
 * service file is `/etc/pam.d/keyway-otp-<random>`. /etc/pam.d/sshd is never touched;
 * the service file is removed again by `stop()`. Writing /etc/pam.d needs root (tests
 * run as root in CI).
 *
 * Missing binaries fail with an install hint; tests never skip themselves.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { findBinary, OpensshSandbox, type RunResult, runCommand } from "./openssh";
import { freePort, stopProcess } from "./sshd";

/**
 * Make sure a local account exists (useradd -m -s /bin/sh). Returns whether this call
 * created it, so the caller removes only what it made.
 */
export async function ensureUser(name: string): Promise<boolean> {
  const id = await runCommand(findBinary("id", "coreutils"), [name]);
  if (id.code === 0) return false;
  const add = await runCommand(findBinary("useradd", "passwd"), ["-m", "-s", "/bin/sh", name]);
  if (add.code !== 0) throw new Error(`useradd ${name} failed (tests must run as root): ${add.stderr}`);
  return true;
}

/** Remove an account made by ensureUser, with its home directory. */
export async function removeUser(name: string): Promise<void> {
  await runCommand(findBinary("userdel", "passwd"), ["-r", name]);
}

/** Options of {@link startPamSshd}. */
export interface PamSshdOptions {
  /** The `auth` lines of the PAM service, e.g. the pam_exec line running the helper. */
  authLines: readonly string[];
}

/** A running PAM-authenticating sshd. */
export interface PamSshd {
  /** 127.0.0.1 port it listens on. */
  readonly port: number;
  /** Its PAM service name (also the name it runs under). */
  readonly service: string;
  /** Its sandbox directory. */
  readonly sandbox: OpensshSandbox;
  /** Everything sshd has logged so far (`-e`). */
  log(): string;
  /** Stop sshd, remove the PAM service file and the sandbox. */
  stop(): Promise<void>;
}

/** Start sshd on a free loopback port with UsePAM and keyboard-interactive authentication only. */
export async function startPamSshd(options: PamSshdOptions): Promise<PamSshd> {
  const sshd = findBinary("sshd");
  const sandbox = await OpensshSandbox.create("keyway-otp-sshd-");
  const service = `keyway-otp-${crypto.randomUUID().slice(0, 8)}`;
  const pamFile = path.join("/etc/pam.d", service);
  const hostKey = sandbox.path("ssh_host_ed25519_key");
  const keygen = await sandbox.sshKeygen(["-q", "-t", "ed25519", "-N", "", "-C", "keyway-otp-host", "-f", hostKey]);
  if (keygen.code !== 0) throw new Error(`ssh-keygen failed: ${keygen.stderr}`);
  // sshd re-executes itself, so it must be started by absolute path: the symlink's.
  const program = sandbox.path(service);
  await symlink(sshd, program);
  await mkdir("/run/sshd", { recursive: true, mode: 0o755 });
  await writeFile(
    pamFile,
    [
      `# Written by Keyway's OTP end-to-end test (test/support/sshd-pam.ts); removed when it ends.`,
      ...options.authLines,
      "auth optional pam_unix.so not_set_pass use_first_pass nodelay",
      "account required pam_unix.so",
      "session required pam_unix.so",
      "",
    ].join("\n"),
    { mode: 0o644 },
  );

  const cleanup = async () => {
    await rm(pamFile, { force: true });
    await sandbox.dispose();
  };

  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const config = sandbox.path("sshd_config");
    await writeFile(
      config,
      [
        `Port ${port}`,
        "ListenAddress 127.0.0.1",
        `HostKey ${hostKey}`,
        "PidFile none",
        "UsePAM yes",
        "KbdInteractiveAuthentication yes",
        "PasswordAuthentication no",
        "PubkeyAuthentication no",
        "AuthorizedKeysFile none",
        "PermitRootLogin no",
        "StrictModes no",
        "PrintMotd no",
        "PrintLastLog no",
        "UseDNS no",
        "MaxAuthTries 2",
        "MaxStartups 100",
        "LogLevel VERBOSE",
        "",
      ].join("\n"),
    );
    const child: ChildProcess = spawn(program, ["-D", "-e", "-f", config], {
      cwd: sandbox.dir,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let output = "";
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      output += chunk;
    });
    const deadline = Date.now() + 10_000;
    while (!output.includes("Server listening on") && child.exitCode === null && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 25));
    }
    if (!output.includes("Server listening on")) {
      child.kill("SIGKILL");
      if (attempt < 5 && /Address already in use|Cannot bind/i.test(output)) continue;
      await cleanup();
      throw new Error(`sshd did not start:\n${output}`);
    }
    return {
      port,
      service,
      sandbox,
      log: () => output,
      async stop() {
        await stopProcess(child);
        await cleanup();
      },
    };
  }
}

/**
 * One `ssh` login typing `password` at the keyboard-interactive prompt, through sshpass
 * (the password goes through the environment, `sshpass -e`, never the command line).
 * Exit 0 and `keyway-otp-login-ok` on stdout mean the login worked.
 */
export function passwordLogin(
  port: number,
  user: string,
  password: string,
  sandbox: OpensshSandbox,
): Promise<RunResult> {
  const sshpass = findBinary("sshpass", "sshpass");
  const ssh = findBinary("ssh");
  return runCommand(
    sshpass,
    [
      "-e",
      ssh,
      "-F",
      "/dev/null",
      "-p",
      String(port),
      "-o",
      "StrictHostKeyChecking=no",
      "-o",
      "UserKnownHostsFile=/dev/null",
      "-o",
      "GlobalKnownHostsFile=/dev/null",
      "-o",
      "PreferredAuthentications=keyboard-interactive",
      "-o",
      "PubkeyAuthentication=no",
      "-o",
      "NumberOfPasswordPrompts=1",
      "-o",
      "ConnectTimeout=10",
      "-o",
      "LogLevel=ERROR",
      "-l",
      user,
      "127.0.0.1",
      "echo keyway-otp-login-ok",
    ],
    { env: { ...sandbox.env(), SSHPASS: password }, timeoutMs: 30_000 },
  );
}
