/**
 * The /v1 OpenAPI 3.1 document (decision B14), generated from the /v1 route table: every
 * route's pattern, parameters, operations and unauthenticated operations (router.ts
 * `VaultRoute`), and the `docs` each route carries beside its handlers (./describe.ts),
 * whose request bodies are the FieldSchema objects the handlers parse with. Nothing here
 * is written per endpoint.
 *
 * Served unauthenticated at Vault's path, `GET /v1/sys/internal/specs/openapi` (S16a).
 * Shapes follow Vault's generator (vault/sdk/framework/openapi.go): paths relative to
 * `/v1`, writes as POST (PUT too: Vault accepts both), lists as `GET ?list=true`, mounted
 * paths under a `{mount}` path parameter, Vault's envelope and `{"errors": [...]}`.
 */
import { toOpenApiPath } from "../../lib/openapi/paths";
import type {
  HttpMethod,
  JsonSchema,
  OpenApiDocument,
  OperationObject,
  ParameterObject,
  PathItem,
  ResponseObject,
} from "../../lib/openapi/types";
import { NAME_PATTERN, type Operation, type VaultRoute } from "../router";
import { KEYWAY_VERSION } from "../version";
import { bool, COMPONENT, fieldsBodySchema, int, nullable, object, str, stringMap, strings } from "./schemas";

/** The spellings `GET ?list=` accepts for true (strconv.ParseBool, S2). */
const LIST_TRUE = ["true", "1", "t", "T", "TRUE", "True"];

const vaultErrors = object({ errors: strings("error messages; empty for a plain 404") });

/** Vault's `auth` block (token create and renew). */
const vaultAuth = object(
  {
    client_token: str(),
    accessor: str(),
    policies: strings(),
    token_policies: strings(),
    identity_policies: strings("present only when the token's entity grants policies"),
    metadata: nullable(stringMap()),
    lease_duration: int(),
    renewable: bool(),
    entity_id: str(),
    token_type: { const: "service" },
    orphan: bool(),
    mfa_requirement: { type: "null" },
    num_uses: int(),
  },
  ["identity_policies"],
);

/** Vault's success envelope (respond.ts `vaultEnvelope`); routes narrow `data` and `auth`. */
const vaultResponse: JsonSchema = {
  type: "object",
  required: ["request_id", "lease_id", "renewable", "lease_duration", "data", "wrap_info", "warnings", "auth"],
  properties: {
    request_id: str("the request id, also in `X-Request-Id`"),
    lease_id: str(),
    renewable: bool(),
    lease_duration: int(),
    data: true,
    wrap_info: { type: "null" },
    warnings: nullable(strings()),
    auth: nullable({ $ref: COMPONENT.auth }),
  },
};

const METHODS_OF: Record<Operation, HttpMethod[]> = {
  read: ["get"],
  list: ["get"],
  update: ["post", "put"],
  patch: ["patch"],
  delete: ["delete"],
};

/** Build the document for these routes, with mounted routes under the configured mounts. */
export function buildOpenApiDocument(routes: readonly VaultRoute[], mounts: readonly string[]): OpenApiDocument {
  const paths: Record<string, PathItem> = {};
  for (const route of routes) addRoute(paths, route, mounts);
  return {
    openapi: "3.1.0",
    info: {
      title: "Keyway secrets API",
      version: KEYWAY_VERSION,
      description:
        "Vault-compatible SSH secrets engine (CA and OTP), tokens, JWT/OIDC sign-in, ACL policies, identity entities and groups. Generated from the /v1 route table.",
      license: { name: "Apache-2.0", identifier: "Apache-2.0" },
    },
    servers: [{ url: "/v1" }],
    security: [{ vaultToken: [] }, { secretsToken: [] }, { bearerToken: [] }],
    tags: [
      { name: "ssh", description: "the SSH secrets engine, under each mount" },
      { name: "auth", description: "tokens, and JWT/OIDC auth mounts (login, config, roles)" },
      { name: "sys", description: "policies, mounts, leases, health" },
      { name: "identity", description: "identity entities, groups and their aliases" },
    ],
    paths,
    components: {
      schemas: { VaultResponse: vaultResponse, VaultAuth: vaultAuth, VaultErrors: vaultErrors },
      responses: {
        VaultError: {
          description: 'Vault\'s error answer (`{"errors": [...]}`)',
          content: { "application/json": { schema: { $ref: "#/components/schemas/VaultErrors" } } },
        },
      },
      securitySchemes: {
        vaultToken: { type: "apiKey", in: "header", name: "X-Vault-Token" },
        secretsToken: { type: "apiKey", in: "header", name: "X-Secrets-Token" },
        bearerToken: { type: "http", scheme: "bearer" },
      },
    },
  };
}

function addRoute(paths: Record<string, PathItem>, route: VaultRoute, mounts: readonly string[]): void {
  const key = (route.mounted ? "/{mount}" : "") + toOpenApiPath(route.pattern);
  const parameters = pathParameters(route, mounts);
  const tag = route.mounted ? "ssh" : route.pattern.split("/")[0]!;
  let listOperation: OperationObject | undefined;
  for (const operation of Object.keys(route.operations) as Operation[]) {
    const docs = route.docs.operations[operation];
    if (!docs) throw new Error(`route ${route.pattern} serves ${operation} but its docs do not describe it`);
    const unauthenticated = route.unauthenticated?.includes(operation) ?? false;
    const responses: Record<string, ResponseObject | { $ref: string }> = { ...docs.responses };
    if (!responses.default) {
      responses["4XX"] = { $ref: COMPONENT.error };
      responses["5XX"] = { $ref: COMPONENT.error };
    }
    const query: ParameterObject[] = Object.entries(docs.query ?? {}).map(([name, q]) => ({
      name,
      in: "query",
      description: q.description,
      required: q.required ?? false,
      schema: q.schema ?? { type: "string" },
    }));
    if (operation === "list") {
      query.unshift({
        name: "list",
        in: "query",
        required: true,
        description: "must be true: a list",
        schema: { type: "string", enum: LIST_TRUE },
      });
    }
    paths[key] ??= { parameters };
    const item = paths[key];
    for (const method of METHODS_OF[operation]) {
      const op: OperationObject = {
        operationId: operationId(route, operation, method),
        summary: docs.summary,
        ...(docs.description ? { description: docs.description } : {}),
        tags: [tag],
        ...(query.length > 0 ? { parameters: query } : {}),
        responses,
      };
      if (docs.body) {
        const schema = fieldsBodySchema(docs.body);
        op.requestBody = {
          required: false,
          content:
            operation === "patch"
              ? { "application/merge-patch+json": { schema }, "application/json": { schema } }
              : route.formBody
                ? { "application/json": { schema }, "application/x-www-form-urlencoded": { schema } }
                : { "application/json": { schema } },
        };
      }
      if (unauthenticated) op.security = [];
      item[method] = op;
      if (operation === "list") listOperation = op;
    }
    // B12: HEAD answers the read's status and headers without its body.
    if (operation === "read" && route.head) {
      const headResponses: Record<string, ResponseObject | { $ref: string }> = {};
      for (const [status, response] of Object.entries(responses)) {
        headResponses[status] =
          "$ref" in response
            ? response
            : { description: response.description, ...(response.headers ? { headers: response.headers } : {}) };
      }
      item.head = { ...item.get!, operationId: operationId(route, operation, "head"), responses: headResponses };
    }
  }
  // S2b: a list also answers with a trailing slash (Vault's own spelling of list paths).
  // B14a: a path item of its own (not a `$ref` to the other, which would repeat its
  // operationId), holding only the list under an id of its own.
  const list = listOperation;
  if (list) {
    paths[`${key}/`] = { parameters, get: { ...list, operationId: `${list.operationId}-trailing-slash` } };
  }
}

function pathParameters(route: VaultRoute, mounts: readonly string[]): ParameterObject[] {
  const parameters: ParameterObject[] = [];
  if (route.mounted) {
    parameters.push({
      name: "mount",
      in: "path",
      required: true,
      description: "an SSH mount of this deployment (SSH_MOUNTS)",
      schema: { type: "string", enum: [...mounts] },
    });
  }
  for (const segment of route.pattern.split("/")) {
    if (!segment.startsWith(":")) continue;
    const name = segment.slice(1);
    parameters.push({
      name,
      in: "path",
      required: true,
      description: route.docs.params?.[name] ?? name.replaceAll("_", " "),
      schema: { type: "string", pattern: `^(?:${route.params?.[name] ?? NAME_PATTERN})$` },
    });
  }
  return parameters;
}

function operationId(route: VaultRoute, operation: Operation, method: HttpMethod): string {
  const path = route.pattern
    .replaceAll(":", "by-")
    .split(/[^A-Za-z0-9]/)
    .filter((part) => part !== "")
    .join("-");
  const verb = method === "head" ? "head" : operation === "update" && method === "put" ? "update-put" : operation;
  return `${route.mounted ? "ssh-" : ""}${path}-${verb}`;
}
