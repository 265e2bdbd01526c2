/**
 * The console's provision form (N14): fields generated from a version's variables and
 * the module's options, the E4 document built from what a person typed, and E4's
 * refusals placed beside their fields in plain words.
 */
import { describe, expect, it } from "vitest";
import type { VariableSummary } from "../../../../src/lib/terraform/types";
import { formErrors, formFields, provisionDocument } from "../../../../src/nocode/console/form";

/** A refusal as E4 throws it (a NocodeError's detail, pointer and further errors). */
function refusal(detail: string, pointer?: string) {
  return { detail, pointer, more: [] };
}

function variable(name: string, extra: Partial<VariableSummary> = {}): VariableSummary {
  return {
    name,
    type: "string",
    default: null,
    required: true,
    description: null,
    sensitive: false,
    nullable: true,
    validations: [],
    file: "variables.tf",
    line: 1,
    ...extra,
  };
}

const summary = {
  variables: [
    variable("region", {
      default: { literal: true, value: "eu-west-1" },
      required: false,
      description: "Where it runs",
    }),
    variable("size", { type: "number", default: { literal: true, value: 3 }, required: false }),
    variable("password", { sensitive: true }),
    variable("token", { sensitive: true, default: { literal: true, value: "dflt" }, required: false }),
  ],
};
const options = [
  {
    id: "o",
    noCodeModuleId: "m",
    variableName: "region",
    variableType: "string",
    options: ["eu-west-1", "us-east-1"],
    position: 0,
  },
];

describe("formFields", () => {
  it("makes a select of options, a password field of a sensitive variable, fills defaults and marks required", () => {
    const fields = formFields(summary, options);
    expect(fields.map((f) => [f.name, f.options, f.defaultText, f.required, f.sensitive, f.hcl])).toEqual([
      ["var.region", ["eu-west-1", "us-east-1"], "eu-west-1", false, false, false],
      ["var.size", [], "3", false, false, true],
      ["var.password", [], "", true, true, false],
      ["var.token", [], "", false, true, false], // a sensitive default is never shown
    ]);
    expect(fields[0]!.description).toBe("Where it runs");
  });
});

describe("provisionDocument", () => {
  it("sends what differs from the defaults, HCL for non-strings, sensitive flags, and auto-apply", () => {
    const fields = formFields(summary, options);
    const doc = provisionDocument(fields, {
      name: "ws",
      "var.region": "us-east-1",
      "var.size": "3",
      "var.password": "p",
      "var.token": "",
      "auto-apply": "on",
    });
    expect(doc).toEqual({
      data: {
        type: "workspaces",
        attributes: { name: "ws", "auto-apply": true },
        relationships: {
          vars: {
            data: [
              {
                type: "vars",
                attributes: { key: "region", value: "us-east-1", category: "engine", hcl: false, sensitive: false },
              },
              {
                type: "vars",
                attributes: { key: "password", value: "p", category: "engine", hcl: false, sensitive: true },
              },
            ],
          },
        },
      },
    });
  });
});

describe("formErrors", () => {
  const fields = formFields(summary, options);
  it("puts a name error beside the name", () => {
    const e = refusal("Name has already been taken", "/data/attributes/name");
    expect(formErrors(e, fields, [])).toEqual({
      fields: { name: "A workspace with this name already exists in the organization. Choose another name." },
      general: [],
    });
  });
  it("puts option and required-variable refusals beside the variables they name", () => {
    const option = refusal('Value of variable "region" must be one of the allowed options: "eu-west-1", "us-east-1"');
    expect(formErrors(option, fields, ["region"]).fields).toEqual({
      "var.region": "Choose one of the allowed values: eu-west-1, us-east-1.",
    });
    const missing = refusal(
      'Missing required variables "password", "region": module version 1.0.0 declares no default, so a value must be given',
    );
    expect(Object.keys(formErrors(missing, fields, []).fields)).toEqual(["var.password", "var.region"]);
  });
  it("places a pointer into the vars relationship on the variable sent at that index", () => {
    const e = refusal("Value must be a string", "/data/relationships/vars/data/1/attributes/value");
    expect(formErrors(e, fields, ["region", "size"]).fields).toEqual({ "var.size": "Value must be a string" });
  });
  it("keeps anything else as a general error", () => {
    const e = refusal("The no-code module is not enabled");
    expect(formErrors(e, fields, [])).toEqual({ fields: {}, general: ["The no-code module is not enabled"] });
  });
});
