/**
 * Decision B14: every answer the tests see must validate against the OpenAPI document the
 * Worker serves for its API. This module is the check itself, pure and runtime-neutral
 * (workerd and Node): given the served documents and one observed answer, it finds the
 * operation (method + concrete path), then checks the status is declared, the media type
 * is declared, the body is present exactly when a body is declared, required headers are
 * there, and the body validates against the declared schema.
 *
 * Schemas are checked with @cfworker/json-schema (draft 2020-12, OpenAPI 3.1's dialect):
 * it interprets schemas and generates no code, so it runs inside workerd, which refuses
 * `new Function` (ajv's approach).
 *
 * The worker tests reach it through test/helpers/worker-request.ts, where it is on by
 * default; Node tests can build a `ContractChecker` from a document they fetched.
 */
import { dereference, type OutputUnit, type Schema, validate } from "@cfworker/json-schema";
import { findOperation, jsonPointer, mediaTypeFor, resolveLocal, responseForStatus } from "../../src/lib/openapi/paths";
import { type HeaderObject, isReference, type OpenApiDocument, type ResponseObject } from "../../src/lib/openapi/types";

/** One API's contract: where its document is served and which request paths it covers. */
export interface ContractSource {
  /** Short name for messages, e.g. `/v1`. */
  name: string;
  /** Path the Worker serves the document at (unauthenticated, B14). */
  documentPath: string;
  /** Request paths that start with one of these are covered by the document. */
  prefixes: string[];
  /**
   * Name of an entry of `components.responses` that an error answer (4xx/5xx) to a
   * method or path the document does not have must match (e.g. 404 `unsupported path`,
   * 405): the API's one error format. Without it such answers are only checked to be
   * errors.
   */
  unroutedErrorResponse?: string;
  /**
   * True once the Worker serves this document: then any answer but 200 fails the test
   * file. Until then a 401, 403 or 404 means "not served yet" and its paths are not checked.
   */
  served?: boolean;
}

/** The documents the Worker serves (B14). */
export const CONTRACT_SOURCES: readonly ContractSource[] = [
  {
    name: "/v1",
    documentPath: "/v1/sys/internal/specs/openapi",
    prefixes: ["/v1/"],
    unroutedErrorResponse: "VaultError",
    served: true,
  },
  {
    name: "/api/v2",
    documentPath: "/api/v2/openapi.json",
    prefixes: ["/api/v2/", "/api/registry/v1/", "/api/agent/v1/", "/.well-known/terraform.json"],
    served: true,
  },
];

/** An answer as a test saw it. */
export interface ObservedResponse {
  method: string;
  /** The URL's path as sent (no query), e.g. `/v1/ssh/roles/web`. */
  path: string;
  status: number;
  headers: Headers;
  /** The body as text ("" when empty). */
  text: string;
}

/** A served document with its source, ready to validate against. */
export interface LoadedContract {
  source: ContractSource;
  document: OpenApiDocument;
}

interface PreparedContract extends LoadedContract {
  base: URL;
  lookup: Record<string, Schema | boolean>;
  /** Response schemas already indexed (each once: the indexer refuses a second registration). */
  indexed: WeakSet<object>;
}

/**
 * Checks answers against loaded documents. Prepare once per document (schema indexing
 * walks the whole document), then call `violation` per answer.
 */
export class ContractChecker {
  private readonly contracts: PreparedContract[];

  constructor(contracts: LoadedContract[]) {
    this.contracts = contracts.map(({ source, document }) => {
      // A copy: indexing marks schema objects (non-enumerable properties).
      const copy = structuredClone(document);
      const base = new URL(`https://contract.keyway.test${source.documentPath}`);
      // Only the components are indexed up front: the indexer walks every key that is not
      // a JSON Schema keyword, and skips the ones that are, so a `default` response (a
      // keyword's name) would be missed in a walk of the whole document. Response schemas
      // are indexed under their own pointer when first used.
      const lookup = dereference({ $id: base.href, components: copy.components ?? {} } as unknown as Schema);
      return { source, document: copy, base, lookup, indexed: new WeakSet() };
    });
  }

  /** The names of the documents this checker holds. */
  get names(): string[] {
    return this.contracts.map((c) => c.source.name);
  }

  /** True when some loaded document covers this request path. */
  covers(path: string): boolean {
    return this.contractFor(path) !== undefined;
  }

  /**
   * Why this answer does not match its document, or null when it does (or when no loaded
   * document covers its path). The message names the operation, the status and the JSON
   * pointer of each mismatch.
   */
  violation(observed: ObservedResponse): string | null {
    const contract = this.contractFor(observed.path);
    if (!contract) return null;
    const { document, source } = contract;
    const method = observed.method.toUpperCase();
    const request = `${method} ${observed.path} → ${observed.status}`;
    const found = findOperation(document, method, observed.path);

    if (found.kind !== "operation") {
      const where =
        found.kind === "path-not-documented"
          ? `the ${source.name} document has no path matching it`
          : `${found.template} documents only ${found.methods.map((m) => m.toUpperCase()).join(", ")}`;
      if (observed.status < 400) return `${request}: a success answer, but ${where}`;
      if (!source.unroutedErrorResponse) return null;
      const declared = document.components?.responses?.[source.unroutedErrorResponse];
      if (!declared)
        return `${request}: the ${source.name} document has no components.responses.${source.unroutedErrorResponse}`;
      const response = resolveLocal<ResponseObject>(document, declared);
      const pointer = jsonPointer(["components", "responses", source.unroutedErrorResponse]);
      return this.bodyViolation(contract, `${request} (undocumented: ${where})`, method, observed, response, pointer);
    }

    const label = `${request} [${method} ${found.template}${found.operation.operationId ? ` ${found.operation.operationId}` : ""}]`;
    const declared = responseForStatus(document, found.operation, observed.status);
    if (!declared) {
      return `${label}: status ${observed.status} is not declared (declared: ${Object.keys(found.operation.responses).join(", ")}); body: ${observed.text.slice(0, 300)}`;
    }
    const raw = found.operation.responses[declared.key]!;
    const pointer = isReference(raw)
      ? decodeURIComponent(raw.$ref.slice(1))
      : `${found.pointer}${jsonPointer(["responses", declared.key])}`;
    return this.bodyViolation(contract, label, method, observed, declared.response, pointer);
  }

  private bodyViolation(
    contract: PreparedContract,
    label: string,
    method: string,
    observed: ObservedResponse,
    response: ResponseObject,
    /** JSON pointer of `response` in the document, for messages. */
    responsePointer: string,
  ): string | null {
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      const resolved = resolveLocal<HeaderObject>(contract.document, header);
      if (resolved.required && !observed.headers.has(name)) return `${label}: required header ${name} is missing`;
    }
    const content = response.content ?? {};
    const bodyless = method === "HEAD" || observed.status === 204 || observed.status === 304;
    if (bodyless || Object.keys(content).length === 0) {
      if (observed.text !== "") {
        return `${label}: the document declares no body here, but the answer has one: ${observed.text.slice(0, 300)}`;
      }
      return null;
    }
    const contentType = observed.headers.get("content-type");
    // "Any answer" (`*/*`: a route not described yet) includes an empty one (a bare 202).
    if (content["*/*"] && contentType === null && observed.text === "") return null;
    const media = mediaTypeFor(content, contentType);
    if (!media) {
      return `${label}: content type ${contentType ?? "(none)"} is not declared (declared: ${Object.keys(content).join(", ")})`;
    }
    const schema = media.mediaType.schema;
    if (schema === undefined) return null;
    let instance: unknown;
    if (isJsonMediaType(media.key)) {
      try {
        instance = JSON.parse(observed.text);
      } catch {
        return `${label}: declared ${media.key}, but the body is not JSON: ${observed.text.slice(0, 300)}`;
      }
    } else if (media.key === "application/octet-stream") {
      // Binary: the text decoding is lossy, so only the media type is checked.
      return null;
    } else {
      instance = observed.text;
    }
    const at = `${responsePointer}${jsonPointer(["content", media.key, "schema"])}`;
    if (typeof schema === "object" && schema !== null && !contract.indexed.has(schema)) {
      contract.indexed.add(schema);
      if ((schema as { __absolute_uri__?: string }).__absolute_uri__ === undefined)
        dereference(schema as Schema, contract.lookup, contract.base, at);
    }
    const result = validate(instance, schema as Schema, "2020-12", contract.lookup, false);
    if (result.valid) return null;
    return `${label}: body does not match the ${media.key} schema at #${at}:\n${describeErrors(result.errors, at)}\nbody: ${observed.text.slice(0, 600)}`;
  }

  private contractFor(path: string): PreparedContract | undefined {
    return this.contracts.find((c) =>
      c.source.prefixes.some((prefix) => path.startsWith(prefix) || path === prefix.replace(/\/$/, "")),
    );
  }
}

function isJsonMediaType(key: string): boolean {
  return key === "application/json" || key.endsWith("+json");
}

/**
 * The most useful lines of a validator's output: the deepest instance locations first
 * (an `anyOf` failure at the root says less than the property that broke it).
 */
function describeErrors(errors: OutputUnit[], schemaPointer: string): string {
  const depth = (unit: OutputUnit) => unit.instanceLocation.split("/").length;
  const sorted = [...errors].sort((a, b) => depth(b) - depth(a));
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const unit of sorted) {
    const line = `  at ${unit.instanceLocation.replace(/^#/, "") || "/"} (${unit.keyword}, schema #${schemaPointer}${unit.keywordLocation.replace(/^#/, "")}): ${unit.error}`;
    if (seen.has(line)) continue;
    seen.add(line);
    lines.push(line);
    if (lines.length === 6) break;
  }
  return lines.join("\n");
}

/** Throw a test failure when an answer does not match its document. */
export function assertWithinContract(checker: ContractChecker, observed: ObservedResponse): void {
  const violation = checker.violation(observed);
  if (violation) {
    throw new Error(
      `OpenAPI contract violation (B14): ${violation}\n` +
        '(fix the document or the handler; a test that deliberately goes outside the contract passes `outsideContract: "<why>"`)',
    );
  }
}
