/**
 * Per-isolate short cache of what the /api/v2 hot paths read from D1: token hash → caller
 * (auth.ts), (caller, organization) → effective rights (permissions.ts) and the inputs of
 * E3's document (no-code-modules/routes.ts). A D1 round trip costs more than a whole
 * cheap request, so these are served from memory for NOCODE_CACHE_TTL_MS.
 *
 * Consistency (the pattern of src/ssh/context-cache.ts): every /api/v2 request other
 * than GET/HEAD clears the whole cache before and after it runs (app.ts), so the isolate
 * that makes a change — token revocation, membership or team changes, E1/E2/DELETE,
 * variable options, registry module deletes — sees it at once. Writes made by another
 * isolate are seen after at most NOCODE_CACHE_TTL_MS. Concurrent misses share one D1 read;
 * a failed load is not kept. A leaf module: it imports nothing. Cached values are shared:
 * callers must not mutate them.
 */

/** How long an entry may be served without re-reading D1. */
export const NOCODE_CACHE_TTL_MS = 1000;

/** Upper bound on cached entries (unknown tokens and ids included). */
const MAX_ENTRIES = 2048;

interface Entry {
  expires: number;
  value: Promise<unknown>;
}

/** key → entry. Map order is insertion order, oldest first. */
const entries = new Map<string, Entry>();

/** Drop every cached entry (call on any write that may change what is cached). */
export function clearNocodeCache(): void {
  entries.clear();
}

/** The cached value for `key`, or `load()`'s when absent or expired. */
export function cachedNocode<T>(key: string, load: () => Promise<T>, now: number = Date.now()): Promise<T> {
  const hit = entries.get(key);
  if (hit && hit.expires > now) return hit.value as Promise<T>;
  if (hit) entries.delete(key);
  if (entries.size >= MAX_ENTRIES) {
    const oldest = entries.keys().next();
    if (!oldest.done) entries.delete(oldest.value);
  }
  const entry: Entry = { expires: now + NOCODE_CACHE_TTL_MS, value: load() };
  entries.set(key, entry);
  entry.value.catch(() => {
    // Only while the entry is still cached (a clear may have dropped it already).
    if (entries.get(key) === entry) entries.delete(key);
  });
  return entry.value as Promise<T>;
}
