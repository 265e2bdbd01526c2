/**
 * Node-side check of a served OpenAPI document (decision B14), for both APIs: the
 * document must validate against the OpenAPI 3.1 schema (@seriousme/openapi-schema-validator,
 * which compiles the official schemas with ajv: Node only, never in workerd), and beyond
 * what that schema can say: every local `$ref` resolves, operation ids are unique, every
 * `{param}` of a path is declared as a path parameter (and no other is), and every
 * operation answers at least one status.
 */
import { Validator } from "@seriousme/openapi-schema-validator";
import { jsonPointer, pathTemplateParameters, readPointer, resolveLocal } from "../../src/lib/openapi/paths";
import {
  HTTP_METHODS,
  isReference,
  type OpenApiDocument,
  type ParameterObject,
  type PathItem,
  type ReferenceObject,
} from "../../src/lib/openapi/types";

/** Every problem found in `document`; empty when it is a valid OpenAPI 3.1 document. */
export async function openApiDocumentProblems(document: OpenApiDocument): Promise<string[]> {
  const problems: string[] = [];
  if (!/^3\.1\.\d+$/.test(document.openapi)) problems.push(`openapi is ${document.openapi}, not 3.1.x`);
  const validator = new Validator();
  const result = await validator.validate(structuredClone(document) as unknown as Record<string, unknown>);
  if (!result.valid) problems.push(`not a valid OpenAPI document: ${JSON.stringify(result.errors).slice(0, 2000)}`);

  // Every local reference resolves.
  walk(document, [], (value, at) => {
    if (isReference(value) && value.$ref.startsWith("#")) {
      if (readPointer(document, decodeURIComponent(value.$ref.slice(1))) === undefined)
        problems.push(`${jsonPointer(at)}: unresolved $ref ${value.$ref}`);
    } else if (isReference(value)) {
      problems.push(`${jsonPointer(at)}: external $ref ${value.$ref}`);
    }
  });

  const operationIds = new Map<string, string>();
  for (const [key, raw] of Object.entries(document.paths ?? {})) {
    const item = resolveLocal<PathItem>(document, raw as PathItem | ReferenceObject);
    const templated = pathTemplateParameters(key);
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const where = `${method.toUpperCase()} ${key}`;
      if (isReference(raw)) continue; // the referenced item is checked under its own key
      if (operation.operationId) {
        const other = operationIds.get(operation.operationId);
        if (other) problems.push(`${where}: operationId ${operation.operationId} is also ${other}'s`);
        operationIds.set(operation.operationId, where);
      }
      const parameters = [...(item.parameters ?? []), ...(operation.parameters ?? [])].map((p) =>
        resolveLocal<ParameterObject>(document, p),
      );
      const declared = parameters.filter((p) => p.in === "path").map((p) => p.name);
      for (const name of templated)
        if (!declared.includes(name)) problems.push(`${where}: path parameter {${name}} is not declared`);
      for (const name of declared)
        if (!templated.includes(name)) problems.push(`${where}: parameter ${name} is not in the path`);
      if (Object.keys(operation.responses ?? {}).length === 0) problems.push(`${where}: no responses`);
    }
  }
  return problems;
}

function walk(value: unknown, at: (string | number)[], visit: (value: unknown, at: (string | number)[]) => void): void {
  visit(value, at);
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) walk(v, [...at, i], visit);
  } else if (typeof value === "object" && value !== null)
    for (const [k, v] of Object.entries(value)) walk(v, [...at, k], visit);
}
