/**
 * Query parameters of /api/v2 and the one pager (HCP Terraform's pagination): `page[number]`,
 * `page[size]` (default 20, at most 100; a larger size is capped as HCP caps it), with
 * decision B9's bound `page[number]` ≤ 100,000. A parameter that does not read is 400
 * with `source.parameter` (docs/api-v2-errors.md), never a silent fallback.
 */
import * as v from "valibot";
import { queryError } from "./issues";

/** Default and maximum page sizes of list endpoints (HCP Terraform's pagination). */
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/** Decision B9: the highest `page[number]` accepted (higher → 400). */
export const MAX_PAGE_NUMBER = 100_000;

const positive = (name: string) => `${name} must be a positive integer`;

/** A positive decimal integer parameter; "" reads as absent (`fallback`). */
function positiveInteger(name: string, fallback: number) {
  return v.optional(
    v.pipe(
      v.string(positive(name)),
      v.regex(/^[0-9]*$/, positive(name)),
      v.transform((raw) => (raw === "" ? fallback : Number(raw))),
      v.minValue(1, positive(name)),
    ),
    String(fallback),
  );
}

/** The pager's parameters; spread them into a route's query schema. */
export const pageParameters = {
  "page[number]": v.pipe(
    positiveInteger("page[number]", 1),
    v.maxValue(MAX_PAGE_NUMBER, `page[number] must be at most ${MAX_PAGE_NUMBER}`),
  ),
  "page[size]": v.pipe(
    positiveInteger("page[size]", DEFAULT_PAGE_SIZE),
    v.transform((size) => Math.min(size, MAX_PAGE_SIZE)),
  ),
};

/** Query of a plain list: the pager only (other parameters are ignored, as HCP ignores them). */
export const pageQuery = v.looseObject(pageParameters);

/** The requested page. */
export interface PageRequest {
  number: number;
  size: number;
  offset: number;
}

/** The page a validated query asks for. */
export function pageOf(query: { "page[number]": number; "page[size]": number }): PageRequest {
  const number = query["page[number]"];
  const size = query["page[size]"];
  return { number, size, offset: (number - 1) * size };
}

/** `meta.pagination` and absolute `links` of a list document (HCP Terraform's pagination). */
export function pageDocument(
  url: URL,
  page: PageRequest,
  totalCount: number,
): { meta: { pagination: Record<string, number | null> }; links: Record<string, string | null> } {
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

/**
 * `include`: a comma-separated list of names from `allowed`; anything else is HCP's 400
 * `Invalid include parameter` (HCP Terraform's exact error text). An empty (or blank) `include` reads as
 * absent (`[]`), as an empty `page[...]` does.
 */
export function includeParameter(allowed: readonly string[]) {
  return v.optional(
    v.pipe(
      v.string("Invalid include parameter"),
      v.transform((raw) => (raw.trim() === "" ? [] : raw.split(",").map((s) => s.trim()))),
      v.check((names) => names.every((n) => allowed.includes(n)), "Invalid include parameter"),
    ),
  );
}

/**
 * The page a request's query asks for, for a route whose query has no description yet
 * (it validates with the same pager: 400 with `source.parameter`).
 */
export function pageRequest(url: URL): PageRequest {
  // The first value of each parameter, as Hono's c.req.query() reads it.
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) if (!(name in query)) query[name] = value;
  const result = v.safeParse(pageQuery, query, { abortPipeEarly: true });
  if (!result.success) throw queryError(result.issues);
  return pageOf(result.output);
}
