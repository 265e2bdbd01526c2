// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings are HCL sources, whose ${…} is HCL interpolation
import { beforeAll, describe, expect, it } from "vitest";
import { ingestModuleWith } from "../../../../src/lib/terraform/ingest-module";
import type { TerraformParser } from "../../../../src/lib/terraform/parser";
import { readTerraformFile } from "../../../../src/lib/terraform/read-file";
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

/** The variables of one file. */
function variables(source: string) {
  return readTerraformFile(parser, "main.tf", source).variables;
}

/** The literal default of the only variable in `body`, or its source text. */
function defaultOf(expression: string) {
  return variables(`variable "v" {\n  default = ${expression}\n}\n`)[0]!.default;
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

describe("literal values", () => {
  it("decodes quoted strings exactly, whitespace and escapes included", () => {
    expect(defaultOf('"  x  "')).toEqual({ literal: true, value: "  x  " });
    expect(defaultOf('""')).toEqual({ literal: true, value: "" });
    expect(defaultOf('"a\\"b\\n\\u00e9\\U0001F600 \\\\ $$' + '{lit} %%{d}"')).toEqual({
      literal: true,
      value: 'a"b\né😀 \\ ${lit} %{d}',
    });
    expect(defaultOf('"日本 # not a comment // nor this"')).toEqual({
      literal: true,
      value: "日本 # not a comment // nor this",
    });
  });

  it("slices the source correctly after non-ASCII text (UTF-16 offsets)", () => {
    const [a, b] = variables(
      '# 日本語 😀 comment\nvariable "a" {\n  description = "😀 é x"\n}\nvariable "b" {\n  default = "日本 😀"\n  description = <<EOT\n  ü 😀\nEOT\n}\n',
    );
    expect(a!.description).toBe("😀 é x");
    expect(a!.line).toBe(2);
    expect(b!.default).toEqual({ literal: true, value: "日本 😀" });
    expect(b!.description).toBe("  ü 😀\n");
    expect(b!.line).toBe(5);
  });

  it("evaluates numbers, bools and null", () => {
    expect(defaultOf("42")).toEqual({ literal: true, value: 42 });
    expect(defaultOf("-1")).toEqual({ literal: true, value: -1 });
    expect(defaultOf("1.5E-2")).toEqual({ literal: true, value: 0.015 });
    expect(defaultOf("true")).toEqual({ literal: true, value: true });
    expect(defaultOf("null")).toEqual({ literal: true, value: null });
    expect(defaultOf("(3)")).toEqual({ literal: true, value: 3 });
  });

  it("evaluates lists and objects whatever their separators, keys and comments", () => {
    const source = [
      "{",
      "    # a comment",
      '    a = 1, "b-c": [true, null, -2.5,], // trailing',
      "    nested = { x = \"y\" /* inline */ }",
      "    list = [",
      '      "one",',
      '      "two"',
      "    ]",
      "    1 = \"numeric key\"",
      "  }",
    ].join("\n");
    expect(defaultOf(source)).toEqual({
      literal: true,
      value: { a: 1, "b-c": [true, null, -2.5], nested: { x: "y" }, list: ["one", "two"], "1": "numeric key" },
    });
    expect(defaultOf('{ __proto__ = "x" }')).toEqual({ literal: true, value: JSON.parse('{"__proto__":"x"}') });
  });

  it("keeps non-literal defaults as source text", () => {
    for (const expression of [
      '"${var.x}-suffix"',
      "var.other",
      "local.x",
      'merge({ a = 1 }, { b = 2 })',
      "[for s in [1] : s]",
      "1 + 2",
      "true ? 1 : 2",
      "{ (var.k) = 1 }",
      '"%{ if true }x%{ endif }"',
      "!true",
    ]) {
      expect(defaultOf(expression), expression).toEqual({ literal: false, source: expression });
    }
  });

  it("reads heredocs like HCL: body lines, markers, indentation", () => {
    expect(defaultOf("<<EOT\nline 1\n  line 2\nEOT")).toEqual({ literal: true, value: "line 1\n  line 2\n" });
    // An indented closing marker is fine for `<<` too; only `<<-` strips indentation.
    expect(defaultOf("<<EOT\n  a\n  EOT")).toEqual({ literal: true, value: "  a\n" });
    expect(defaultOf("<<-EOT\n    a\n\n      b\n    EOT")).toEqual({ literal: true, value: "a\n\n  b\n" });
    // Backslashes are literal in heredocs; `$${` still escapes.
    expect(defaultOf("<<EOT\nC:\\path\\n $${x}\nEOT")).toEqual({ literal: true, value: "C:\\path\\n ${x}\n" });
    expect(defaultOf("<<EOT\nhello ${var.x}\nEOT")).toEqual({ literal: false, source: "<<EOT\nhello ${var.x}\nEOT" });
    expect(defaultOf("<<EOT\nEOT")).toEqual({ literal: true, value: "" });
  });

  it("keeps CRLF line endings inside heredocs, as HCL does", () => {
    const source = 'variable "v" {\r\n  default = <<EOT\r\na\r\nb\r\nEOT\r\n  type = string\r\n}\r\n';
    const [v] = variables(source);
    expect(v!.default).toEqual({ literal: true, value: "a\r\nb\r\n" });
    expect(v!.type).toBe("string");
  });
});

describe("variables and outputs", () => {
  it("reads every variable attribute", () => {
    const [a, b] = variables(
      [
        'variable "a" {',
        "  type        = list(object({ n = optional(number, 1) }))",
        '  description = "A"',
        "  sensitive   = true",
        "  nullable    = false",
        "  default     = null",
        "  validation {",
        "    condition     = var.a == null || length(var.a) > 0",
        '    error_message = "Give ${"one"} or more."',
        "  }",
        "}",
        'variable "b" {}',
      ].join("\n"),
    );
    expect(a).toEqual({
      name: "a",
      file: "main.tf",
      line: 1,
      type: "list(object({ n = optional(number, 1) }))",
      default: { literal: true, value: null },
      required: false,
      description: "A",
      sensitive: true,
      nullable: false,
      validations: [{ condition: "var.a == null || length(var.a) > 0", errorMessage: '"Give ${"one"} or more."' }],
    });
    expect(b).toEqual({
      name: "b",
      file: "main.tf",
      line: 12,
      type: null,
      default: null,
      required: true,
      description: null,
      sensitive: false,
      nullable: true,
      validations: [],
    });
  });

  it("reads outputs", () => {
    const { outputs } = readTerraformFile(
      parser,
      "outputs.tf",
      'output "x" {\n  value = 1\n  description = <<-EOT\n    Multi\n    line\n  EOT\n  sensitive = true\n}\noutput y { value = 2 }\n',
    );
    expect(outputs).toEqual([
      { name: "x", file: "outputs.tf", line: 1, description: "Multi\nline\n", sensitive: true },
      { name: "y", file: "outputs.tf", line: 9, description: null, sensitive: false },
    ]);
  });
});

describe("providers", () => {
  it("reads required_providers (object and legacy forms, aliases) and provider blocks", () => {
    const contents = readTerraformFile(
      parser,
      "versions.tf",
      [
        "terraform {",
        '  required_version = ">= 1.0"',
        "  required_providers {",
        '    aws = { source = "hashicorp/aws", version = "~> 5.0", configuration_aliases = [aws.east, aws.west] }',
        '    legacy = "1.2.3"',
        "  }",
        "}",
        'provider "aws" {',
        '  alias  = "east"',
        '  region = "us-east-1"',
        "}",
        "provider google {}",
      ].join("\n"),
    );
    expect(contents.requiredVersions).toEqual([">= 1.0"]);
    expect(contents.requiredProviders.map(({ file, line, ...p }) => p)).toEqual([
      { name: "aws", source: "hashicorp/aws", version: "~> 5.0", configurationAliases: ["aws.east", "aws.west"] },
      { name: "legacy", source: null, version: "1.2.3", configurationAliases: [] },
    ]);
    expect(contents.providerConfigs.map(({ file, line, ...p }) => p)).toEqual([
      { name: "aws", alias: "east" },
      { name: "google", alias: null },
    ]);
  });
});

describe("references", () => {
  it("finds var and local roots in every kind of expression", () => {
    const [r] = readTerraformFile(
      parser,
      "main.tf",
      [
        'resource "t" "n" {',
        '  a = "${var.in_template}-${local.in_template.attr}"',
        "  b = <<-EOT",
        "    ${var.in_heredoc}",
        "    %{ if var.in_directive }yes%{ endif }",
        "  EOT",
        "  c = [for x in var.in_for : x.y if local.in_cond]",
        "  d = { (var.in_key) = local.in_value[0][*].z }",
        "  e = var.in_call == null ? upper(local.in_arg) : -var.in_unary",
        "  f = aws_instance.var.id",
        "  g = module.local.x",
        '  h = "var.not_a_reference"',
        "  # var.in_comment",
        '  dynamic "x" {',
        "    for_each = var.in_dynamic",
        "    content { k = local.in_content }",
        "  }",
        "}",
      ].join("\n"),
    ).resources;
    expect(r!.references).toEqual({
      variables: ["in_call", "in_directive", "in_dynamic", "in_for", "in_heredoc", "in_key", "in_template", "in_unary"],
      locals: ["in_arg", "in_cond", "in_content", "in_template", "in_value"],
    });
  });
});

describe("normalised source (N7: differs ignoring comments and whitespace)", () => {
  const base = [
    'resource "aws_instance" "web" {',
    '  ami           = "ami-123"',
    "  tags = {",
    '    Name = "web"',
    '    Env  = "prod"',
    "  }",
    '  user_data = "echo ${var.x}"',
    "  list = [1, 2, 3]",
    "}",
  ].join("\n");
  const normalised = (source: string) => readTerraformFile(parser, "main.tf", source).resources[0]!.normalizedSource;

  it("is the same whatever the comments, indentation, alignment and separators", () => {
    const reformatted = [
      "# leading comment",
      'resource "aws_instance" "web" { // trailing',
      '    ami = "ami-123" /* inline */',
      "",
      "",
      '    tags = { Name: "web", Env = "prod", }',
      '    user_data = "echo ${ var.x }"',
      "    list = [",
      "      1, # one",
      "      2,",
      "      3",
      "    ]",
      "}",
    ].join("\n");
    expect(normalised(reformatted)).toBe(normalised(base));
    expect(normalised(base)).toBe(
      'resource "aws_instance" "web" {\nami = "ami-123"\ntags = {Name = "web", Env = "prod"}\nuser_data = "echo ${var.x}"\nlist = [1, 2, 3]\n}',
    );
  });

  it("differs when a value, a string's spacing or a heredoc's text changes", () => {
    expect(normalised(base.replace('"ami-123"', '"ami-456"'))).not.toBe(normalised(base));
    expect(normalised(base.replace('"echo ${var.x}"', '"echo  ${var.x}"'))).not.toBe(normalised(base));
    expect(normalised(base.replace("[1, 2, 3]", "[1, 3, 2]"))).not.toBe(normalised(base));
    const heredoc = (body: string) =>
      normalised(`resource "t" "n" {\n  script = <<-EOT\n${body}\n  EOT\n}\n`);
    expect(heredoc("    a\n    b")).not.toBe(heredoc("    a\n    c"));
    expect(heredoc("    a # not a comment")).not.toBe(heredoc("    a"));
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
