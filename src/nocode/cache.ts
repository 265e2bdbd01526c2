/**
 * Per-isolate short cache of what the /api/v2 hot paths read from D1: token hash → caller
 * (access/auth.ts), (caller, organization) → effective rights (access/permissions.ts), a no-code
 * module with its variable options (E3 and E4, no-code-modules/cached.ts), its pinned
 * `ok` version (E4, same file), a workspace's project (E4, projects/cached.ts), the
 * engine release list (E4, releases/cached.ts) and an `ok` version's summary (the plan
 * step, runs/configuration.ts). A D1 round
 * trip costs more than a whole cheap request, so these are served from memory for
 * NOCODE_CACHE_TTL_MS. The mechanism (values shared, pending loads never; bounded;
 * invalidation-safe) is src/lib/isolate-cache/.
 *
 * Consistency (decision N13): every authenticated /api/v2 request other than GET/HEAD
 * clears the whole cache after it ran (app.ts), unless it was refused (B18), so the isolate that makes a change —
 * token revocation, membership or team changes, E1/E2/DELETE, variable options, registry
 * module deletes, release list changes — sees it at once; a route whose writes touch none of the tables in
 * NOCODE_CACHE_ENTRIES declares so (route-rights.ts `cache: "unchanged"`) and keeps it.
 * Requests, writes included, may be served from entries up to NOCODE_CACHE_TTL_MS old.
 * Unauthenticated requests never clear it and insert nothing (N2b: failed token lookups
 * are not kept). Writes made by another isolate are seen after at most
 * NOCODE_CACHE_TTL_MS. Cached values are shared: callers must not mutate them.
 */
import { IsolateCache, type IsolateCacheGetOptions, MAX_CACHE_BYTES } from "../lib/isolate-cache";

/** How long an entry may be served without re-reading D1. */
export const NOCODE_CACHE_TTL_MS = 1000;

/** Upper bound on cached entries. */
const MAX_ENTRIES = 2048;

/** B18: summaries and option sets vary in size, so the cache is bounded in bytes too. */
const cache = new IsolateCache<unknown>({
  name: "nocode",
  ttlMs: NOCODE_CACHE_TTL_MS,
  maxEntries: MAX_ENTRIES,
  maxBytes: MAX_CACHE_BYTES,
});

/** Drop every cached entry (call on any authenticated write that may change what is cached). */
export function clearNocodeCache(): void {
  cache.clear();
}

/**
 * Clear the cache after an authenticated write unless its answer was a refusal of
 * credentials or rights (401, 403, 404: nothing was written). B18: no request clears a
 * cache before it has been authenticated and authorised, so a caller without the right to
 * write cannot flush what every other request of the isolate reads.
 */
export function clearNocodeCacheAfterWrite(status: number): void {
  if (status !== 401 && status !== 403 && status !== 404) cache.clear();
}

/**
 * What the cache holds, by key prefix, with every D1 table the entry's loader reads. A
 * write route may keep the cache (route-rights.ts `cache: "unchanged"`) only if it writes
 * none of these tables. Kept right by test/worker/nocode/cache-consistency.test.ts, which
 * loads every kind below on an empty cache and fails when a loader reads a table not
 * listed for it (and a key's prefix must be one of these kinds: see cachedNocode).
 */
export const NOCODE_CACHE_ENTRIES = {
  /** access/auth.ts resolveTokenHash: the token row with its user or team. */
  token: ["nocode_tokens", "nocode_users", "teams"],
  /** access/permissions.ts teamRights and userRights: a team's flags, a user's memberships. */
  perm: ["teams", "team_memberships"],
  /** no-code-modules/repo.ts findNoCodeModuleWithOptions: the module and its option sets. */
  module: ["no_code_modules", "variable_options"],
  /** releases/cached.ts: the engine release list (N6), for E4. */
  releases: ["terraform_versions"],
  /** no-code-modules/cached.ts cachedPinnedVersion: a pin's registry module and `ok` version, for E4. */
  pin: ["registry_modules", "registry_module_versions"],
  /** projects/cached.ts: a workspace's project in an organization (named or the default, N6), for E4. */
  project: ["organizations", "projects"],
  /** runs/configuration.ts summaryOfVersion: an `ok` version's parsed summary, for the plan and apply steps and E5. */
  summary: ["registry_module_versions"],
} as const satisfies Record<string, readonly string[]>;

/** A kind of cached entry (the first segment of its key). */
export type NocodeCacheKind = keyof typeof NOCODE_CACHE_ENTRIES;

/** Every D1 table some cached entry is read from. */
export const NOCODE_CACHED_TABLES: ReadonlySet<string> = new Set(Object.values(NOCODE_CACHE_ENTRIES).flat());

/** The cached value for `key`, or this caller's own `load()`'s when absent or expired. */
export function cachedNocode<T>(
  key: `${NocodeCacheKind}:${string}`,
  load: () => Promise<T>,
  options: IsolateCacheGetOptions<T> = {},
): Promise<T> {
  return cache.get(key, load, options as IsolateCacheGetOptions<unknown>) as Promise<T>;
}
