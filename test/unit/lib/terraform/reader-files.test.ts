// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings are HCL sources, whose ${…} is HCL interpolation
/**
 * What the Terraform reader takes from one file (N4, N7, N12): literal values, variables
 * and outputs, providers, references, and the normalised source N7 compares.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { TerraformParser } from "../../../../src/lib/terraform/parser";
import { readTerraformFile } from "../../../../src/lib/terraform/read-file";
import { nodeTerraformParser } from "./node-parser";

let parser: TerraformParser;
beforeAll(async () => {
  parser = await nodeTerraformParser();
});

/** The variables of one file. */
function variables(source: string) {
  return readTerraformFile(parser, "main.tf", source).variables;
}

/** The literal default of the only variable in `body`, or its source text. */
function defaultOf(expression: string) {
  return variables(`variable "v" {\n  default = ${expression}\n}\n`)[0]!.default;
}

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
      '    nested = { x = "y" /* inline */ }',
      "    list = [",
      '      "one",',
      '      "two"',
      "    ]",
      '    1 = "numeric key"',
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
      "merge({ a = 1 }, { b = 2 })",
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
    const heredoc = (body: string) => normalised(`resource "t" "n" {\n  script = <<-EOT\n${body}\n  EOT\n}\n`);
    expect(heredoc("    a\n    b")).not.toBe(heredoc("    a\n    c"));
    expect(heredoc("    a # not a comment")).not.toBe(heredoc("    a"));
  });
});
