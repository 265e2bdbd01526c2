/**
 * The part of the OpenAPI 3.1 object model Keyway's documents use (OpenAPI 3.1.0 §4.8).
 * Pure types: both wings build their documents with them, and the tests read served
 * documents through them.
 *
 * @see https://spec.openapis.org/oas/v3.1.0#schema
 */

/**
 * A JSON Schema (draft 2020-12, OpenAPI 3.1's default dialect, §4.8.24). Kept open: a
 * schema is data handed to a validator, and every keyword of the dialect is allowed.
 */
export type JsonSchema = boolean | JsonSchemaObject;

export interface JsonSchemaObject {
  $ref?: string;
  type?: JsonType | JsonType[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: JsonSchema;
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  allOf?: JsonSchema[];
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  default?: unknown;
  deprecated?: boolean;
  [keyword: string]: unknown;
}

export type JsonType = "null" | "boolean" | "object" | "array" | "number" | "integer" | "string";

/** The HTTP methods a Path Item can hold (§4.8.9), lower-case as in the document. */
export type HttpMethod = "get" | "put" | "post" | "delete" | "options" | "head" | "patch" | "trace";

export const HTTP_METHODS: readonly HttpMethod[] = [
  "get",
  "put",
  "post",
  "delete",
  "options",
  "head",
  "patch",
  "trace",
];

/** §4.8.1 */
export interface OpenApiDocument {
  openapi: string;
  info: InfoObject;
  jsonSchemaDialect?: string;
  servers?: ServerObject[];
  paths?: Record<string, PathItem>;
  components?: ComponentsObject;
  security?: SecurityRequirement[];
  tags?: TagObject[];
  [extension: `x-${string}`]: unknown;
}

/** §4.8.2 */
export interface InfoObject {
  title: string;
  version: string;
  summary?: string;
  description?: string;
  license?: { name: string; identifier?: string; url?: string };
}

/** §4.8.5 */
export interface ServerObject {
  url: string;
  description?: string;
}

/** §4.8.7 */
export interface ComponentsObject {
  schemas?: Record<string, JsonSchema>;
  responses?: Record<string, ResponseObject | ReferenceObject>;
  parameters?: Record<string, ParameterObject | ReferenceObject>;
  requestBodies?: Record<string, RequestBodyObject | ReferenceObject>;
  headers?: Record<string, HeaderObject | ReferenceObject>;
  securitySchemes?: Record<string, SecuritySchemeObject>;
}

/** §4.8.9 */
export type PathItem = {
  /** A local reference to another Path Item (§4.8.9.1), e.g. a second spelling of the same path. */
  $ref?: string;
  summary?: string;
  description?: string;
  servers?: ServerObject[];
  parameters?: (ParameterObject | ReferenceObject)[];
} & Partial<Record<HttpMethod, OperationObject>>;

/** §4.8.10 */
export interface OperationObject {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: (ParameterObject | ReferenceObject)[];
  requestBody?: RequestBodyObject | ReferenceObject;
  responses: Record<string, ResponseObject | ReferenceObject>;
  /** `[]` marks an operation that needs no credentials; absent means the document's default. */
  security?: SecurityRequirement[];
  deprecated?: boolean;
  [extension: `x-${string}`]: unknown;
}

/** §4.8.12 */
export interface ParameterObject {
  name: string;
  in: "query" | "header" | "path" | "cookie";
  description?: string;
  required?: boolean;
  deprecated?: boolean;
  schema?: JsonSchema;
}

/** §4.8.13 */
export interface RequestBodyObject {
  description?: string;
  required?: boolean;
  content: Record<string, MediaTypeObject>;
}

/** §4.8.14 */
export interface MediaTypeObject {
  schema?: JsonSchema;
}

/** §4.8.17 */
export interface ResponseObject {
  description: string;
  headers?: Record<string, HeaderObject | ReferenceObject>;
  content?: Record<string, MediaTypeObject>;
}

/** §4.8.21 */
export interface HeaderObject {
  description?: string;
  required?: boolean;
  schema?: JsonSchema;
}

/** §4.8.22 */
export interface TagObject {
  name: string;
  description?: string;
}

/** §4.8.23 */
export interface ReferenceObject {
  $ref: string;
  summary?: string;
  description?: string;
}

/** §4.8.27 */
export interface SecuritySchemeObject {
  type: "apiKey" | "http" | "mutualTLS" | "oauth2" | "openIdConnect";
  description?: string;
  name?: string;
  in?: "query" | "header" | "cookie";
  scheme?: string;
  bearerFormat?: string;
}

/** §4.8.30 */
export type SecurityRequirement = Record<string, string[]>;

export function isReference(value: unknown): value is ReferenceObject {
  return typeof value === "object" && value !== null && typeof (value as { $ref?: unknown }).$ref === "string";
}
