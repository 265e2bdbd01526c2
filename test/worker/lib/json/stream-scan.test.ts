/**
 * The push JSON scanner (src/lib/json/stream-scan.ts) and the streaming state summary built
 * on it (src/lib/terraform/json-plan.ts StateSummaryScanner): every text is fed whole and
 * split at every position, and must agree with JSON.parse (and the summaries of test/helpers/engine-document-oracle.ts) on what is
 * JSON and what it says.
 */
import { describe, expect, it } from "vitest";
import { type JsonPath, type JsonScalar, JsonScanner } from "../../../../src/lib/json/stream-scan";
import {
  JsonPlanSummaryScanner,
  StateOutputsScanner,
  StateSummaryScanner,
} from "../../../../src/lib/terraform/json-plan";
import { summarizeJsonPlan, summarizeState } from "../../../helpers/engine-document-oracle";

/** Rebuild the value the scanner reports (every string taken whole). */
function scanValue(pieces: string[]): unknown {
  let root: unknown;
  const stack: (Record<string, unknown> | unknown[])[] = [];
  const attach = (path: JsonPath, value: unknown) => {
    const parent = stack[stack.length - 1];
    if (!parent) root = value;
    else if (Array.isArray(parent)) parent.push(value);
    else Object.defineProperty(parent, String(path[path.length - 1]), { value, enumerable: true, writable: true });
  };
  const scanner = new JsonScanner(
    {
      open: (path, kind) => {
        const c = kind === "object" ? {} : [];
        attach(path, c);
        stack.push(c);
      },
      close: () => stack.pop(),
      scalar: (path: JsonPath, value: JsonScalar) => attach(path, value),
    },
    { maxString: 1024, maxDepth: 16 },
  );
  for (const p of pieces) scanner.write(p);
  scanner.end();
  return root;
}

/** The text whole, and split in two at every position. */
function splits(text: string): string[][] {
  const out = [[text]];
  for (let i = 1; i < text.length; i++) out.push([text.slice(0, i), text.slice(i)]);
  return out;
}

const VALID = [
  '{"a":[1,-2.5e3,0,true,false,null,"x\\u00e9\\n\\"\\\\\\/"],"b":{},"c":[],"d":{"e":[[{}]]}}',
  "  42  ",
  '"just a string"',
  "[]",
  '{"__proto__":{"x":1}}',
  '{"\\ud83d\\ude00":"😀"}',
];
const INVALID = [
  "",
  "{",
  '{"a":1,}',
  "[1,]",
  '{"a" 1}',
  "01",
  "1.",
  "-",
  "tru",
  "nul",
  '"unterminated',
  '"bad \\x escape"',
  '"control \u0001 char"',
  "{} {}",
  "[1 2]",
  '{"a":1]',
  "[}",
  "{1:2}",
];

describe("JsonScanner", () => {
  it("agrees with JSON.parse on valid texts, however they are split", () => {
    for (const text of VALID)
      for (const pieces of splits(text)) expect(scanValue(pieces), JSON.stringify(pieces)).toEqual(JSON.parse(text));
  });

  it("refuses what JSON.parse refuses, however it is split", () => {
    for (const text of INVALID) {
      expect(() => JSON.parse(text), text).toThrow();
      for (const pieces of splits(text)) expect(() => scanValue(pieces), JSON.stringify(pieces)).toThrow();
    }
  });

  it("hands a string on in pieces, or skips it, without keeping it", () => {
    const pieces: string[] = [];
    const scalars: [string, JsonScalar, boolean][] = [];
    const scanner = new JsonScanner(
      {
        stringAt: (path) => (path[0] === "big" ? "pieces" : path[0] === "skip" ? "skip" : "whole"),
        piece: (t) => pieces.push(t),
        scalar: (path, value, skipped) => scalars.push([path.join("."), value, skipped]),
      },
      { maxString: 8, maxDepth: 4 },
    );
    const big = "A".repeat(100);
    for (const piece of splits(`{"big":"${big}\\n","skip":"${big}","small":"ok"}`)[37]!) scanner.write(piece);
    scanner.end();
    expect(pieces.join("")).toBe(`${big}\n`);
    expect(scalars).toEqual([
      ["big", null, true],
      ["skip", null, true],
      ["small", "ok", false],
    ]);
    // Taken whole, a string is limited; so is nesting.
    const limited = new JsonScanner({}, { maxString: 8, maxDepth: 2 });
    expect(() => limited.write(`"${big}"`)).toThrow("longer than the limit of 8");
    expect(() => new JsonScanner({}, { maxString: 8, maxDepth: 2 }).write("[[[1]]]")).toThrow("deeper than the limit");
  });
});

describe("StateSummaryScanner", () => {
  const state = {
    version: 4,
    serial: 7,
    lineage: "lin",
    outputs: { a: { value: "x", type: "string" }, secret: { value: { deep: [1] }, sensitive: true }, odd: 3 },
    resources: [
      { mode: "managed", type: "t", name: "one", instances: [{ attributes: { blob: "z".repeat(200_000) } }] },
      { mode: "data", type: "t", name: "data" },
      { module: "module.m", mode: "managed", type: "u", name: "two" },
      "not a resource",
    ],
  };

  it("says what summarizeState says, however the state is split", () => {
    const text = JSON.stringify(state);
    const expected = summarizeState(state);
    for (const at of [1, 7, 40, 100, 1000, 150_000, text.length - 3]) {
      const scanner = new StateSummaryScanner();
      scanner.write(text.slice(0, at));
      scanner.write(text.slice(at));
      expect(scanner.end()).toEqual(expected);
    }
  });

  it("refuses what is not a state", () => {
    for (const text of [
      "[]",
      '{"serial":1}',
      '{"serial":-1,"lineage":"x"}',
      '{"serial":1,"lineage":""}',
      '{"serial":1',
    ]) {
      const scanner = new StateSummaryScanner();
      expect(() => {
        scanner.write(text);
        scanner.end();
      }, text).toThrow();
    }
  });

  it("reads the outputs alone", () => {
    const text = JSON.stringify(state);
    for (const at of [5, 60, 100_000]) {
      const scanner = new StateOutputsScanner();
      scanner.write(text.slice(0, at));
      scanner.write(text.slice(at));
      expect(scanner.end()).toEqual(state.outputs);
    }
    const broken = new StateOutputsScanner();
    broken.write('{"outputs":{"a":');
    expect(broken.end()).toEqual({});
  });
});

describe("JsonPlanSummaryScanner", () => {
  const change = (address: string, actions: unknown, extra: Record<string, unknown> = {}) => ({
    address,
    mode: "managed",
    type: "t",
    name: address.split(".")[1],
    change: { actions, before: { big: "b".repeat(100_000) }, after: { nested: [{ x: 1 }] }, ...extra },
  });
  const plans: unknown[] = [
    {
      format_version: "1.2",
      resource_changes: [
        change("t.a", ["create"]),
        change("t.b", ["delete", "create"]),
        change("t.c", ["update"]),
        change("t.d", ["delete"]),
        change("t.e", ["no-op"], { importing: { id: "x" } }),
        { ...change("t.f", ["read"]), mode: "data" },
      ],
      output_changes: { o: { actions: ["no-op"] } },
    },
    { format_version: "1.2", resource_changes: [], output_changes: { o: { actions: ["update"] } } },
    { format_version: "1.2", resource_changes: null },
    { format_version: "1.2" },
    { resource_changes: {} },
    { resource_changes: [1] },
    { resource_changes: [{ address: "t.a" }] },
    { resource_changes: [{ address: "t.a", change: { actions: "create" } }] },
    { resource_changes: [{ address: "t.a", change: { actions: [["create"]] } }] },
    { resource_changes: [{ address: 3, change: { actions: [] } }] },
    [],
  ];

  it("says what summarizeJsonPlan says, or refuses what it refuses, however the plan is split", () => {
    for (const plan of plans) {
      const text = JSON.stringify(plan);
      let expected: unknown;
      try {
        expected = summarizeJsonPlan(plan);
      } catch (err) {
        expected = { error: (err as Error).message };
      }
      for (const at of [1, 17, 90, 50_000, text.length - 1]) {
        let got: unknown;
        try {
          const scanner = new JsonPlanSummaryScanner();
          scanner.write(text.slice(0, at));
          scanner.write(text.slice(at));
          got = scanner.end();
        } catch (err) {
          got = { error: (err as Error).message };
        }
        expect(got, `${text.slice(0, 80)} split at ${at}`).toEqual(expected);
      }
    }
  });
});
