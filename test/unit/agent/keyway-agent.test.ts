/**
 * The pure parts of `agent/keyway-agent` (decision N21): its tar reader's refusals, the
 * engine's environment allow-list, the variable files, the registry credential (a
 * `TF_TOKEN_…` variable or a CLI configuration file for a host with a port), the command forms
 * and the configuration rules. The whole program runs against the real Worker in
 * test/interop/agent.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";

import { buildTar, buildTarball } from "../../support/tarball";
import { AGENT_PROGRAM, agent } from "./agent-module";

const {
  AGENT_VERSION,
  COMMANDS,
  ConfigurationError,
  engineEnvironment,
  extractEntries,
  findEngine,
  isEngineControlledPath,
  isReservedEnvName,
  JobError,
  OVERRIDE_TF,
  parseArguments,
  readConfiguration,
  readTarball,
  registryCredential,
  variableFiles,
} = agent;

const scratch = mkdtempSync(path.join(tmpdir(), "keyway-agent-unit-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let dirs = 0;
const freshDir = () => mkdtempSync(path.join(scratch, `d${dirs++}-`));

describe("readTarball", () => {
  it("reads files, directories, a ./ prefix, and pax and GNU long names", async () => {
    const long = `${"deep/".repeat(30)}main.tf`;
    const entries = readTarball(
      await buildTarball(
        [
          { path: "main.tf", content: "# root\n" },
          { path: "modules/net/main.tf", content: "# net\n" },
          { path: "scripts/run.sh", content: "#!/bin/sh\n" },
        ],
        { prefix: "./", directories: true },
      ),
    );
    const files = entries.filter((e) => e.type === "file").map((e) => e.path);
    expect(files).toEqual(["main.tf", "modules/net/main.tf", "scripts/run.sh"]);
    expect(entries.some((e) => e.type === "directory" && e.path === "modules/net")).toBe(true);

    const pax = readTarball(await buildTarball([{ path: long, content: "# pax\n" }]));
    expect(pax).toMatchObject([{ path: long, type: "file" }]);

    const gnu = readTarball(
      await buildTarball([{ path: long, content: "# gnu\n", longName: "gnu" }], { format: "gnu" }),
    );
    expect(gnu).toMatchObject([{ path: long, type: "file" }]);
  });

  it.each([
    ["a parent directory", [{ path: "../evil.tf", content: "x" }], "leaves the configuration"],
    ["a nested parent directory", [{ path: "a/../../evil.tf", content: "x" }], "leaves the configuration"],
    ["an absolute path", [{ path: "/etc/evil.tf", content: "x" }], "absolute path"],
    [
      "a symbolic link leaving the directory",
      [{ path: "escape", type: "symlink", linkTarget: "../../etc" }],
      "points outside the configuration",
    ],
    [
      "an absolute symbolic link",
      [{ path: "escape", type: "symlink", linkTarget: "/etc/passwd" }],
      "points outside the configuration",
    ],
    ["a hard link to a file outside", [{ path: "copy", type: "hardlink", linkTarget: "/etc/passwd" }], "absolute path"],
    [
      "a hard link to no earlier file",
      [{ path: "copy", type: "hardlink", linkTarget: "later.tf" }],
      "does not point to a file earlier",
    ],
    ["a character device", [{ path: "tty", type: "char-device" }], "neither a file, a directory nor a link"],
    ["a block device", [{ path: "sda", type: "block-device" }], "neither a file, a directory nor a link"],
    ["a fifo", [{ path: "pipe", type: "fifo" }], "neither a file, a directory nor a link"],
    ["a size larger than the archive", [{ path: "main.tf", content: "x", declaredSize: 1_000_000 }], "truncated"],
  ] as const)("refuses %s", async (_what, specs, message) => {
    const tarball = await buildTarball(specs as never);
    expect(() => readTarball(tarball)).toThrow(JobError);
    expect(() => readTarball(tarball)).toThrow(message);
  });

  it("refuses a damaged header, a non-gzip body, too many entries and too many bytes", async () => {
    const tar = buildTar({ "main.tf": "x" });
    tar[10] = 0x41; // inside the name: the checksum no longer matches
    expect(() => readTarball(gzipSync(tar))).toThrow("damaged header");
    expect(() => readTarball(new TextEncoder().encode("not gzip"))).toThrow("not a gzip-compressed tar archive");
    const many = await buildTarball({ "main.tf": "x" }, { fillerEntries: 20 });
    expect(() => readTarball(many, { entries: 10, bytes: 1 << 20, pathLength: 4096 })).toThrow("more than 10 entries");
    const big = await buildTarball([{ path: "big.bin", zeros: 2 << 20 }]);
    expect(() => readTarball(big, { entries: 10, bytes: 1 << 20, pathLength: 4096 })).toThrow("larger than");
  });
});

describe("isEngineControlledPath", () => {
  it("names the files that would configure the engine from the job directory", () => {
    for (const name of [
      ".terraformrc",
      "terraform.rc",
      ".tofurc",
      "tofu.rc",
      ".terraform/providers/x",
      ".terraform.d/plugins/y",
    ]) {
      expect(isEngineControlledPath(name), name).toBe(true);
    }
    for (const name of ["main.tf", ".terraform.lock.hcl", "modules/.terraformrc", "terraform.tfvars"]) {
      expect(isEngineControlledPath(name), name).toBe(false);
    }
  });
});

describe("extractEntries", () => {
  it("writes files owner-only, keeps links inside the configuration and copies hard links", async () => {
    const root = freshDir();
    extractEntries(
      readTarball(
        await buildTarball([
          { path: "main.tf", content: "# main\n" },
          { path: "modules/net/main.tf", content: "# net\n" },
          { path: "net", type: "symlink", linkTarget: "modules/net" },
          { path: "copy.tf", type: "hardlink", linkTarget: "main.tf" },
        ]),
      ),
      root,
    );
    expect(readFileSync(path.join(root, "copy.tf"), "utf8")).toBe("# main\n");
    expect(readlinkSync(path.join(root, "net"))).toBe("modules/net");
    expect(readFileSync(path.join(root, "net", "main.tf"), "utf8")).toBe("# net\n");
  });

  it("refuses an entry written through a symbolic link", async () => {
    const root = freshDir();
    const entries = readTarball(
      await buildTarball([
        { path: "sub/keep.tf", content: "x" },
        { path: "link", type: "symlink", linkTarget: "sub" },
        { path: "link/evil.tf", content: "x" },
      ]),
    );
    expect(() => extractEntries(entries, root)).toThrow("would be written through a link");
  });
});

describe("engineEnvironment", () => {
  const agentEnv = {
    PATH: "/usr/bin:/bin",
    HOME: "/home/agent",
    TMPDIR: "/var/tmp",
    HTTPS_PROXY: "http://proxy.internal:3128",
    no_proxy: "localhost",
    KEYWAY_ADDRESS: "https://keyway.example.com",
    KEYWAY_AGENT_TOKEN: "at-x.atlasv1.secret",
    KEYWAY_AGENT_TOKEN_FILE: "/etc/keyway/token",
    AWS_SECRET_ACCESS_KEY: "agent-host-secret",
    TF_LOG: "TRACE",
    SSH_AUTH_SOCK: "/tmp/ssh.sock",
  };

  it("is an allow-list: PATH, HOME and TMPDIR of the job, proxies, automation settings, the credential, then the run's variables", () => {
    const { env, dropped } = engineEnvironment({
      agentEnv,
      jobDir: "/work/job-1",
      credential: registryCredential({ host: "keyway.example.com", token: "registry-token" }),
      envVariables: [
        { key: "AWS_REGION", value: "eu-west-1" },
        { key: "TF_INPUT", value: "0" },
      ],
    });
    expect(env).toEqual({
      PATH: "/usr/bin:/bin",
      HOME: "/work/job-1",
      TMPDIR: "/work/job-1/.keyway-tmp",
      HTTPS_PROXY: "http://proxy.internal:3128",
      no_proxy: "localhost",
      TF_IN_AUTOMATION: "1",
      TF_INPUT: "0",
      TF_TOKEN_keyway_example_com: "registry-token",
      AWS_REGION: "eu-west-1",
    });
    expect(dropped).toEqual([]);
    expect(Object.keys(env).filter((k) => k.startsWith("KEYWAY_"))).toEqual([]);
  });

  it("drops the run's variables with reserved or impossible names", () => {
    const reserved = [
      "KEYWAY_AGENT_TOKEN",
      "keyway_address",
      "TF_CLI_ARGS",
      "TF_CLI_ARGS_plan",
      "TF_LOG",
      "TF_LOG_PATH",
      "TF_CLI_CONFIG_FILE",
      "TF_DATA_DIR",
      "TF_PLUGIN_CACHE_DIR",
      "LD_PRELOAD",
      "DYLD_INSERT_LIBRARIES",
      "NODE_OPTIONS",
      "PATH",
      "HOME",
      "BAD-NAME",
      "1ST",
    ];
    const { env, dropped } = engineEnvironment({
      agentEnv: { PATH: "/bin" },
      jobDir: "/job",
      envVariables: reserved.map((key) => ({ key, value: "x" })),
    });
    expect(dropped).toEqual(reserved);
    expect(env).toEqual({
      PATH: "/bin",
      HOME: "/job",
      TMPDIR: "/job/.keyway-tmp",
      TF_IN_AUTOMATION: "1",
      TF_INPUT: "0",
    });
    for (const name of reserved.slice(0, 14)) expect(isReservedEnvName(name)).toBe(true);
    expect(isReservedEnvName("AWS_REGION")).toBe(false);
  });

  it("names a CLI configuration file in the job directory for a host with a port", () => {
    const credential = registryCredential({ host: "127.0.0.1:8787", token: "registry-token" });
    const { env } = engineEnvironment({ agentEnv: {}, jobDir: "/job", credential });
    expect(env.TF_CLI_CONFIG_FILE).toBe("/job/keyway-cli.tfrc");
    expect(Object.keys(env).some((k) => k.startsWith("TF_TOKEN_"))).toBe(false);
  });
});

describe("registryCredential", () => {
  it("spells TF_TOKEN_<host> with . as _ and - as __, in punycode", () => {
    expect(registryCredential({ host: "keyway.example.com", token: "t" }).env).toEqual({
      TF_TOKEN_keyway_example_com: "t",
    });
    expect(registryCredential({ host: "my-keyway.example.com", token: "t" }).env).toEqual({
      TF_TOKEN_my__keyway_example_com: "t",
    });
    expect(Object.keys(registryCredential({ host: "keywäy.example", token: "t" }).env)).toEqual([
      "TF_TOKEN_xn____keywy__jra_example",
    ]);
  });

  it("writes a credentials block for host:port, which no variable name can spell", () => {
    expect(registryCredential({ host: "127.0.0.1:8787", token: "tok.en-1" })).toEqual({
      env: {},
      cliConfig: 'credentials "127.0.0.1:8787" {\n  token = "tok.en-1"\n}\n',
    });
  });

  it("refuses hosts and tokens that could break out of the file", () => {
    expect(() => registryCredential({ host: 'a"b', token: "t" })).toThrow(JobError);
    expect(() => registryCredential({ host: "a b", token: "t" })).toThrow(JobError);
    expect(() => registryCredential({ host: "h:1", token: 't"\n}' })).toThrow(JobError);
    expect(() => registryCredential({ host: "h:1", token: ["$", "{x}"].join("") })).toThrow(JobError);
  });

  it("gives nothing when the inputs carry no registry", () => {
    expect(registryCredential(null)).toEqual({ env: {}, cliConfig: null });
  });
});

describe("variableFiles", () => {
  it("puts string values in keyway.tfvars.json and HCL values verbatim in keyway.tfvars", () => {
    const files = variableFiles([
      { key: "name", value: 'a "quoted"\nvalue', hcl: false },
      { key: "size", value: "3", hcl: false, sensitive: true },
      { key: "labels", value: '{ team = "platform" }', hcl: true },
      { key: "zones", value: '["a", "b"]', hcl: true, sensitive: true },
    ]);
    expect(JSON.parse(files.json)).toEqual({ name: 'a "quoted"\nvalue', size: "3" });
    expect(files.hcl).toBe('labels = { team = "platform" }\nzones = ["a", "b"]\n');
  });

  it("writes no HCL file without HCL values, and an empty JSON object without variables", () => {
    expect(variableFiles([{ key: "a", value: "1" }])).toEqual({ json: '{\n  "a": "1"\n}\n', hcl: null });
    expect(variableFiles([])).toEqual({ json: "{}\n", hcl: null });
  });

  it("refuses a key that is not an identifier", () => {
    expect(() => variableFiles([{ key: "a = 1\nb", value: "x", hcl: true }])).toThrow(JobError);
  });
});

describe("COMMANDS", () => {
  it("are exactly N21's forms", () => {
    expect(COMMANDS.version()).toEqual(["version", "-json"]);
    expect(COMMANDS.planInit()).toEqual(["init", "-input=false", "-no-color"]);
    expect(COMMANDS.plan({ destroy: false, hcl: false })).toEqual([
      "plan",
      "-input=false",
      "-no-color",
      "-json",
      "-var-file=keyway.tfvars.json",
      "-out=keyway.tfplan",
    ]);
    expect(COMMANDS.plan({ destroy: true, hcl: true })).toEqual([
      "plan",
      "-input=false",
      "-no-color",
      "-json",
      "-destroy",
      "-var-file=keyway.tfvars.json",
      "-var-file=keyway.tfvars",
      "-out=keyway.tfplan",
    ]);
    expect(COMMANDS.show()).toEqual(["show", "-json", "keyway.tfplan"]);
    expect(COMMANDS.applyInit()).toEqual(["init", "-input=false", "-no-color", "-lockfile=readonly"]);
    expect(COMMANDS.apply()).toEqual(["apply", "-input=false", "-no-color", "-json", "keyway.tfplan"]);
    expect(OVERRIDE_TF).toBe('terraform {\n  backend "local" {\n    path = "terraform.tfstate"\n  }\n}\n');
  });
});

describe("configuration", () => {
  const tokenFile = (mode: number) => {
    const file = path.join(freshDir(), "token");
    writeFileSync(file, "at-abc.atlasv1.secret\n");
    chmodSync(file, mode);
    return file;
  };

  it("reads the token from a file only its owner can read", () => {
    const config = readConfiguration(
      { KEYWAY_ADDRESS: "https://keyway.example.com/", KEYWAY_AGENT_TOKEN_FILE: tokenFile(0o600) },
      "build-host",
    );
    expect(config).toMatchObject({
      address: "https://keyway.example.com",
      token: "at-abc.atlasv1.secret",
      name: "build-host",
      engine: null,
      drainSeconds: 3600,
    });
    expect(config.workdir).toBe(path.join(tmpdir(), "keyway-agent-build-host"));
  });

  it.each([0o644, 0o640, 0o604, 0o660])("refuses a token file with mode %o", (mode) => {
    const file = tokenFile(mode);
    expect(() => readConfiguration({ KEYWAY_ADDRESS: "https://k.example", KEYWAY_AGENT_TOKEN_FILE: file })).toThrow(
      /must be readable by its owner only/,
    );
  });

  it("takes KEYWAY_AGENT_TOKEN for development, and the other settings", () => {
    const config = readConfiguration({
      KEYWAY_ADDRESS: "http://127.0.0.1:8787",
      KEYWAY_AGENT_TOKEN: "dev-token",
      KEYWAY_AGENT_NAME: "agent one",
      KEYWAY_ENGINE: "/opt/tofu/tofu",
      KEYWAY_AGENT_WORKDIR: "/srv/keyway",
      KEYWAY_AGENT_DRAIN_SECONDS: "60",
    });
    expect(config).toEqual({
      address: "http://127.0.0.1:8787",
      token: "dev-token",
      name: "agent one",
      engine: "/opt/tofu/tofu",
      workdir: "/srv/keyway",
      drainSeconds: 60,
    });
  });

  it.each([
    [{}, "KEYWAY_ADDRESS is not set"],
    [{ KEYWAY_ADDRESS: "keyway.example.com", KEYWAY_AGENT_TOKEN: "t" }, "not a URL"],
    [{ KEYWAY_ADDRESS: "ftp://keyway.example.com", KEYWAY_AGENT_TOKEN: "t" }, "https://"],
    [{ KEYWAY_ADDRESS: "https://k.example" }, "KEYWAY_AGENT_TOKEN_FILE"],
    [{ KEYWAY_ADDRESS: "https://k.example", KEYWAY_AGENT_TOKEN_FILE: "/nonexistent/token" }, "cannot be read"],
    [{ KEYWAY_ADDRESS: "https://k.example", KEYWAY_AGENT_TOKEN: "t", KEYWAY_AGENT_DRAIN_SECONDS: "soon" }, "DRAIN"],
  ])("refuses %j", (env, message) => {
    expect(() => readConfiguration(env)).toThrow(ConfigurationError);
    expect(() => readConfiguration(env)).toThrow(message);
  });

  it("finds the engine: KEYWAY_ENGINE, else tofu, then terraform on PATH", () => {
    const bin = freshDir();
    for (const name of ["terraform", "tofu"]) {
      writeFileSync(path.join(bin, name), "#!/bin/sh\n");
      chmodSync(path.join(bin, name), 0o755);
    }
    expect(findEngine(null, bin)).toEqual({ path: path.join(bin, "tofu"), name: "tofu" });
    rmSync(path.join(bin, "tofu"));
    expect(findEngine(null, `/nonexistent:${bin}`)).toEqual({ path: path.join(bin, "terraform"), name: "terraform" });
    expect(findEngine("terraform", bin).name).toBe("terraform");
    expect(() => findEngine(null, "/nonexistent")).toThrow("neither tofu nor terraform");
    expect(() => findEngine("/nonexistent/tofu", bin)).toThrow("KEYWAY_ENGINE");
  });

  it("parses --single and --version and refuses other arguments", () => {
    expect(parseArguments(["--single"])).toEqual({ single: true, version: false, help: false });
    expect(() => parseArguments(["--token=x"])).toThrow(ConfigurationError);
  });

  it("prints its version with --version, and exits 2 naming a configuration problem", () => {
    expect(execFileSync(process.execPath, [AGENT_PROGRAM, "--version"], { encoding: "utf8" })).toBe(
      `${AGENT_VERSION}\n`,
    );
    let stderr = "";
    try {
      execFileSync(process.execPath, [AGENT_PROGRAM], {
        env: { PATH: process.env.PATH },
        encoding: "utf8",
        stdio: "pipe",
      });
    } catch (error) {
      const failed = error as { status: number; stderr: string };
      expect(failed.status).toBe(2);
      stderr = failed.stderr;
    }
    expect(stderr).toContain("KEYWAY_ADDRESS is not set");
  });
});
