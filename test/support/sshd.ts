/**
 * A real OpenSSH `sshd` on loopback for end-to-end tests (decision B7): its own temp dir,
 * its own host key, a random free port, `-D -e -f <config>` so it stays in the foreground
 * and logs to stderr, which is captured for assertions. Extra sshd_config lines make it
 * reusable (e.g. `UsePAM yes` and a PAM service for OTP logins).
 *
 * Also `sshLogin()`: one non-interactive `ssh` run against it, isolated from the developer's
 * configuration (`-F /dev/null`, no agent, HOME = a sandbox).
 *
 * Missing binaries fail with an install hint (`apt-get install openssh-server`); tests never
 * skip themselves.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { userInfo } from "node:os";
import { findBinary, OpensshSandbox, type RunResult } from "./openssh";

/** Options of {@link startSshd}. */
export interface SshdOptions {
  /**
   * Text of the `TrustedUserCAKeys` file (one CA public key a line), e.g. the body of
   * `GET /v1/ssh/public_key`. Omit for no user CA. Rewrite it later with `setTrustedUserCaKeys`.
   */
  trustedUserCaKeys?: string;
  /**
   * Extra sshd_config lines. A keyword given here replaces the default line for that keyword
   * (e.g. `UsePAM yes`, `KbdInteractiveAuthentication yes` for PAM/OTP logins); `Match`
   * blocks go last, as sshd requires.
   */
  extraConfig?: readonly string[];
  /** `LogLevel`; VERBOSE by default (logs why a certificate was refused). */
  logLevel?: string;
  /**
   * Called with the freshly generated host public key; returns the text of a host
   * certificate for it, which sshd then presents (`HostCertificate`).
   */
  hostCertificate?: (hostPublicKey: string) => Promise<string>;
}

/** A running sshd. */
export interface RunningSshd {
  /** 127.0.0.1 port it listens on. */
  readonly port: number;
  /** Its sandbox directory (config, host key, CA file). */
  readonly sandbox: OpensshSandbox;
  /** Path of the host private key; its public half is at `${hostKeyPath}.pub`. */
  readonly hostKeyPath: string;
  /** Host public key text (`ssh-ed25519 AAAA… comment\n`). */
  readonly hostPublicKey: string;
  /** Path of the TrustedUserCAKeys file. */
  readonly trustedUserCaKeysPath: string;
  /** Replace the TrustedUserCAKeys file (sshd reads it on every authentication). */
  setTrustedUserCaKeys(text: string): Promise<void>;
  /** Everything sshd has logged so far (stderr, `-e`). */
  log(): string;
  /** Log lines written after `mark` (a value of `log().length`). */
  logSince(mark: number): string;
  /** Stop it (SIGTERM, then SIGKILL) and delete its sandbox. */
  stop(): Promise<void>;
}

/** The user tests log in as: whoever runs them (root in CI). */
export function loginUser(): string {
  return userInfo().username;
}

/** A free TCP port on 127.0.0.1 (there is a small race until sshd binds it; startSshd retries). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** The keyword of an sshd_config line, lowercased (sshd keywords are case-insensitive). */
function keywordOf(line: string): string {
  return line.trim().split(/\s+/)[0]!.toLowerCase();
}

function sshdConfig(
  port: number,
  sandbox: OpensshSandbox,
  options: SshdOptions,
  hostCertificate: string | null,
): string {
  const extra = options.extraConfig ?? [];
  const replaced = new Set(extra.map(keywordOf));
  const defaults = [
    `Port ${port}`,
    "ListenAddress 127.0.0.1",
    `HostKey ${sandbox.path("ssh_host_ed25519_key")}`,
    ...(hostCertificate ? [`HostCertificate ${hostCertificate}`] : []),
    "PidFile none",
    "UsePAM no",
    "StrictModes no",
    "PermitRootLogin prohibit-password",
    "PubkeyAuthentication yes",
    "PasswordAuthentication no",
    "KbdInteractiveAuthentication no",
    "AuthorizedKeysFile none",
    `TrustedUserCAKeys ${sandbox.path("trusted_user_ca_keys")}`,
    "PrintMotd no",
    "PrintLastLog no",
    "UseDNS no",
    "MaxStartups 100",
    `LogLevel ${options.logLevel ?? "VERBOSE"}`,
  ];
  // sshd keeps the first value of a keyword, so a replaced default is dropped, not shadowed.
  const lines = [...defaults.filter((l) => !replaced.has(keywordOf(l))), ...extra];
  return `${lines.join("\n")}\n`;
}

async function waitForListening(child: ChildProcess, output: () => string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (output().includes("Server listening on")) return;
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`sshd exited (${child.exitCode ?? child.signalCode}) before listening:\n${output()}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`sshd did not start listening within ${timeoutMs} ms:\n${output()}`);
}

/**
 * Start sshd on a free loopback port with a fresh Ed25519 host key.
 * @throws Error with an install hint when `sshd` or `ssh-keygen` is missing
 */
export async function startSshd(options: SshdOptions = {}): Promise<RunningSshd> {
  // sshd must be run by absolute path (it re-executes itself).
  const sshd = findBinary("sshd");
  const sandbox = await OpensshSandbox.create("keyway-sshd-");
  const hostKeyPath = sandbox.path("ssh_host_ed25519_key");
  const keygen = await sandbox.sshKeygen([
    "-q",
    "-t",
    "ed25519",
    "-N",
    "",
    "-C",
    "keyway-test-host",
    "-f",
    hostKeyPath,
  ]);
  if (keygen.code !== 0) throw new Error(`ssh-keygen failed: ${keygen.stderr}`);
  const trustedUserCaKeysPath = await sandbox.write("trusted_user_ca_keys", options.trustedUserCaKeys ?? "", 0o644);
  let hostCertificatePath: string | null = null;
  if (options.hostCertificate) {
    const certificate = await options.hostCertificate(await sandbox.read("ssh_host_ed25519_key.pub"));
    hostCertificatePath = await sandbox.write("ssh_host_ed25519_key-cert.pub", certificate, 0o644);
  }
  // Privilege separation needs this directory when sshd runs as root.
  if (process.getuid?.() === 0) await mkdir("/run/sshd", { recursive: true, mode: 0o755 });

  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const configPath = sandbox.path("sshd_config");
    await writeFile(configPath, sshdConfig(port, sandbox, options, hostCertificatePath));
    const test = await sandbox.run("sshd", ["-t", "-f", configPath]);
    if (test.code !== 0) throw new Error(`sshd rejected its configuration:\n${test.stderr}`);

    const child = spawn(sshd, ["-D", "-e", "-f", configPath], {
      cwd: sandbox.dir,
      env: sandbox.env(),
      stdio: ["ignore", "ignore", "pipe"],
    });
    let output = "";
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      output += chunk;
    });
    try {
      await waitForListening(child, () => output, 10_000);
    } catch (e) {
      child.kill("SIGKILL");
      // Lost the race for the port: try another one.
      if (attempt < 5 && /Address already in use|Cannot bind/i.test(output)) continue;
      await sandbox.dispose();
      throw e;
    }
    const hostPublicKey = await sandbox.read("ssh_host_ed25519_key.pub");
    return {
      port,
      sandbox,
      hostKeyPath,
      hostPublicKey,
      trustedUserCaKeysPath,
      async setTrustedUserCaKeys(text: string) {
        await sandbox.write("trusted_user_ca_keys", text, 0o644);
      },
      log: () => output,
      logSince: (mark: number) => output.slice(mark),
      async stop() {
        await stopProcess(child);
        await sandbox.dispose();
      },
    };
  }
}

/** Stop a server process: SIGTERM, SIGKILL if it is still running 3 s later; waits for it to exit. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
  await exited;
  clearTimeout(timer);
}

/** Options of one `ssh` run. */
export interface SshLoginOptions {
  port: number;
  /** Private key file; omit for logins that do not use a key (e.g. OTP through PAM). */
  identityFile?: string;
  /** Certificate file presented with it (`-o CertificateFile=`). */
  certificateFile?: string;
  user?: string;
  /** Host name given to ssh (default 127.0.0.1). */
  host?: string;
  /** Remote command (default `echo keyway-login-ok`). */
  command?: string;
  /**
   * Host key checking: by default none (`StrictHostKeyChecking no`, no known_hosts file). With
   * a known_hosts path, `StrictHostKeyChecking yes` against that file only.
   */
  knownHostsFile?: string;
  /** `HostKeyAlias`: the name host certificates and known_hosts entries are checked against. */
  hostKeyAlias?: string;
  /**
   * Extra ssh arguments, placed before the defaults so that `-o` options given here win
   * (ssh keeps the first value of an option), e.g. `-o PreferredAuthentications=keyboard-interactive`.
   */
  extraOptions?: readonly string[];
}

/**
 * Run `ssh … <command>` once in `sandbox` (non-interactive, public key only). Never rejects
 * on a refused login: look at `code` (255 = ssh failed to authenticate or connect).
 */
export function sshLogin(sandbox: OpensshSandbox, options: SshLoginOptions): Promise<RunResult> {
  const args = [
    ...(options.extraOptions ?? []),
    "-F",
    "/dev/null",
    "-p",
    String(options.port),
    ...(options.identityFile ? ["-i", options.identityFile] : []),
    "-o",
    "IdentitiesOnly=yes",
    "-o",
    "IdentityAgent=none",
    "-o",
    "BatchMode=yes",
    "-o",
    "PreferredAuthentications=publickey",
    "-o",
    "ConnectTimeout=10",
    "-o",
    "LogLevel=ERROR",
  ];
  if (options.certificateFile) args.push("-o", `CertificateFile=${options.certificateFile}`);
  if (options.knownHostsFile) {
    args.push(
      "-o",
      "StrictHostKeyChecking=yes",
      "-o",
      `UserKnownHostsFile=${options.knownHostsFile}`,
      "-o",
      "GlobalKnownHostsFile=/dev/null",
    );
  } else {
    args.push(
      "-o",
      "StrictHostKeyChecking=no",
      "-o",
      "UserKnownHostsFile=/dev/null",
      "-o",
      "GlobalKnownHostsFile=/dev/null",
    );
  }
  if (options.hostKeyAlias) args.push("-o", `HostKeyAlias=${options.hostKeyAlias}`);
  args.push("-l", options.user ?? loginUser(), options.host ?? "127.0.0.1", options.command ?? "echo keyway-login-ok");
  return sandbox.run("ssh", args, { timeoutMs: 30_000 });
}
