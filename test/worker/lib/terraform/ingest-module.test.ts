// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings are HCL sources, whose ${…} is HCL interpolation
/**
 * Ingestion inside workerd, through the production entry point `src/lib/terraform`: the
 * parser's WebAssembly comes from `.wasm` imports exactly as in the deployed bundle.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { getTerraformParser, ingestModule, summarizeModule, variablesReached } from "../../../../src/lib/terraform";
import { FIXTURE_MODULES, fixtureFiles } from "../../../fixtures/terraform";
import { checkSummary, EXPECTED } from "../../../fixtures/terraform/expectations";
import { buildTar, buildTarball } from "../../../support/tarball";

const MiB = 1024 * 1024;
const MAIN = 'resource "null_resource" "x" {}\n';

describe("ingestModule in workerd: fixture modules", () => {
  it("covers every fixture module", () => {
    expect(FIXTURE_MODULES).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(Object.keys(EXPECTED))("ingests %s", async (name) => {
    const tarball = await buildTarball(fixtureFiles(name), { prefix: "./", directories: true });
    const result = await ingestModule(tarball);
    if (!result.ok) throw new Error(result.error);
    checkSummary(result.summary, EXPECTED[name]!);
    // The summary is plain data: it survives JSON (D1/R2) unchanged.
    expect(JSON.parse(JSON.stringify(result.summary))).toEqual(result.summary);
  });

  it("ingests a tarball streamed from R2", async () => {
    const key = `test/${crypto.randomUUID()}.tar.gz`;
    await env.MODULES.put(key, await buildTarball(fixtureFiles("aws-vpc"), { prefix: "./" }));
    const object = await env.MODULES.get(key);
    const result = await ingestModule(object!.body);
    if (!result.ok) throw new Error(result.error);
    checkSummary(result.summary, EXPECTED["aws-vpc"]!);
  });

  it("lets the planner resolve references through locals and submodules", async () => {
    const result = await ingestModule(await buildTarball(fixtureFiles("aws-vpc")));
    if (!result.ok) throw new Error(result.error);
    const { summary } = result;
    const nat = summary.resources.find((r) => r.address === "aws_nat_gateway.this")!;
    expect(variablesReached(summary, nat.references)).toEqual([
      "azs",
      "create_vpc",
      "enable_nat_gateway",
      "name",
      "private_subnets",
      "public_subnets",
      "single_nat_gateway",
      "tags",
    ]);
    const flowLog = summary.moduleCalls.find((m) => m.name === "flow_log")!;
    expect(flowLog.module!.resources.map((r) => `${flowLog.address}.${r.address}`)).toEqual([
      "module.flow_log.aws_cloudwatch_log_group.this",
      "module.flow_log.aws_iam_role.this",
      "module.flow_log.aws_flow_log.this",
    ]);
  });
});

describe("ingestModule in workerd: refused versions", () => {
  const refused: [string, () => Promise<Uint8Array>, string][] = [
    ["not gzip", async () => buildTar({ "main.tf": MAIN }), "not a gzip archive"],
    ["a zip file", async () => new TextEncoder().encode("PK\x03\x04"), "not a gzip archive"],
    [
      "a .. entry",
      () => buildTarball({ "main.tf": MAIN, "../x.tf": MAIN }),
      'archive entry "../x.tf" escapes the module directory',
    ],
    [
      "a nested .. entry",
      () => buildTarball({ "main.tf": MAIN, "modules/../../etc/x.tf": MAIN }),
      'archive entry "modules/../../etc/x.tf" escapes the module directory',
    ],
    [
      "an absolute entry",
      () => buildTarball({ "main.tf": MAIN, "/etc/x.tf": MAIN }),
      'archive entry "/etc/x.tf" has an absolute path',
    ],
    [
      "a symlink",
      () =>
        buildTarball([
          { path: "main.tf", content: MAIN },
          { path: "link.tf", type: "symlink", linkTarget: "main.tf" },
        ]),
      'archive entry "link.tf" is a symbolic link',
    ],
    [
      "a hard link",
      () =>
        buildTarball([
          { path: "main.tf", content: MAIN },
          { path: "hard.tf", type: "hardlink", linkTarget: "main.tf" },
        ]),
      'archive entry "hard.tf" is a hard link',
    ],
    [
      "a device",
      () =>
        buildTarball([
          { path: "main.tf", content: MAIN },
          { path: "dev/null", type: "char-device" },
        ]),
      'archive entry "dev/null" is a device',
    ],
    [
      "a FIFO",
      () =>
        buildTarball([
          { path: "main.tf", content: MAIN },
          { path: "pipe", type: "fifo" },
        ]),
      'archive entry "pipe" is a FIFO',
    ],
    [
      "more than 50 MiB unpacked",
      () =>
        buildTarball([
          { path: "main.tf", content: MAIN },
          { path: "assets/a.bin", zeros: 26 * MiB },
          { path: "assets/b.bin", zeros: 25 * MiB },
        ]),
      "archive unpacks to more than 50 MiB",
    ],
    [
      "a .tf file over 1 MiB",
      () => buildTarball([{ path: "main.tf", zeros: MiB + 1 }]),
      "main.tf is larger than 1 MiB",
    ],
    [
      "more than 1000 entries",
      () => buildTarball({ "main.tf": MAIN }, { fillerEntries: 1000 }),
      "archive has more than 1000 entries",
    ],
    [
      "no .tf at the root",
      () => buildTarball({ "modules/x/main.tf": MAIN, "README.md": "x" }),
      "no .tf file at the archive root",
    ],
    [
      "a syntax error",
      () => buildTarball({ "main.tf": MAIN, "variables.tf": 'variable "a" {\n  default = \n}\n' }),
      "syntax error in variables.tf at line 2",
    ],
    [
      "an unclosed block",
      () => buildTarball({ "main.tf": 'resource "a" "b" {\n  x = 1\n' }),
      'syntax error in main.tf at line 3: missing "}"',
    ],
    [
      "duplicate variables",
      () =>
        buildTarball({
          "main.tf": 'variable "region" {}\n',
          "variables.tf": 'variable "region" {\n  default = "x"\n}\n',
        }),
      'duplicate variable "region" in main.tf and variables.tf',
    ],
    [
      "duplicate outputs",
      () => buildTarball({ "main.tf": 'output "id" { value = 1 }\noutput "id" { value = 2 }\n' }),
      'duplicate output "id" in main.tf at lines 1 and 2',
    ],
  ];

  it.each(refused)("refuses %s", async (_, make, message) => {
    const result = await ingestModule(await make());
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error.startsWith(message), !result.ok ? result.error : "ok").toBe(true);
  });

  it("refuses corrupt gzip data without throwing", async () => {
    const tarball = await buildTarball({ "main.tf": MAIN.repeat(100) });
    const corrupt = tarball.slice();
    corrupt.fill(0x55, 12, 60);
    const result = await ingestModule(corrupt);
    expect(result.ok).toBe(false);
  });
});

describe("reader speed in workerd", () => {
  it("measures warm parse + extract of the largest fixture", async () => {
    const parser = await getTerraformParser();
    const files = new Map(Object.entries(fixtureFiles("aws-vpc")));
    const lines = [...files.values()].reduce((n, s) => n + s.split("\n").length - 1, 0);
    for (let i = 0; i < 30; i++) summarizeModule(files, parser);
    // Batches, because workerd's clock is coarse (whole milliseconds) and the machine is
    // shared: the fastest batch's mean is the least disturbed figure.
    const batchMeans: number[] = [];
    for (let batch = 0; batch < 5; batch++) {
      const start = performance.now();
      for (let i = 0; i < 10; i++) summarizeModule(files, parser);
      batchMeans.push((performance.now() - start) / 10);
    }
    batchMeans.sort((a, b) => a - b);
    const tarball = await buildTarball(fixtureFiles("aws-vpc"), { prefix: "./" });
    const ingestMeans: number[] = [];
    for (let batch = 0; batch < 3; batch++) {
      const start = performance.now();
      for (let i = 0; i < 5; i++) await ingestModule(tarball);
      ingestMeans.push((performance.now() - start) / 5);
    }
    ingestMeans.sort((a, b) => a - b);
    console.log(
      `aws-vpc fixture (${files.size} files, ${lines} lines): warm parse+extract ${batchMeans[0]!.toFixed(1)} ms ` +
        `(batch means ${batchMeans.map((t) => t.toFixed(1)).join(", ")}); ` +
        `whole ingestModule from the tarball ${ingestMeans[0]!.toFixed(1)} ms`,
    );
    // Generous bound: a regression by an order of magnitude, not a benchmark.
    expect(batchMeans[0]!).toBeLessThan(500);
  });
});
