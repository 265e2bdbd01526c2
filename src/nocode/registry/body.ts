/**
 * Reading JSON:API request documents of the registry endpoints (decisions N1, N2, B5).
 * Malformed documents are 422 with a `source.pointer` (seed §7: "Malformed request body
 * (missing attributes, wrong types)").
 */
import { readJsonObject } from "../../lib/http/body";
import { NocodeError } from "../errors";

/** Collects field errors so a response reports all of them at once (as Rails does). */
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

/**
 * Read `{ data: { type, attributes } }` where `type` is one of `types` (N1: input is
 * tolerant of singular/plural). Returns the attributes (`{}` when absent).
 */
export async function readResourceAttributes(request: Request, types: readonly string[]): Promise<Record<string, unknown>> {
  const body = await readJsonObject(request);
  const data = body.data;
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw new NocodeError("invalid_attribute", "data must be a JSON:API resource object", "/data");
  }
  const record = data as Record<string, unknown>;
  if (typeof record.type !== "string" || !types.includes(record.type)) {
    throw new NocodeError("invalid_attribute", `data.type must be "${types[0]}"`, "/data/type");
  }
  const attributes = record.attributes ?? {};
  if (attributes === null || typeof attributes !== "object" || Array.isArray(attributes)) {
    throw new NocodeError("invalid_attribute", "data.attributes must be an object", "/data/attributes");
  }
  return attributes as Record<string, unknown>;
}

/** The JSON pointer of an attribute. */
export const attributePointer = (name: string) => `/data/attributes/${name}`;
