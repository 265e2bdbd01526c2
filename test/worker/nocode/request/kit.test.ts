/**
 * The /api/v2 request kit: every malformed spelling of a request document maps
 * to the one status policy of docs/api-v2-errors.md (422 `invalid attribute` with the
 * pointer of the member at fault), query parameters to 400 with `source.parameter`, and
 * the one pager reads, bounds and caps `page[number]`/`page[size]`.
 */
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { NocodeError } from "../../../../src/nocode/errors";
import {
  flag,
  identifierListDocument,
  optionalResourceDocument,
  requiredText,
  resourceDocument,
  text,
  toMany,
  toOne,
} from "../../../../src/nocode/request/document";
import { documentError, queryError } from "../../../../src/nocode/request/issues";
import { MAX_PAGE_NUMBER, pageDocument, pageOf, pageQuery } from "../../../../src/nocode/request/query";

const widget = resourceDocument({
  types: ["widgets", "widget"],
  attributes: {
    name: v.pipe(requiredText("name"), v.maxLength(8, "Name is too long (maximum is 8 characters)")),
    color: text("color"),
    "auto-apply": flag("auto-apply"),
  },
  relationships: {
    project: toOne("project", ["projects", "project"]),
    parts: toMany("parts", v.looseObject({ id: v.string("Each member of parts must have an id") })),
  },
});

/** The error objects a body yields (as rendered), or "ok". */
function errorsOf(schema: v.GenericSchema, body: unknown) {
  const result = v.safeParse(schema, body, { abortPipeEarly: true });
  if (result.success) return "ok";
  const error = documentError(result.issues);
  expect(error).toBeInstanceOf(NocodeError);
  return error.toObjects();
}

const one = (pointer: string, detail: string) => [
  { status: "422", title: "invalid attribute", detail, source: { pointer } },
];

describe("request documents: one status, one pointer per failed member", () => {
  it("accepts a well-formed document, the N1 synonyms and an absent type; ignores unknown members", () => {
    expect(errorsOf(widget, { data: { type: "widgets", attributes: { name: "a" } } })).toBe("ok");
    expect(errorsOf(widget, { data: { type: "widget", attributes: { name: "a", extra: [1] } }, meta: {} })).toBe("ok");
    expect(errorsOf(widget, { data: { attributes: { name: "a" } } })).toBe("ok");
  });

  it.each([
    ["no data", {}, "/data", "data must be a JSON:API resource object"],
    ["data null", { data: null }, "/data", "data must be a JSON:API resource object"],
    ["data a string", { data: "x" }, "/data", "data must be a JSON:API resource object"],
    ["data an array", { data: [] }, "/data", "data must be a JSON:API resource object"],
    [
      "wrong type",
      { data: { type: "gadgets", attributes: { name: "a" } } },
      "/data/type",
      'data.type must be "widgets"',
    ],
    [
      "type not a string",
      { data: { type: 7, attributes: { name: "a" } } },
      "/data/type",
      'data.type must be "widgets"',
    ],
    ["attributes an array", { data: { attributes: [] } }, "/data/attributes", "data.attributes must be an object"],
    ["attributes a string", { data: { attributes: "x" } }, "/data/attributes", "data.attributes must be an object"],
    [
      "relationships a number",
      { data: { attributes: { name: "a" }, relationships: 1 } },
      "/data/relationships",
      "data.relationships must be an object",
    ],
    ["required attribute absent", { data: { attributes: {} } }, "/data/attributes/name", "Name can't be blank"],
    ["attributes absent", { data: { type: "widgets" } }, "/data/attributes/name", "Name can't be blank"],
    [
      "required attribute null",
      { data: { attributes: { name: null } } },
      "/data/attributes/name",
      "Name can't be blank",
    ],
    [
      "required attribute empty",
      { data: { attributes: { name: "" } } },
      "/data/attributes/name",
      "Name can't be blank",
    ],
    [
      "required attribute a number",
      { data: { attributes: { name: 5 } } },
      "/data/attributes/name",
      "Name must be a string",
    ],
    [
      "a constraint",
      { data: { attributes: { name: "much-too-long" } } },
      "/data/attributes/name",
      "Name is too long (maximum is 8 characters)",
    ],
    [
      "optional string of another type",
      { data: { attributes: { name: "a", color: false } } },
      "/data/attributes/color",
      "Color must be a string",
    ],
    [
      "boolean of another type",
      { data: { attributes: { name: "a", "auto-apply": "true" } } },
      "/data/attributes/auto-apply",
      "Auto apply must be true or false",
    ],
    [
      "to-one not an object",
      { data: { attributes: { name: "a" }, relationships: { project: "p" } } },
      "/data/relationships/project",
      'Relationship project must be {"data": {"type": "projects", "id": "…"}}',
    ],
    [
      "to-one without an id",
      { data: { attributes: { name: "a" }, relationships: { project: { data: { type: "projects" } } } } },
      "/data/relationships/project",
      'Relationship project must be {"data": {"type": "projects", "id": "…"}}',
    ],
    [
      "to-one of the wrong type",
      { data: { attributes: { name: "a" }, relationships: { project: { data: { type: "teams", id: "t" } } } } },
      "/data/relationships/project/data/type",
      'Relationship project must have type "projects"',
    ],
    [
      "to-many not an array",
      { data: { attributes: { name: "a" }, relationships: { parts: { data: {} } } } },
      "/data/relationships/parts",
      'Relationship parts must be {"data": [ … ]}',
    ],
    [
      "to-many member",
      { data: { attributes: { name: "a" }, relationships: { parts: { data: [{ id: "x" }, { id: 3 }] } } } },
      "/data/relationships/parts/data/1/id",
      "Each member of parts must have an id",
    ],
  ])("%s → 422 at the member's pointer", (_what, body, pointer, detail) => {
    expect(errorsOf(widget, body)).toEqual(one(pointer, detail));
  });

  it("reports every failed member together (Rails reports every failed validation)", () => {
    const objects = errorsOf(widget, { data: { attributes: { name: 1, color: 2, "auto-apply": 3 } } });
    expect(objects).not.toBe("ok");
    expect((objects as { source: { pointer: string } }[]).map((o) => o.source.pointer)).toEqual([
      "/data/attributes/name",
      "/data/attributes/color",
      "/data/attributes/auto-apply",
    ]);
    expect(new Set((objects as { status: string }[]).map((o) => o.status))).toEqual(new Set(["422"]));
  });

  it("escapes pointer tokens (RFC 6901)", () => {
    const odd = resourceDocument({ types: ["x"], attributes: { "a/b~c": requiredText("a/b~c") } });
    expect(errorsOf(odd, { data: { attributes: {} } })).toEqual(
      one("/data/attributes/a~1b~0c", "A/b~c can't be blank"),
    );
  });

  it("an optional document may be empty or lack data, but a data member present must be a document", () => {
    const optional = optionalResourceDocument({ types: ["tokens"], attributes: { description: text("description") } });
    expect(errorsOf(optional, {})).toBe("ok");
    expect(v.parse(optional, {}).data).toBeUndefined();
    expect(errorsOf(optional, { data: 1 })).toEqual(one("/data", "data must be a JSON:API resource object"));
    expect(errorsOf(optional, { data: { type: "nope" } })).toEqual(one("/data/type", 'data.type must be "tokens"'));
  });

  it("identifier lists (relationship endpoints) use the same status and pointers", () => {
    const users = identifierListDocument(["users", "user"]);
    expect(errorsOf(users, { data: [{ type: "users", id: "u1" }, { id: "u2" }] })).toBe("ok");
    expect(errorsOf(users, { data: {} })).toEqual(one("/data", "data must be an array of resource identifier objects"));
    expect(errorsOf(users, {})).toEqual(one("/data", "data must be an array of resource identifier objects"));
    expect(errorsOf(users, { data: [1] })).toEqual(
      one("/data/0", 'Each member of data must be {"type": "users", "id": "…"}'),
    );
    expect(errorsOf(users, { data: [{ type: "teams", id: "t" }] })).toEqual(
      one("/data/0/type", 'Each member of data must have type "users"'),
    );
    expect(errorsOf(users, { data: [{ type: "users", id: "" }] })).toEqual(
      one("/data/0/id", 'Each member of data must be {"type": "users", "id": "…"}'),
    );
  });
});

describe("the one pager", () => {
  const page = (query: Record<string, string>) => {
    const result = v.safeParse(pageQuery, query, { abortPipeEarly: true });
    if (!result.success) return queryError(result.issues).toObjects();
    return pageOf(result.output);
  };
  const bad = (parameter: string, detail: string) => [
    { status: "400", title: "bad request", detail, source: { parameter } },
  ];

  it("defaults to page 1 of 20, reads both parameters, caps the size at 100 and treats empty as absent", () => {
    expect(page({})).toEqual({ number: 1, size: 20, offset: 0 });
    expect(page({ "page[number]": "3", "page[size]": "7" })).toEqual({ number: 3, size: 7, offset: 14 });
    expect(page({ "page[size]": "500" })).toEqual({ number: 1, size: 100, offset: 0 });
    expect(page({ "page[number]": "", "page[size]": "" })).toEqual({ number: 1, size: 20, offset: 0 });
    expect(page({ "page[number]": String(MAX_PAGE_NUMBER) })).toMatchObject({ number: MAX_PAGE_NUMBER });
    expect(page({ unrelated: "x" })).toEqual({ number: 1, size: 20, offset: 0 });
  });

  it.each([
    ["page[number]", "0", "page[number] must be a positive integer"],
    ["page[number]", "-1", "page[number] must be a positive integer"],
    ["page[number]", "1.5", "page[number] must be a positive integer"],
    ["page[number]", "abc", "page[number] must be a positive integer"],
    ["page[number]", String(MAX_PAGE_NUMBER + 1), `page[number] must be at most ${MAX_PAGE_NUMBER}`],
    ["page[number]", "99999999999999999999999", `page[number] must be at most ${MAX_PAGE_NUMBER}`],
    ["page[size]", "0", "page[size] must be a positive integer"],
    ["page[size]", "x", "page[size] must be a positive integer"],
  ])("%s=%s → 400 naming the parameter (B9)", (parameter, value, detail) => {
    expect(page({ [parameter]: value })).toEqual(bad(parameter, detail));
  });

  it("renders meta.pagination and absolute links", () => {
    const doc = pageDocument(new URL("https://k.test/api/v2/x?q=1"), { number: 2, size: 10, offset: 10 }, 25);
    expect(doc.meta.pagination).toEqual({
      "current-page": 2,
      "page-size": 10,
      "prev-page": 1,
      "next-page": 3,
      "total-pages": 3,
      "total-count": 25,
    });
    expect(doc.links.next).toBe("https://k.test/api/v2/x?q=1&page%5Bnumber%5D=3&page%5Bsize%5D=10");
    expect(pageDocument(new URL("https://k.test/l"), { number: 1, size: 20, offset: 0 }, 0).links).toMatchObject({
      prev: null,
      next: null,
    });
  });
});
