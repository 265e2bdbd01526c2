/**
 * Reading the JSON:API request documents of E1, E2 and E4 (decisions N1, N2, B5).
 * Malformed documents are 422 `invalid attribute` with a `source.pointer` (seed §7:
 * "Malformed request body (missing attributes, wrong types)"); input is tolerant of the
 * type synonyms and inlined attributes real clients send (N1, reference §1.3) and
 * ignores members it does not read.
 */
import { readJsonObject } from "../../lib/http/body";
import { NocodeError } from "../errors";

/**
 * Collects field errors so a response reports all of them at once (as Rails does). Kept
 * for the readers below until no-code modules, workspaces, upgrades and rollouts read
 * their bodies through the request kit (../request/, issue 16).
 */
export class FieldErrors {
  readonly errors: NocodeError[] = [];

  add(pointer: string, detail: string): void {
    this.errors.push(new NocodeError("invalid_attribute", detail, pointer));
  }

  /** Throw the collected errors as one 422 response, if any. */
  throwIfAny(): void {
    const [first, ...more] = this.errors;
    if (first) throw new NocodeError(first.code, first.detail, first.pointer, more);
  }
}

/** The primary resource of a request document. */
export interface DocumentResource {
  id: string | undefined;
  attributes: Record<string, unknown>;
  relationships: Record<string, unknown>;
}

/** Whether `value` is a JSON object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * Read the body (B5: at most 1 MiB, checked before parsing) and return its `data`
 * resource. `types` lists the accepted `data.type` values (N1 synonyms); an absent type
 * is accepted. With `optional`, an empty body or one without `data` is an empty resource.
 */
export async function readDocument(request: Request, types: readonly string[], options: { optional?: boolean } = {}): Promise<DocumentResource> {
  const body = await readJsonObject(request);
  if (options.optional && body.data === undefined) return { id: undefined, attributes: {}, relationships: {} };
  const data = body.data;
  if (!isObject(data)) throw new NocodeError("invalid_attribute", "data must be a JSON:API resource object", "/data");
  const type = data.type;
  if (type !== undefined && (typeof type !== "string" || !types.includes(type))) {
    throw new NocodeError("invalid_attribute", `data.type must be "${types[0]}"`, "/data/type");
  }
  const attributes = data.attributes ?? {};
  if (!isObject(attributes)) throw new NocodeError("invalid_attribute", "data.attributes must be an object", "/data/attributes");
  const relationships = data.relationships ?? {};
  if (!isObject(relationships)) throw new NocodeError("invalid_attribute", "data.relationships must be an object", "/data/relationships");
  const id = data.id;
  return { id: typeof id === "string" && id !== "" ? id : undefined, attributes, relationships };
}

/** Pointer of an attribute of the primary resource. */
export const attributeAt = (name: string) => `/data/attributes/${name}`;
/** Pointer of a relationship of the primary resource. */
export const relationshipAt = (name: string) => `/data/relationships/${name}`;

/**
 * A to-one relationship `{data: {type, id}}`: `undefined` when absent (or `data` null),
 * the id otherwise; a malformed one records an error and returns `undefined`.
 */
export function toOneId(errors: FieldErrors, relationships: Record<string, unknown>, name: string, types: readonly string[]): string | undefined {
  const rel = relationships[name];
  if (rel === undefined || rel === null) return undefined;
  const data = isObject(rel) ? rel.data : undefined;
  if (data === null) return undefined;
  if (!isObject(data) || typeof data.id !== "string" || data.id === "") {
    errors.add(relationshipAt(name), `Relationship ${name} must be {"data": {"type": "${types[0]}", "id": "…"}}`);
    return undefined;
  }
  if (data.type !== undefined && (typeof data.type !== "string" || !types.includes(data.type))) {
    errors.add(`${relationshipAt(name)}/data/type`, `Relationship ${name} must have type "${types[0]}"`);
    return undefined;
  }
  return data.id;
}

/**
 * A to-many relationship `{data: [...]}` of inline resources: `undefined` when absent,
 * the member objects otherwise; a malformed one records an error and returns `[]`.
 */
export function toManyMembers(errors: FieldErrors, relationships: Record<string, unknown>, name: string): Record<string, unknown>[] | undefined {
  const rel = relationships[name];
  if (rel === undefined) return undefined;
  const data = isObject(rel) ? rel.data : undefined;
  if (!Array.isArray(data)) {
    errors.add(relationshipAt(name), `Relationship ${name} must be {"data": [ … ]}`);
    return [];
  }
  const out: Record<string, unknown>[] = [];
  data.forEach((member, i) => {
    if (!isObject(member)) errors.add(`${relationshipAt(name)}/data/${i}`, `Each member of ${name} must be a resource object`);
    else out.push(member);
  });
  return out;
}

/** The attributes object of an inline relationship member (`{}` when absent). */
export function memberAttributes(errors: FieldErrors, member: Record<string, unknown>, pointer: string): Record<string, unknown> {
  const attributes = member.attributes ?? {};
  if (!isObject(attributes)) {
    errors.add(`${pointer}/attributes`, "attributes must be an object");
    return {};
  }
  return attributes;
}
