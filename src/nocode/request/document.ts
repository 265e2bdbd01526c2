/**
 * Schemas of JSON:API request documents on /api/v2 (decision N1, HCP Terraform's JSON:API conventions), built
 * with valibot: the kit validates bodies with them and the OpenAPI document (B14) is
 * generated from them, so a body is described once.
 *
 * Input is tolerant of what real clients send: the N1 synonyms of `data.type` (an absent
 * type is accepted), inlined or unknown members (ignored). It is strict about the JSON
 * types of the members a route reads: a wrong type is a 422 with a pointer (B3), never a
 * silent coercion. Status policy: docs/api-v2-errors.md.
 */
import * as v from "valibot";

/** Rails-style attribute label: `organization-scoped` → `Organization scoped`. */
export function attributeLabel(attribute: string): string {
  const words = attribute.replace(/[-_]/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The key a "missing key" issue names (valibot reports it on the parent object). */
function missingKey(issue: v.BaseIssue<unknown>): string | undefined {
  if (issue.received !== "undefined" || !issue.path) return undefined;
  const last = issue.path[issue.path.length - 1] as { key?: unknown; origin?: string };
  return typeof last.key === "string" ? last.key : undefined;
}

/**
 * A JSON object of named members. A required member that is absent gets the member's own
 * message (`missing(key)`), an input that is not an object (an array included: valibot's
 * objects accept arrays) gets `notObject`. Unknown members are kept and ignored (N1).
 */
export function members<E extends v.ObjectEntries>(entries: E, notObject: string, missing: (key: string) => string) {
  const base = v.looseObject(entries, (issue) => {
    const key = missingKey(issue);
    return key === undefined ? notObject : missing(key);
  });
  const run: (typeof base)["~run"] = (dataset, config) => {
    if (!Array.isArray(dataset.value)) return base["~run"](dataset, config);
    v._addIssue(base as never, "type", dataset, config);
    return dataset as never;
  };
  return { ...base, "~run": run } as typeof base;
}

/** `<Label> can't be blank` (Rails). */
export const blank = (attribute: string) => `${attributeLabel(attribute)} can't be blank`;

// ---------------------------------------------------------------------------
// Attributes
// ---------------------------------------------------------------------------

/** A required string attribute: absent, null or "" → `<Label> can't be blank`; another type → `<Label> must be a string`. */
export function requiredText(attribute: string) {
  return v.pipe(
    v.string((issue) =>
      issue.input === null || issue.input === undefined
        ? blank(attribute)
        : `${attributeLabel(attribute)} must be a string`,
    ),
    v.nonEmpty(blank(attribute)),
  );
}

/**
 * A required name (of an organization, user, team, agent pool): at most `max` characters,
 * then `pattern`, refused with `rule` (which says what the name may contain). HCP's words
 * for the length: "Name is too long (maximum is 64 characters)".
 */
export function requiredName(attribute: string, max: number, pattern: RegExp, rule: string) {
  return v.pipe(
    requiredText(attribute),
    v.maxLength(max, `${attributeLabel(attribute)} is too long (maximum is ${max} characters)`),
    v.regex(pattern, rule),
  );
}

/** Names of letters, digits, `-` and `_` (organizations, users, agent pools, as HCP Terraform allows). */
const PLAIN_NAME = /^[A-Za-z0-9_-]+$/;

/** A required name of letters, digits, `-` and `_`, at most `max` characters, refused in HCP's words. */
export function requiredPlainName(attribute: string, max: number) {
  return requiredName(
    attribute,
    max,
    PLAIN_NAME,
    `${attributeLabel(attribute)} may only contain letters, numbers, dashes (-), and underscores (_)`,
  );
}

/** An optional string attribute. */
export function text(attribute: string) {
  return v.optional(v.string(`${attributeLabel(attribute)} must be a string`));
}

/** An optional string attribute that may also be null. */
export function nullableText(attribute: string) {
  return v.optional(v.nullable(v.string(`${attributeLabel(attribute)} must be a string or null`)));
}

/** An optional boolean attribute: anything but true/false → `<Label> must be true or false`. */
export function flag(attribute: string) {
  return v.optional(v.boolean(`${attributeLabel(attribute)} must be true or false`));
}

/** An optional boolean attribute where null reads as absent. */
export function nullableFlag(attribute: string) {
  return v.nullish(v.boolean(`${attributeLabel(attribute)} must be true or false`));
}

// ---------------------------------------------------------------------------
// Relationships
// ---------------------------------------------------------------------------

type Types = readonly [string, ...string[]];

/** Whether `value` is a JSON object (not null, not an array). */
function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The path item of `input[key]`, as valibot's objects and arrays write them. */
function pathItem(input: unknown, key: string | number, value: unknown): v.IssuePathItem {
  return (
    typeof key === "number"
      ? { type: "array", origin: "value", input, key, value }
      : { type: "object", origin: "value", input, key, value }
  ) as v.IssuePathItem;
}

/** A dataset as a schema's `~run` writes it. */
interface Dataset {
  value: unknown;
  typed?: boolean;
  issues?: v.BaseIssue<unknown>[];
}

/** Set an issue's path (valibot types it read-only; its own schemas write it the same way). */
function setPath(issue: v.BaseIssue<unknown>, path: v.IssuePathItem[] | undefined): void {
  (issue as { path?: unknown }).path = path;
}

/** Record an issue of `schema` on `dataset` at `path` (relative to the schema's own place). */
function fail(
  schema: v.GenericSchema,
  dataset: unknown,
  config: v.Config<v.BaseIssue<unknown>>,
  message: string,
  path?: v.IssuePathItem[],
): void {
  v._addIssue(schema as never, "input", dataset as never, config, { message, path: path as never });
}

/**
 * A schema whose failures are all reported at its own place (one error object: the
 * first message; nested members are not named). For members a route answers as a whole.
 */
export function reportedHere<S extends v.GenericSchema>(schema: S): S {
  const run: S["~run"] = (dataset, config) => {
    const out = schema["~run"](dataset, config);
    const [first] = out.issues ?? [];
    if (first) {
      setPath(first, undefined);
      (out as Dataset).issues = [first];
    }
    return out;
  };
  return { ...schema, "~run": run };
}

/** A resource identifier `{type, id}` (type optional, one of `types`; id a non-empty string). */
export function identifier(types: Types, what: string) {
  const shape = `${what} must be {"type": "${types[0]}", "id": "…"}`;
  return members(
    {
      type: v.optional(v.picklist(types, `${what} must have type "${types[0]}"`)),
      id: v.pipe(v.string(shape), v.nonEmpty(shape)),
    },
    shape,
    () => shape,
  );
}

/**
 * A to-one relationship `{"data": {"type", "id"}}`; absent, null or `{"data": null}` mean
 * none. A relationship of another shape (no `data`, no id, an empty id) is one error at
 * the relationship (`/data/relationships/<name>`); a `type` not in `types` is an error at
 * `…/data/type`. Read its id with `relatedId`.
 */
export function toOne(name: string, types: Types) {
  const shape = `Relationship ${name} must be {"data": {"type": "${types[0]}", "id": "…"}}`;
  const wrongType = `Relationship ${name} must have type "${types[0]}"`;
  // The shape the document describes (OpenAPI); `run` below validates it with the answers above.
  const described = v.optional(
    v.nullable(
      v.looseObject({
        data: v.nullable(v.looseObject({ type: v.optional(v.picklist(types)), id: v.pipe(v.string(), v.nonEmpty()) })),
      }),
    ),
  );
  const run = (input: v.UnknownDataset, config: v.Config<v.BaseIssue<unknown>>) => {
    const dataset = input as Dataset;
    const relationship = dataset.value;
    const data = isObject(relationship) ? relationship.data : undefined;
    if (relationship === undefined || relationship === null || data === null) {
      dataset.typed = true;
    } else if (!isObject(data) || typeof data.id !== "string" || data.id === "") {
      fail(described, dataset, config, shape);
    } else if (data.type !== undefined && !(types as readonly unknown[]).includes(data.type)) {
      fail(described, dataset, config, wrongType, [
        pathItem(relationship, "data", data),
        pathItem(data, "type", data.type),
      ]);
    } else {
      dataset.typed = true;
    }
    return dataset as ReturnType<(typeof described)["~run"]>;
  };
  return { ...described, "~run": run } as typeof described;
}

/** The id a to-one relationship names, or undefined. */
export function relatedId(relationship: { data: { id: string } | null } | null | undefined): string | undefined {
  return relationship?.data?.id;
}

/**
 * A to-many relationship `{"data": [ … ]}` whose members are `member` (absent: none). A
 * relationship that is not of that form is one error at the relationship; so is one with
 * more than `max.count` members (checked before the members are). A member that is not a
 * JSON object should answer `Each member of <name> must be a resource object` (see
 * `relationshipMember`).
 */
export function toMany<M extends v.GenericSchema>(name: string, member: M, max?: { count: number; message: string }) {
  const shape = `Relationship ${name} must be {"data": [ … ]}`;
  const list = max ? v.pipe(v.array(member), v.maxLength(max.count)) : v.array(member);
  const described = v.optional(v.looseObject({ data: list }));
  const run = (input: v.UnknownDataset, config: v.Config<v.BaseIssue<unknown>>) => {
    const dataset = input as Dataset;
    const result = () => dataset as ReturnType<(typeof described)["~run"]>;
    const relationship = dataset.value;
    if (relationship === undefined) {
      dataset.typed = true;
      return result();
    }
    if (!isObject(relationship) || !Array.isArray(relationship.data)) {
      fail(described, dataset, config, shape);
      return result();
    }
    if (max && relationship.data.length > max.count) {
      fail(described, dataset, config, max.message);
      return result();
    }
    const members = v.array(member)["~run"]({ value: relationship.data }, config) as Dataset;
    for (const issue of members.issues ?? [])
      setPath(issue, [pathItem(relationship, "data", relationship.data), ...(issue.path ?? [])]);
    dataset.value = { ...relationship, data: members.value };
    dataset.typed = members.typed;
    if (members.issues) dataset.issues = members.issues;
    return result();
  };
  return { ...described, "~run": run } as typeof described;
}

/** The member of a to-many relationship `name`: `entries`, and a non-object is `Each member of <name> must be a resource object`. */
export function relationshipMember<E extends v.ObjectEntries>(
  name: string,
  entries: E,
  missing: (key: string) => string,
) {
  return members(entries, `Each member of ${name} must be a resource object`, missing);
}

// ---------------------------------------------------------------------------
// Documents
// ---------------------------------------------------------------------------

export interface ResourceSpec<A extends v.ObjectEntries, R extends v.ObjectEntries> {
  /** Accepted `data.type` values, the canonical one first (N1 synonyms follow). */
  types: Types;
  attributes?: A;
  relationships?: R;
  /** The message of a required attribute that is absent (default: `<Label> can't be blank`). */
  missing?: (attribute: string) => string;
}

const DATA_SHAPE = "data must be a JSON:API resource object";

/** The primary resource object of a request document. */
export function resource<
  A extends v.ObjectEntries = Record<never, never>,
  R extends v.ObjectEntries = Record<never, never>,
>(spec: ResourceSpec<A, R>) {
  return members(
    {
      type: v.optional(v.picklist(spec.types, `data.type must be "${spec.types[0]}"`)),
      // `id` is read only where a route says so (PATCH of HCP's documents); others ignore it.
      // Absent or null: none (as every reader before the kit read them, N1).
      attributes: v.nullish(
        members((spec.attributes ?? {}) as A, "data.attributes must be an object", spec.missing ?? blank),
        {} as never,
      ),
      relationships: v.nullish(
        members(
          (spec.relationships ?? {}) as R,
          "data.relationships must be an object",
          (key) => `Relationship ${key} is required`,
        ),
        {} as never,
      ),
    },
    DATA_SHAPE,
    () => DATA_SHAPE,
  );
}

/** A document `{"data": {…}}` whose primary resource is required. */
export function resourceDocument<
  A extends v.ObjectEntries = Record<never, never>,
  R extends v.ObjectEntries = Record<never, never>,
>(spec: ResourceSpec<A, R>) {
  return members({ data: resource(spec) }, DATA_SHAPE, () => DATA_SHAPE);
}

/** A document whose body may be empty or lack `data` (then `data` is undefined). */
export function optionalResourceDocument<
  A extends v.ObjectEntries = Record<never, never>,
  R extends v.ObjectEntries = Record<never, never>,
>(spec: ResourceSpec<A, R>) {
  return members({ data: v.optional(resource(spec)) }, DATA_SHAPE, () => DATA_SHAPE);
}

/** A document `{"data": [{type, id}, …]}` of resource identifiers (relationship endpoints). */
export function identifierListDocument(types: Types) {
  const shape = "data must be an array of resource identifier objects";
  return members({ data: v.array(identifier(types, "Each member of data"), shape) }, shape, () => shape);
}
