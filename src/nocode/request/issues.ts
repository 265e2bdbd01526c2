/**
 * The one place where a failed validation of an /api/v2 request becomes JSON:API error
 * objects (status policy in docs/api-v2-errors.md):
 * - a request document that is JSON but not the document the route reads → 422
 *   `invalid attribute`, one error object per failed member, each with `source.pointer`
 *   (RFC 6901) naming it, as Rails reports every failed validation (HCP Terraform's JSON:API errors);
 * - a query parameter that does not read → 400 `bad request` with `source.parameter`.
 * The messages are the schemas' own (written as Rails full messages where HCP's are known).
 */
import type { BaseIssue, IssuePathItem } from "valibot";
import { NocodeError } from "../errors";

/** RFC 6901: `~` → `~0`, `/` → `~1`. */
function escapeToken(token: string): string {
  return token.replaceAll("~", "~0").replaceAll("/", "~1");
}

function keyOf(item: IssuePathItem): string {
  return String((item as { key: unknown }).key);
}

/** The JSON pointer of the member an issue is about (`""` for the whole document). */
export function pointerOf(issue: BaseIssue<unknown>): string {
  return (issue.path ?? []).map((item) => `/${escapeToken(keyOf(item))}`).join("");
}

/** Errors of a request document: 422 `invalid attribute`, every failed member with its pointer. */
export function documentError(issues: readonly BaseIssue<unknown>[]): NocodeError {
  const errors = distinct(issues).map(
    (issue) => new NocodeError("invalid_attribute", issue.message, pointerOf(issue) || "/data"),
  );
  const [first, ...more] = errors;
  return new NocodeError(first!.code, first!.detail, first!.pointer, more);
}

/** Errors of the query string: 400 `bad request`, each naming its parameter. */
export function queryError(issues: readonly BaseIssue<unknown>[]): NocodeError {
  const errors = distinct(issues).map((issue) => {
    const parameter = issue.path?.[0] === undefined ? undefined : keyOf(issue.path[0]);
    return new NocodeError("bad_request", issue.message, undefined, [], parameter);
  });
  const [first, ...more] = errors;
  return new NocodeError(first!.code, first!.detail, undefined, more, first!.parameter);
}

/** One error per member and message: a union's alternatives may report the same thing twice. */
function distinct(issues: readonly BaseIssue<unknown>[]): BaseIssue<unknown>[] {
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const key = `${pointerOf(issue)}\n${issue.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
