/**
 * Identifiers of the no-code service (HCP Terraform's id formats): a prefix, `-`, then 16 characters
 * from [A-Za-z0-9] (`prj-…`, `ws-…`, `apool-…`); organizations are identified by name.
 */

const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** `length` uniformly random characters of [A-Za-z0-9] (rejection sampling, no modulo bias). */
export function randomAlphanumeric(length: number): string {
  let out = "";
  // 62 * 4 = 248: bytes at or above it are discarded so each character is uniform.
  while (out.length < length) {
    const bytes = crypto.getRandomValues(new Uint8Array(length * 2));
    for (const b of bytes) {
      if (b >= 248) continue;
      out += ALPHANUMERIC[b % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/**
 * A new resource id: `newId("prj")` and `newId("prj-")` both give `prj-` followed by 16
 * characters of [A-Za-z0-9].
 */
export function newId(prefix: string): string {
  const head = prefix.endsWith("-") ? prefix : `${prefix}-`;
  return head + randomAlphanumeric(16);
}

/** Whether `id` has the shape `<prefix>-<16 alphanumerics>`. */
export function isId(prefix: string, id: string): boolean {
  const head = prefix.endsWith("-") ? prefix : `${prefix}-`;
  return id.startsWith(head) && /^[A-Za-z0-9]{16}$/.test(id.slice(head.length));
}
