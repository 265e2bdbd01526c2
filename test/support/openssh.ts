/**
 * Run real OpenSSH tools (`ssh-keygen`, later `ssh`/`sshd`) from Node tests, isolated from
 * the developer's environment: each sandbox is a fresh temp dir used as cwd and HOME, with
 * SSH_AUTH_SOCK removed and TZ=UTC (so `ssh-keygen -L` prints UTC times).
 *
 * Decision B7: a missing binary is a test failure with an install hint, never a skip.
 */

import { execFile } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

/** Where each tool comes from on Debian, for the install hint. */
const PACKAGE_OF: Record<string, string> = {
  "ssh-keygen": "openssh-client",
  ssh: "openssh-client",
  "ssh-add": "openssh-client",
  "ssh-agent": "openssh-client",
  sshd: "openssh-server",
};

/**
 * Absolute path of a tool: an OpenSSH binary, or any other program the tests run.
 * @throws Error naming the apt package to install when it is missing
 */
export function findBinary(name: string, debianPackage: string = PACKAGE_OF[name] ?? "openssh-client"): string {
  const dirs = [
    ...(process.env.PATH ?? "").split(path.delimiter),
    "/usr/bin",
    "/usr/sbin",
    "/usr/local/bin",
    "/usr/local/sbin",
    "/bin",
    "/sbin",
  ];
  for (const dir of dirs) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory; keep looking
    }
  }
  throw new Error(
    `${name} not found: install it with \`apt-get install ${debianPackage}\` (decision B7: tests never skip)`,
  );
}

/** Result of one process run. */
export interface RunResult {
  readonly stdout: string;
  readonly stderr: string;
  /** Exit status (non-zero on failure; 128+n when killed by signal n). */
  readonly code: number;
}

/**
 * Run a command; resolves with its exit code and output, never rejects on a non-zero exit.
 * Its stdin gets `input` (or nothing) and is then closed.
 */
export function runCommand(
  file: string,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      file,
      args,
      {
        cwd: options.cwd,
        env: options.env ?? process.env,
        timeout: options.timeoutMs ?? 30_000,
        maxBuffer: 16 * 1024 * 1024,
        encoding: "utf8",
      },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== "number" && !error.signal) {
          reject(error);
          return;
        }
        const code = error ? (typeof error.code === "number" ? error.code : 128) : 0;
        resolve({ stdout, stderr, code });
      },
    );
    // A child that exits without reading its stdin must not turn into an EPIPE error here.
    child.stdin?.on("error", () => {});
    child.stdin?.end(options.input ?? "");
  });
}

/** A temp directory in which OpenSSH tools run as if HOME were empty. */
export class OpensshSandbox {
  /** Absolute path of the sandbox directory. */
  readonly dir: string;

  private constructor(dir: string) {
    this.dir = dir;
  }

  /** Creates a fresh sandbox directory. */
  static async create(prefix = "keyway-openssh-"): Promise<OpensshSandbox> {
    return new OpensshSandbox(await mkdtemp(path.join(tmpdir(), prefix)));
  }

  /** Absolute path of a file in the sandbox. */
  path(name: string): string {
    return path.join(this.dir, name);
  }

  /** Writes a file (mode 0600 by default, as OpenSSH wants for private keys). */
  async write(name: string, content: string | Uint8Array, mode = 0o600): Promise<string> {
    const p = this.path(name);
    await writeFile(p, content);
    await chmod(p, mode);
    return p;
  }

  /** Reads a file as UTF-8 text. */
  read(name: string): Promise<string> {
    return readFile(this.path(name), "utf8");
  }

  /** Environment for child processes: HOME = the sandbox, no agent socket, UTC. */
  env(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: this.dir, TZ: "UTC", LC_ALL: "C" };
    delete env.SSH_AUTH_SOCK;
    delete env.SSH_AGENT_PID;
    return env;
  }

  /** Runs a tool (found with {@link findBinary}) in the sandbox; never rejects on a non-zero exit. */
  run(tool: string, args: readonly string[], options: { timeoutMs?: number } = {}): Promise<RunResult> {
    return runCommand(findBinary(tool), args, { cwd: this.dir, env: this.env(), timeoutMs: options.timeoutMs });
  }

  /** Runs `ssh-keygen` in the sandbox. */
  sshKeygen(args: readonly string[]): Promise<RunResult> {
    return this.run("ssh-keygen", args);
  }

  /** Deletes the sandbox. */
  async dispose(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** `ssh-keygen -L` output, parsed. */
export interface CertificateListing {
  /** e.g. `ssh-ed25519-cert-v01@openssh.com`. */
  readonly type: string;
  /** `user` or `host`. */
  readonly kind: string;
  /** e.g. `ED25519-CERT SHA256:…`. */
  readonly publicKey: string;
  /** e.g. `RSA SHA256:… (using rsa-sha2-256)`. */
  readonly signingCa: string;
  readonly keyId: string;
  readonly serial: bigint;
  /** `forever` or `from <UTC> to <UTC>`. */
  readonly valid: string;
  readonly principals: string[];
  /** One entry per line: name, then the rest of the line (value) if any. */
  readonly criticalOptions: Array<[string, string]>;
  readonly extensions: Array<[string, string]>;
}

/**
 * Parses `ssh-keygen -L -f cert` output (OpenSSH 9.x layout).
 * @throws Error when a field is missing
 */
export function parseCertificateListing(stdout: string): CertificateListing {
  const lines = stdout.split("\n");
  const field = (label: string): string => {
    const line = lines.find((l) => l.trimStart().startsWith(`${label}:`));
    if (line === undefined) throw new Error(`ssh-keygen -L output has no "${label}" line:\n${stdout}`);
    return line.slice(line.indexOf(":") + 1).trim();
  };
  const list = (label: string): string[] => {
    const start = lines.findIndex((l) => l.trimStart().startsWith(`${label}:`));
    if (start < 0) throw new Error(`ssh-keygen -L output has no "${label}" section:\n${stdout}`);
    if (lines[start]!.includes("(none)")) return [];
    const out: string[] = [];
    for (let i = start + 1; i < lines.length; i++) {
      const l = lines[i]!;
      // Items are indented deeper (16 spaces) than field labels (8 spaces).
      if (!/^\s{9,}\S/.test(l)) break;
      out.push(l.trim());
    }
    return out;
  };
  const pairs = (label: string): Array<[string, string]> =>
    list(label).map((l) => {
      const i = l.indexOf(" ");
      return i < 0 ? [l, ""] : [l.slice(0, i), l.slice(i + 1)];
    });
  const [type = "", kind = ""] = field("Type").split(" ");
  const keyId = field("Key ID");
  return {
    type,
    kind,
    publicKey: field("Public key"),
    signingCa: field("Signing CA"),
    keyId: keyId.startsWith('"') && keyId.endsWith('"') ? keyId.slice(1, -1) : keyId,
    serial: BigInt(field("Serial")),
    valid: field("Valid"),
    principals: list("Principals"),
    criticalOptions: pairs("Critical Options"),
    extensions: pairs("Extensions"),
  };
}
