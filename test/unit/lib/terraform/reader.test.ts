// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings are HCL sources, whose ${…} is HCL interpolation
/**
 * The Terraform reader on whole modules (N4, N7, N12): the fixture modules, module
 * summaries across files and submodules, and ingestion of a tarball. What it reads from
 * single files (values, variables, providers, references, normalised source):
 * reader-files.test.ts.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { ingestModuleWith } from "../../../../src/lib/terraform/ingest-module";
import type { TerraformParser } from "../../../../src/lib/terraform/parser";
import { summarizeModule, variablesReached } from "../../../../src/lib/terraform/summarize-module";
import type { ModuleSummary } from "../../../../src/lib/terraform/types";
import { FIXTURE_MODULES, fixtureFiles } from "../../../fixtures/terraform";
import { checkSummary, EXPECTED } from "../../../fixtures/terraform/expectations";
import { buildTarball } from "../../../support/tarball";
import { nodeTerraformParser } from "./node-parser";

let parser: TerraformParser;
beforeAll(async () => {
  parser = await nodeTerraformParser();
});

/** Summary of a module given as `{ path: source }`. */
function summarize(files: Record<string, string>): ModuleSummary {
  return summarizeModule(new Map(Object.entries(files)), parser);
}

describe("fixture modules", () => {
  it("has five fixture modules with expectations", () => {
    expect(FIXTURE_MODULES).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(Object.keys(EXPECTED))("ingests %s", async (name) => {
    const tarball = await buildTarball(fixtureFiles(name), { prefix: "./", directories: true });
    const result = await ingestModuleWith(parser, tarball);
    if (!result.ok) throw new Error(result.error);
    checkSummary(result.summary, EXPECTED[name]!);
  });

  it("resolves references through chains of locals", () => {
    const summary = summarize(fixtureFiles("locals-chain"));
    const app = summary.resources.find((r) => r.address === "aws_instance.app")!;
    expect(variablesReached(summary, app.references)).toEqual(["environment", "extra_tags", "instance_count", "team"]);
    const replica = summary.resources.find((r) => r.address === "aws_instance.replica")!;
    expect(variablesReached(summary, replica.references)).toEqual(["environment"]);
    const naming = summary.moduleCalls[0]!;
    expect(variablesReached(summary, naming.references)).toEqual(["environment", "extra_tags", "team"]);
  });
});

describe("module summaries", () => {
  it("reports duplicate variables and outputs across and within files", () => {
    const summary = summarize({
      "main.tf": 'variable "region" {}\noutput "id" { value = 1 }\n',
      "variables.tf": 'variable "region" {}\nvariable "zone" {}\n\nvariable "zone" {}\n',
      "outputs.tf": 'output "id" { value = 2 }\n',
    });
    expect(summary.errors.map((e) => e.message)).toEqual([
      'duplicate variable "region" in main.tf and variables.tf',
      'duplicate variable "zone" in variables.tf at lines 2 and 4',
      'duplicate output "id" in main.tf and outputs.tf',
    ]);
    expect(summary.errors.map((e) => e.kind)).toEqual(["duplicate-variable", "duplicate-variable", "duplicate-output"]);
  });

  it("reports syntax errors with file and line, and still extracts the rest", () => {
    const summary = summarize({
      "main.tf": 'resource "a" "b" {\n  x = 1\n}\n\nresource "c" "d" {\n  y = \n}\n',
      "other.tf": 'variable "ok" {}\noutput "o" {\n  value = 1\n',
    });
    expect(summary.errors.map((e) => [e.kind, e.file, e.line])).toEqual([
      ["syntax", "main.tf", 6],
      ["syntax", "other.tf", 4],
    ]);
    expect(summary.errors[0]!.message).toMatch(/^syntax error in main\.tf at line 6: /);
    expect(summary.errors[1]!.message).toBe('syntax error in other.tf at line 4: missing "}"');
    expect(summary.resources.map((r) => r.address)).toContain("a.b");
    expect(summary.variables.map((v) => v.name)).toEqual(["ok"]);
  });

  it("expands local submodules relative to the caller, once each", () => {
    const summary = summarize({
      "main.tf": 'module "a" { source = "./modules/a" }\nmodule "b" { source = "./modules/b" }\n',
      "modules/a/main.tf": 'module "shared" { source = "../shared" }\nresource "null_resource" "a" {}\n',
      "modules/b/main.tf": 'module "shared" { source = "../shared/" }\n',
      "modules/shared/main.tf": 'resource "null_resource" "s" {}\n',
      "examples/broken/main.tf": "this is not { terraform",
    });
    const [a, b] = summary.moduleCalls;
    expect(a!.module!.path).toBe("modules/a");
    expect(a!.module!.resources.map((r) => r.address)).toEqual(["null_resource.a"]);
    const sharedFromA = a!.module!.moduleCalls[0]!.module!;
    expect(sharedFromA.path).toBe("modules/shared");
    expect(b!.module!.moduleCalls[0]!.module).toBe(sharedFromA);
    // examples/ is not reached, so its syntax does not matter.
    expect(summary.errors).toEqual([]);
  });

  it("warns about local sources it cannot expand", () => {
    const summary = summarize({
      "main.tf": [
        'module "missing" { source = "./modules/missing" }',
        'module "outside" { source = "../sibling" }',
        'module "self" { source = "./" }',
        'module "remote" {',
        '  source  = "terraform-aws-modules/vpc/aws"',
        '  version = "5.0.0"',
        "}",
      ].join("\n"),
    });
    expect(summary.moduleCalls.map((m) => [m.name, m.local, m.module])).toEqual([
      ["missing", true, null],
      ["outside", true, null],
      ["self", true, null],
      ["remote", false, null],
    ]);
    expect(summary.warnings).toEqual([
      'module "missing" in main.tf: source "./modules/missing" has no .tf files in the archive',
      'module "outside" in main.tf: source "../sibling" is outside the archive',
      'module "self" in main.tf: source "./" calls itself',
    ]);
  });
});

describe("ingestModuleWith", () => {
  const MAIN = 'resource "null_resource" "x" {}\n';

  it("fails with the archive's error", async () => {
    expect(await ingestModuleWith(parser, new TextEncoder().encode("plain"))).toEqual({
      ok: false,
      error: "not a gzip archive",
    });
    expect(await ingestModuleWith(parser, await buildTarball({ "sub/main.tf": MAIN }))).toEqual({
      ok: false,
      error: "no .tf file at the archive root",
    });
  });

  it("fails on a syntax error, in the root or in a local submodule", async () => {
    const root = await ingestModuleWith(parser, await buildTarball({ "main.tf": 'resource "a" "b" {\n  x = 1\n' }));
    expect(root).toEqual({ ok: false, error: 'syntax error in main.tf at line 3: missing "}"' });
    const sub = await ingestModuleWith(
      parser,
      await buildTarball({ "main.tf": 'module "x" { source = "./modules/x" }\n', "modules/x/main.tf": "x = = 1\n" }),
    );
    expect(sub.ok).toBe(false);
    expect(!sub.ok && sub.error).toMatch(/^syntax error in modules\/x\/main\.tf at line 1: /);
  });

  it("fails on duplicate names and lists several problems", async () => {
    const result = await ingestModuleWith(
      parser,
      await buildTarball({
        "main.tf": 'variable "region" {}\noutput "o" { value = 1 }\n',
        "variables.tf": 'variable "region" {}\n',
        "outputs.tf": 'output "o" { value = 1 }\n',
      }),
    );
    expect(result).toEqual({
      ok: false,
      error: 'duplicate variable "region" in main.tf and variables.tf; duplicate output "o" in main.tf and outputs.tf',
    });
  });

  it("summarises more than five problems", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 7; i++) files[`f${i}.tf`] = 'variable "v" {}\n';
    const result = await ingestModuleWith(parser, await buildTarball(files));
    expect(!result.ok && result.error).toMatch(/; duplicate variable "v" in f0\.tf and f5\.tf \(and 1 more\)$/);
  });

  it("warns about root .tf.json files it does not read", async () => {
    const result = await ingestModuleWith(parser, await buildTarball({ "main.tf": MAIN, "extra.tf.json": "{}" }));
    expect(result.ok && result.summary.warnings).toEqual(["files in Terraform JSON syntax (*.tf.json) are not read"]);
  });
});
