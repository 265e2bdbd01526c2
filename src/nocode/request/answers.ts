/**
 * Schemas of /api/v2 answers (JSON:API documents, decisions N1, N2; HCP Terraform's JSON:API conventions–2), for
 * the route descriptions (./operation.ts) and so the OpenAPI document (B14). They are
 * exact: a resource declares each attribute and relationship with its type, and members
 * it does not declare make an answer fail the B14 check of the tests.
 */
import * as v from "valibot";

/** ISO 8601 UTC with a literal Z (HCP Terraform's JSON:API conventions). */
export const timestamp = v.pipe(v.string(), v.isoTimestamp());

/** A nullable value of `schema`. */
export const orNull = <S extends v.GenericSchema>(schema: S) => v.nullable(schema);

/** `{"id", "type"}` of a given type. */
export const identifierOf = (type: string) => v.strictObject({ id: v.string(), type: v.literal(type) });

/** A to-one relationship `{"data": {id, type} | null}`, optionally with links. */
export const toOneAnswer = (type: string) =>
  v.strictObject({ data: v.nullable(identifierOf(type)), links: v.optional(v.strictObject({ related: v.string() })) });

/** A to-many relationship `{"data": [{id, type}…]}`, optionally with links. */
export const toManyAnswer = (type: string) =>
  v.strictObject({ data: v.array(identifierOf(type)), links: v.optional(v.strictObject({ related: v.string() })) });

/** A relationship given only by a link. */
export const linkAnswer = v.strictObject({ links: v.strictObject({ related: v.string() }) });

/** `links.self` of a resource. */
export const selfLink = v.strictObject({ self: v.string() });

/** A resource object of `type` with exactly these attributes and relationships. */
export function resourceAnswer(
  type: string,
  attributes: v.ObjectEntries,
  relationships?: v.ObjectEntries,
  options: { links?: boolean } = {},
): v.GenericSchema {
  const entries: v.ObjectEntries = { id: v.string(), type: v.literal(type), attributes: v.strictObject(attributes) };
  if (relationships) entries.relationships = v.strictObject(relationships);
  if (options.links !== false) entries.links = v.optional(selfLink);
  return v.strictObject(entries);
}

/** A document with one primary resource. */
export const single = <S extends v.GenericSchema>(resource: S) => v.strictObject({ data: resource });

/** `meta.pagination` of a list (HCP Terraform's pagination). */
export const pagination = v.strictObject({
  "current-page": v.number(),
  "page-size": v.number(),
  "prev-page": v.nullable(v.number()),
  "next-page": v.nullable(v.number()),
  "total-pages": v.number(),
  "total-count": v.number(),
});

/** A paged list document. */
export const pagedList = <S extends v.GenericSchema>(resource: S) =>
  v.strictObject({
    data: v.array(resource),
    meta: v.strictObject({ pagination }),
    links: v.strictObject({
      self: v.string(),
      first: v.string(),
      prev: v.nullable(v.string()),
      next: v.nullable(v.string()),
      last: v.string(),
    }),
  });

/** One JSON:API error object (HCP Terraform's JSON:API errors; src/nocode/errors.ts renders it). */
export const errorObject = v.strictObject({
  status: v.pipe(v.string(), v.regex(/^[45][0-9][0-9]$/)),
  title: v.string(),
  detail: v.optional(v.string()),
  source: v.optional(v.union([v.strictObject({ pointer: v.string() }), v.strictObject({ parameter: v.string() })])),
});

/** The error document of every /api/v2 error answer. */
export const errorDocument = v.strictObject({ errors: v.pipe(v.array(errorObject), v.minLength(1)) });
