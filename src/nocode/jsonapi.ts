/**
 * Reading JSON:API request documents and paging lists (decision N1, reference §1.3–1.4),
 * shared by the organization, user, team, project, agent-pool and release endpoints.
 *
 * Input is lenient about what real clients add (inlined attributes, unknown members are
 * ignored) but strict about the JSON types of the attributes we read: a wrong type is a
 * 422 `invalid attribute` with a pointer, never a silent coercion (B3).
 */
import { readJsonObject } from "../lib/http/body";
import { badRequest, invalidAttribute, NocodeError } from "./errors";

/** The primary resource of a request document. */
export interface ResourceInput {
  id: string | undefined;
  attributes: Record<string, unknown>;
  relationships: Record<string, unknown>;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * Read the request body (B5: at most 1 MiB, checked before parsing; errors rendered by
 * the no-code error handler) and return its `data` resource. `types` lists the accepted
 * `data.type` values (N1 synonyms); an absent type is accepted. An empty body reads as
 * an empty resource when `optional` is set, else it is 400.
 */
export async function readResource(request: Request, types: readonly string[], options: { optional?: boolean } = {}): Promise<ResourceInput> {
  const body = await readJsonObject(request);
  if (!("data" in body) && options.optional) return { id: undefined, attributes: {}, relationships: {} };
  return resourceOf(body, types);
}

/** The `data` resource of an already parsed document. */
export function resourceOf(body: Record<string, unknown>, types: readonly string[]): ResourceInput {
  const data = body["data"];
  if (!isObject(data)) throw badRequest("the request document must have a `data` object", "/data");
  const type = data["type"];
  if (type !== undefined && (typeof type !== "string" || !types.includes(type))) {
    throw new NocodeError("conflict", `data.type must be "${types[0]}"`, "/data/type");
  }
  const attributes = data["attributes"] ?? {};
  if (!isObject(attributes)) throw badRequest("`data.attributes` must be an object", "/data/attributes");
  const relationships = data["relationships"] ?? {};
  if (!isObject(relationships)) throw badRequest("`data.relationships` must be an object", "/data/relationships");
  const id = data["id"];
  return { id: typeof id === "string" ? id : undefined, attributes, relationships };
}

/** Read a body whose `data` is an array of resource identifiers (relationship endpoints). */
export async function readIdentifiers(request: Request, types: readonly string[]): Promise<string[]> {
  const body = await readJsonObject(request);
  const data = body["data"];
  if (!Array.isArray(data)) throw badRequest("the request document must have a `data` array", "/data");
  const ids: string[] = [];
  data.forEach((item, i) => {
    if (!isObject(item)) throw badRequest("each member of `data` must be a resource identifier object", `/data/${i}`);
    const type = item["type"];
    if (typeof type !== "string" || !types.includes(type)) {
      throw new NocodeError("conflict", `data[${i}].type must be "${types[0]}"`, `/data/${i}/type`);
    }
    const id = item["id"];
    if (typeof id !== "string" || id === "") throw badRequest(`data[${i}].id must be a non-empty string`, `/data/${i}/id`);
    ids.push(id);
  });
  return ids;
}

/** Rails-style attribute label: `organization-scoped` → `Organization scoped`. */
export function attributeLabel(attribute: string): string {
  const words = attribute.replace(/[-_]/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * Collects field errors so that every failed validation is reported together (Rails
 * does, reference §2.1), then throws them as one NocodeError.
 */
export class FieldErrors {
  private readonly errors: NocodeError[] = [];

  /** Record a 422 `invalid attribute` on `attribute`. */
  add(attribute: string, detail: string): void {
    this.errors.push(invalidAttribute(attribute, detail));
  }

  get empty(): boolean {
    return this.errors.length === 0;
  }

  /** Throw the collected errors, if any. */
  throwIfAny(): void {
    const [first, ...rest] = this.errors;
    if (first) throw new NocodeError(first.code, first.detail, first.pointer, rest);
  }

  /** A required string attribute: absent, null or "" → `<Label> can't be blank`. */
  required(attrs: Record<string, unknown>, attribute: string): string | undefined {
    const value = attrs[attribute];
    if (value === undefined || value === null || value === "") {
      this.add(attribute, `${attributeLabel(attribute)} can't be blank`);
      return undefined;
    }
    if (typeof value !== "string") {
      this.add(attribute, `${attributeLabel(attribute)} must be a string`);
      return undefined;
    }
    return value;
  }

  /** A string attribute; absent → undefined; null → null when `nullable`; else a type error. */
  string(attrs: Record<string, unknown>, attribute: string, options: { nullable?: boolean } = {}): string | null | undefined {
    const value = attrs[attribute];
    if (value === undefined) return undefined;
    if (value === null && options.nullable) return null;
    if (typeof value !== "string") {
      this.add(attribute, `${attributeLabel(attribute)} must be a string`);
      return undefined;
    }
    return value;
  }

  /** A boolean attribute; absent → undefined; anything but true/false is a type error. */
  boolean(attrs: Record<string, unknown>, attribute: string): boolean | undefined {
    const value = attrs[attribute];
    if (value === undefined) return undefined;
    if (typeof value !== "boolean") {
      this.add(attribute, `${attributeLabel(attribute)} must be true or false`);
      return undefined;
    }
    return value;
  }
}

// ---------------------------------------------------------------------------
// Pagination (reference §1.4): page[number], page[size] (default 20, max 100)
// ---------------------------------------------------------------------------

/** The requested page. */
export interface PageRequest {
  number: number;
  size: number;
  offset: number;
}

/** Default and maximum page sizes of list endpoints (reference §1.4). */
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/** Decision B9: the highest `page[number]` accepted (higher → 400). */
export const MAX_PAGE_NUMBER = 100_000;

function pageParam(url: URL, name: string, fallback: number): number {
  const raw = url.searchParams.get(`page[${name}]`);
  if (raw === null || raw === "") return fallback;
  if (!/^[0-9]+$/.test(raw) || Number(raw) < 1) throw badRequest(`page[${name}] must be a positive integer`);
  if (name === "number" && Number(raw) > MAX_PAGE_NUMBER) throw badRequest(`page[number] must be at most ${MAX_PAGE_NUMBER}`);
  return Number(raw);
}

/** Parse page[number] and page[size]; sizes above the maximum are capped. */
export function pageRequest(url: URL): PageRequest {
  const number = pageParam(url, "number", 1);
  const size = Math.min(pageParam(url, "size", DEFAULT_PAGE_SIZE), MAX_PAGE_SIZE);
  return { number, size, offset: (number - 1) * size };
}

/** `meta.pagination` and absolute `links` of a list document. */
export function pageDocument(url: URL, page: PageRequest, totalCount: number): { meta: { pagination: Record<string, number | null> }; links: Record<string, string | null> } {
  const totalPages = Math.max(1, Math.ceil(totalCount / page.size));
  const linkTo = (n: number) => {
    const u = new URL(url);
    u.searchParams.set("page[number]", String(n));
    u.searchParams.set("page[size]", String(page.size));
    return u.toString();
  };
  const prev = page.number > 1 ? page.number - 1 : null;
  const next = page.number < totalPages ? page.number + 1 : null;
  return {
    meta: {
      pagination: {
        "current-page": page.number,
        "page-size": page.size,
        "prev-page": prev,
        "next-page": next,
        "total-pages": totalPages,
        "total-count": totalCount,
      },
    },
    links: {
      self: linkTo(page.number),
      first: linkTo(1),
      prev: prev === null ? null : linkTo(prev),
      next: next === null ? null : linkTo(next),
      last: linkTo(totalPages),
    },
  };
}
