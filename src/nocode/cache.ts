/**
 * Per-isolate short cache of what the /api/v2 hot paths read from D1: token hash → caller
 * (auth.ts), (caller, organization) → effective rights (permissions.ts) and the inputs of
 * E3's document (no-code-modules/routes.ts). A D1 round trip costs more than a whole
 * cheap request, so these are served from memory for NOCODE_CACHE_TTL_MS. The mechanism
 * (values shared, pending loads never; bounded; invalidation-safe) is src/lib/isolate-cache.ts.
 *
 * Consistency: every authenticated /api/v2 request other than GET/HEAD clears the whole
 * cache before and after it runs (app.ts), so the isolate that makes a change — token
 * revocation, membership or team changes, E1/E2/DELETE, variable options, registry module
 * deletes — sees it at once. Unauthenticated requests never clear it and insert nothing
 * (N2b: failed token lookups are not kept). Writes made by another isolate are seen after
 * at most NOCODE_CACHE_TTL_MS. Cached values are shared: callers must not mutate them.
 */
import { IsolateCache, type IsolateCacheGetOptions } from "../lib/isolate-cache";

/** How long an entry may be served without re-reading D1. */
export const NOCODE_CACHE_TTL_MS = 1000;

/** Upper bound on cached entries. */
const MAX_ENTRIES = 2048;

const cache = new IsolateCache<unknown>({ ttlMs: NOCODE_CACHE_TTL_MS, maxEntries: MAX_ENTRIES });

/** Drop every cached entry (call on any authenticated write that may change what is cached). */
export function clearNocodeCache(): void {
  cache.clear();
}

/** The cached value for `key`, or this caller's own `load()`'s when absent or expired. */
export function cachedNocode<T>(key: string, load: () => Promise<T>, options: IsolateCacheGetOptions<T> = {}): Promise<T> {
  return cache.get(key, load, options as IsolateCacheGetOptions<unknown>) as Promise<T>;
}
