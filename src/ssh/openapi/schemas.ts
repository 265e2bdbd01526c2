/**
 * The building blocks /v1 routes describe themselves with in the OpenAPI document
 * (decision B14; `RouteDocs` in ../router.ts). A route's `docs` sits beside its
 * handlers and reuses the FieldSchema objects they parse with, so the document is
 * generated from the same definitions that validate requests (./document.ts).
 *
 * Shapes follow Vault's framework (sdk/framework/openapi.go): request fields as a JSON
 * object body, answers in Vault's envelope (`request_id`, `lease_id`, `renewable`,
 * `lease_duration`, `data`, `wrap_info`, `warnings`, `auth`), errors as
 * `{"errors": [...]}` (S2a–S4).
 */
import type { JsonSchema, JsonSchemaObject, ResponseObject } from "../../lib/openapi/types";
import type { FieldSchema, FieldSpec } from "../fields";

// ---------------------------------------------------------------------------
// Schemas
// ---------------------------------------------------------------------------

export const str = (description?: string): JsonSchemaObject => ({
  type: "string",
  ...(description ? { description } : {}),
});
export const int = (description?: string): JsonSchemaObject => ({
  type: "integer",
  ...(description ? { description } : {}),
});
export const bool = (description?: string): JsonSchemaObject => ({
  type: "boolean",
  ...(description ? { description } : {}),
});
export const strings = (description?: string): JsonSchemaObject => ({
  type: "array",
  items: { type: "string" },
  ...(description ? { description } : {}),
});
/** An RFC 3339 time as Vault renders it. */
export const dateTime = (description?: string): JsonSchemaObject => ({ ...str(description), format: "date-time" });
/** A string→string map (Vault's TypeMap / TypeKVPairs). */
export const stringMap = (description?: string): JsonSchemaObject => ({
  type: "object",
  additionalProperties: { type: "string" },
  ...(description ? { description } : {}),
});
export const nullable = (schema: JsonSchemaObject): JsonSchemaObject => ({ anyOf: [schema, { type: "null" }] });
export const arrayOf = (items: JsonSchema, description?: string): JsonSchemaObject => ({
  type: "array",
  items,
  ...(description ? { description } : {}),
});

/**
 * A closed object: every property listed, all required except `optional` (properties a
 * handler leaves out when empty), no others.
 */
export function object(properties: Record<string, JsonSchema>, optional: string[] = []): JsonSchemaObject {
  return {
    type: "object",
    properties,
    required: Object.keys(properties).filter((name) => !optional.includes(name)),
    additionalProperties: false,
  };
}

/** An object keyed by names the caller chose (ids, serials, role names), each value `values`. */
export function keyedBy(values: JsonSchema, description: string): JsonSchemaObject {
  return { type: "object", additionalProperties: values, description };
}

/** The `data` of a list (`GET …?list=true`): `keys`, and `key_info` when the list has one. */
export function listData(keyInfo?: JsonSchema): JsonSchemaObject {
  return keyInfo === undefined
    ? object({ keys: strings() })
    : object({ keys: strings(), key_info: keyedBy(keyInfo, "one entry per key") });
}

/**
 * A request field as JSON Schema, after Vault's framework conversion (Vault's sdk/framework/field_data.go):
 * what each FieldType accepts on the wire.
 */
export function fieldSchema(spec: FieldSpec): JsonSchemaObject {
  const withDefault = (schema: JsonSchemaObject): JsonSchemaObject =>
    spec.default === undefined ? schema : { ...schema, default: spec.default };
  switch (spec.type) {
    case "string":
      return withDefault({ type: "string" });
    case "bool":
      return withDefault({ type: "boolean" });
    case "int":
      return withDefault({ type: "integer" });
    case "duration":
      return withDefault({
        type: ["integer", "string"],
        format: "duration",
        description: "seconds, or a Go duration (`1h30m`), or days (`2d`)",
      });
    case "map":
      return withDefault({ type: "object", additionalProperties: true, description: "a map of strings" });
    case "commaList":
      return withDefault({
        type: ["array", "string"],
        items: { type: "string" },
        description: "a JSON array, or a comma-separated string",
      });
    case "raw":
      return withDefault({ description: "any JSON value" });
  }
}

/** The JSON body of a write: the handler's fields. Unknown fields are ignored with a warning, as in Vault. */
export function fieldsBodySchema(fields: FieldSchema): JsonSchemaObject {
  const properties: Record<string, JsonSchema> = {};
  for (const [name, spec] of Object.entries(fields)) properties[name] = fieldSchema(spec);
  return { type: "object", properties };
}

// ---------------------------------------------------------------------------
// Answers
// ---------------------------------------------------------------------------

/** References into the document's components (./document.ts defines them). */
export const COMPONENT = {
  envelope: "#/components/schemas/VaultResponse",
  auth: "#/components/schemas/VaultAuth",
  error: "#/components/responses/VaultError",
} as const;

/**
 * Vault's envelope with these properties narrowed, and no property beyond the envelope's
 * (and `extra`'s): `unevaluatedProperties` sees through the `allOf`.
 */
export function envelopeWith(
  overrides: Record<string, JsonSchema>,
  extra: { required?: string[] } = {},
): JsonSchemaObject {
  return {
    allOf: [
      { $ref: COMPONENT.envelope },
      { type: "object", properties: overrides, ...(extra.required ? { required: extra.required } : {}) },
    ],
    unevaluatedProperties: false,
  };
}

const json = (schema: JsonSchema) => ({ "application/json": { schema } });

/** 200 in Vault's envelope with this `data`. */
export function envelope(description: string, data: JsonSchema): Record<string, ResponseObject> {
  return { "200": { description, content: json(envelopeWith({ data, auth: { type: "null" } })) } };
}

/** 200 in Vault's envelope with an `auth` block and no `data` (token create and renew). */
export function authEnvelope(description: string): Record<string, ResponseObject> {
  return {
    "200": { description, content: json(envelopeWith({ data: { type: "null" }, auth: { $ref: COMPONENT.auth } })) },
  };
}

/**
 * A write with nothing to return: 204, or 200 with `data: null` when there are warnings
 * (S3, respond.ts `vaultNoContent`).
 */
export function written(description = "written"): Record<string, ResponseObject> {
  return {
    "204": { description },
    "200": {
      description: `${description}, with warnings`,
      content: json(
        envelopeWith({
          data: { type: "null" },
          auth: { type: "null" },
          warnings: { type: "array", items: { type: "string" }, minItems: 1 },
        }),
      ),
    },
  };
}

/** A JSON answer outside the envelope (Vault's `sys/health`, `sys/seal-status`, `sys/leader`, the OpenAPI document). */
export function rawJson(description: string, schema: JsonSchema, status = "200"): Record<string, ResponseObject> {
  return { [status]: { description, content: json(schema) } };
}

/** A public key as stored, `text/plain`. */
export function plainText(description: string): Record<string, ResponseObject> {
  return { "200": { description, content: { "text/plain": { schema: { type: "string" } } } } };
}

/** An HTML page (the OIDC callback's form_post page, S26). */
export function html(description: string, status = "200"): Record<string, ResponseObject> {
  return { [status]: { description, content: { "text/html": { schema: { type: "string" } } } } };
}

const cacheHeaders = {
  ETag: {
    description: "the entity tag of this version; send it back in `If-None-Match`",
    required: true,
    schema: { type: "string" },
  },
  "Cache-Control": { description: "`public, max-age=60`", required: true, schema: { type: "string" } },
} as const;

/** A cacheable file with `ETag` and `Cache-Control`, and 304 for a matching `If-None-Match` (S21, S23). */
export function cacheableFile(
  description: string,
  mediaType: "text/plain" | "application/octet-stream",
): Record<string, ResponseObject> {
  const schema: JsonSchemaObject =
    mediaType === "text/plain" ? { type: "string" } : { type: "string", contentMediaType: "application/octet-stream" };
  return {
    "200": { description, headers: { ...cacheHeaders }, content: { [mediaType]: { schema } } },
    "304": { description: "`If-None-Match` names the current version", headers: { ...cacheHeaders } },
  };
}
