/**
 * The one shape of a listing every repository answers: the rows of the page asked for and
 * the count of all rows, which HCP Terraform's pagination meta needs (`total-count`,
 * `total-pages`; rendered by `pageDocument` in src/nocode/request/query.ts).
 */
export interface Page<Row> {
  rows: Row[];
  total: number;
}

/** Which rows a page holds: skip `offset`, take `size`. */
export interface PageWindow {
  offset: number;
  size: number;
}

/**
 * A page from its two queries, run side by side: the rows (already limited to the window)
 * and a `count(*)` read as `{ n }`.
 */
export async function pageFrom<Row>(rows: PromiseLike<Row[]>, count: PromiseLike<{ n: number }[]>): Promise<Page<Row>> {
  const [pageRows, totals] = await Promise.all([rows, count]);
  return { rows: pageRows, total: totals[0]?.n ?? 0 };
}
