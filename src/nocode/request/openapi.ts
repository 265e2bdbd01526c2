/**
 * The OpenAPI 3.1 document of /api/v2 (decision B14), generated from Hono's route tables
 * and the routes' descriptions (./operation.ts), never written beside them: the request
 * schemas are the ones the kit validates with, converted by @valibot/to-json-schema. B14:
 * it also covers Terraform's module registry protocol (`/api/registry/v1`) and service
 * discovery (`/.well-known/terraform.json`); the `/app` pages are not in it.
 *
 * @see https://spec.openapis.org/oas/v3.1.0
 */
import { toJsonSchema } from "@valibot/to-json-schema";
import type * as v from "valibot";
import { pathTemplateParameters } from "../../lib/openapi/paths";
import { JSONAPI_MEDIA_TYPE } from "../errors";
import { type RouteRule, ruleOf } from "../route-rights";
import { errorDocument } from "./answers";
import { type AnswerSpec, type OperationSpec, operationOf } from "./operation";

type Json = Record<string, unknown>;

/** A route as Hono's `app.routes` lists it. */
export interface TableRoute {
  method: string;
  path: string;
  handler: unknown;
}

/** One route table and where it is mounted. */
export interface RouteSource {
  prefix: string;
  routes: readonly TableRoute[];
}

/** A JSON Schema (draft 2020-12, OpenAPI 3.1's dialect) of a valibot schema. */
export function jsonSchemaOf(schema: v.GenericSchema, typeMode: "input" | "output" = "output"): Json {
  const converted = toJsonSchema(schema, { target: "draft-2020-12", typeMode, errorMode: "ignore" }) as Json;
  delete converted.$schema;
  return converted;
}

/** `/organizations/:org` → `/organizations/{org}` (a `:name{regex}` constraint is dropped). */
export function openApiPath(path: string): string {
  return path
    .split("/")
    .map((segment) => (segment.startsWith(":") ? `{${withoutConstraint(segment.slice(1))}}` : segment))
    .join("/");
}

/** Hono's `:name{regex}` → `name`. */
function withoutConstraint(parameter: string): string {
  const brace = parameter.indexOf("{");
  return brace === -1 ? parameter : parameter.slice(0, brace);
}

function pathParameters(template: string): Json[] {
  return pathTemplateParameters(template).map((name) => ({
    name,
    in: "path",
    required: true,
    schema: { type: "string" },
  }));
}

const ERROR_CONTENT = { [JSONAPI_MEDIA_TYPE]: { schema: { $ref: "#/components/schemas/ErrorDocument" } } };

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: "Bad request: a body that is not a JSON object, or a query parameter that does not read (source.parameter)",
  401: "Missing or invalid token (N2)",
  404: "Not found, or not permitted (N2)",
  409: "Conflict with the resource's state",
  413: "The body is larger than 1 MiB (B5)",
  422: "The request document is not the one the route reads (source.pointer), or a rule is violated",
};

function errorAnswer(status: number): Json {
  return { description: ERROR_DESCRIPTIONS[status] ?? "Error", content: ERROR_CONTENT };
}

function answerObject(answer: AnswerSpec): Json {
  const out: Json = { description: answer.description };
  if (answer.headers) {
    out.headers = Object.fromEntries(
      Object.entries(answer.headers).map(([name, h]) => [
        name,
        { description: h.description, required: true, schema: h.schema ? jsonSchemaOf(h.schema) : { type: "string" } },
      ]),
    );
  }
  if (answer.schema)
    out.content = { [answer.contentType ?? JSONAPI_MEDIA_TYPE]: { schema: jsonSchemaOf(answer.schema) } };
  return out;
}

function queryParameters(query: v.GenericSchema): Json[] {
  const entries = (query as unknown as { entries?: Record<string, v.GenericSchema> }).entries ?? {};
  return Object.entries(entries).map(([name, schema]) => ({
    name,
    in: "query",
    required: !["optional", "nullish", "exact_optional"].includes(baseType(schema)),
    schema: jsonSchemaOf(schema, "input"),
  }));
}

/** The kind of a schema (`optional`, `string`, …); a pipe has its first schema's kind. */
function baseType(schema: v.GenericSchema): string {
  return (schema as unknown as { type: string }).type;
}

function isPublic(rule: RouteRule | undefined): boolean {
  return rule !== undefined && "caller" in rule && rule.caller === "public";
}

function operationObject(
  method: string,
  template: string,
  spec: OperationSpec<v.GenericSchema | undefined, v.GenericSchema | undefined>,
  rule: RouteRule | undefined,
): Json {
  const responses: Json = {};
  for (const [status, answer] of Object.entries(spec.answers)) responses[status] = answerObject(answer);
  const errors = new Set<number>(spec.errors ?? []);
  if (!isPublic(rule)) errors.add(401).add(404);
  if (spec.body) errors.add(400).add(413).add(422);
  if (spec.query) errors.add(400);
  for (const status of [...errors].sort()) responses[String(status)] ??= errorAnswer(status);
  responses["5XX"] = { description: "Internal fault (B3) or a misconfigured deployment (B10)", content: ERROR_CONTENT };
  const out: Json = {
    operationId: operationIdOf(method, template),
    summary: spec.summary,
    tags: [spec.tag],
    parameters: [...pathParameters(template), ...(spec.query ? queryParameters(spec.query) : [])],
    responses,
  };
  if (spec.description) out.description = spec.description;
  if (spec.body) {
    const schema = jsonSchemaOf(spec.body, "input");
    // A document whose `data` is optional (./document.ts optionalResourceDocument) may be sent empty.
    const data = (spec.body as unknown as { entries?: Record<string, { type?: string }> }).entries?.data;
    out.requestBody = {
      required: data?.type !== "optional",
      content: { [JSONAPI_MEDIA_TYPE]: { schema }, "application/json": { schema } },
    };
  }
  if (isPublic(rule)) out.security = [];
  return out;
}

/** A route not described yet: in the document, with any answer allowed. */
function undescribedOperation(method: string, template: string, rule: RouteRule | undefined): Json {
  const out: Json = {
    operationId: operationIdOf(method, template),
    summary: "(not described yet)",
    "x-keyway-undescribed": true,
    parameters: pathParameters(template),
    responses: { default: { description: "Any answer (this route has no description yet)", content: { "*/*": {} } } },
  };
  if (isPublic(rule)) out.security = [];
  return out;
}

function operationIdOf(method: string, template: string): string {
  const words = template
    .replace(/[{}]/g, "")
    .split(/[^A-Za-z0-9]/)
    .filter(Boolean);
  return [method.toLowerCase(), ...words.map((w) => w.charAt(0).toUpperCase() + w.slice(1))].join("");
}

/** Build the document from the route tables (see the module comment). */
export function buildApiV2Document(sources: readonly RouteSource[], info: { version: string }): Json {
  const paths: Record<string, Json> = {};
  // Each route appears once per handler (rights, description, handler): gather them.
  const byRoute = new Map<string, { method: string; template: string; handlers: unknown[] }>();
  for (const source of sources) {
    for (const route of source.routes) {
      if (route.method === "ALL") continue; // middleware, not a route
      const full = source.prefix + (route.path === "/" ? "" : route.path);
      const template = openApiPath(full);
      const key = `${route.method} ${template}`;
      const entry = byRoute.get(key) ?? { method: route.method, template, handlers: [] };
      entry.handlers.push(route.handler);
      byRoute.set(key, entry);
    }
  }
  for (const { method, template, handlers } of byRoute.values()) {
    const spec = handlers.map(operationOf).find((s) => s !== undefined);
    const rule = handlers.map(ruleOf).find((r) => r !== undefined);
    paths[template] ??= {};
    paths[template][method.toLowerCase()] = spec
      ? operationObject(method, template, spec, rule)
      : undescribedOperation(method, template, rule);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Keyway no-code provisioning API (HCP Terraform compatible)",
      version: info.version,
      description:
        "JSON:API over /api/v2 (HCP Terraform's no-code provisioning and the resources it needs), Terraform's module registry protocol under /api/registry/v1 and service discovery. Errors: docs/api-v2-errors.md.",
      license: { name: "Apache-2.0", identifier: "Apache-2.0" },
    },
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b))),
    components: {
      schemas: { ErrorDocument: jsonSchemaOf(errorDocument) },
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "A user, team or organization token, or ADMIN_TOKEN (N9, N10)",
        },
      },
    },
    security: [{ bearer: [] }],
  };
}
