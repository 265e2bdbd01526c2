/**
 * Per-isolate caches of what the hot `/v1` paths read from D1 for a (mount, role): sign
 * and issue read the role, the CA row and the mount's lease TTLs; creds reads the role,
 * the zero-address list and the TTLs; lookup reads the zero-address list and keeps its
 * answer per normalized address (otp/lookup.ts). A D1 round trip costs far more than the rest of
 * such a request, so these are served from memory. The mechanism (values shared, pending
 * loads never; bounded; invalidation-safe) is src/lib/isolate-cache/.
 *
 * Consistency: every write that changes them in this isolate — role writes and deletes
 * (roles/repo.ts), issuer writes and deletes (issuers/repo.ts), mount tunes (sys/mount-routes.ts), the
 * zero-address list (otp/zeroaddress.ts) — drops the mount's entries in every cache at
 * once, so a client sees its own writes. Writes made by another isolate are seen after at
 * most MOUNT_CONTEXT_TTL_MS (the eventual consistency Vault's standby nodes have too).
 * Only authenticated requests (sign, issue, creds, lookup) read through these caches (N2b).
 * A leaf module apart from the pure cache, so the writers can import it without cycles.
 */
import { IsolateCache, MAX_CACHE_BYTES } from "../lib/isolate-cache";

/** How long an entry may be served without re-reading D1. */
export const MOUNT_CONTEXT_TTL_MS = 1000;

/** Upper bound on cached (mount, role) entries per cache, unknown role names included. */
const MAX_ENTRIES = 1024;

/**
 * One cache of values per (mount, key); the key is a role name, or another name within the
 * mount (lookup's normalized address). Mount names never contain `/`.
 */
export class MountContextCache<T> {
  readonly #cache: IsolateCache<T>;

  constructor(name: string, maxEntries: number = MAX_ENTRIES) {
    // B18: roles, issuer sets and KRLs vary in size, so each cache is bounded in bytes too.
    this.#cache = new IsolateCache<T>({ name, ttlMs: MOUNT_CONTEXT_TTL_MS, maxEntries, maxBytes: MAX_CACHE_BYTES });
  }

  /**
   * The cached value for (mount, key), or this caller's own `load()`'s when absent or
   * expired; `keep` may refuse to store a loaded value (e.g. one too large to hold).
   */
  get(
    mount: string,
    key: string,
    load: () => Promise<T>,
    now: number = Date.now(),
    keep?: (value: T) => boolean,
  ): Promise<T> {
    return this.#cache.get(`${mount}/${key}`, load, keep ? { now, keep } : { now });
  }

  /** Drop every entry of a mount. */
  invalidate(mount: string): void {
    this.#cache.deletePrefix(`${mount}/`);
  }
}

/** Every mount context cache, registered at module load (allow-listed in test/unit/lib/module-state.test.ts). */
const caches: MountContextCache<unknown>[] = [];

/**
 * A new cache (at most `maxEntries`), cleared by invalidateMountContexts along with every
 * other. Call it at module load only (one per cache in code).
 */
export function mountContextCache<T>(maxEntries: number = MAX_ENTRIES): MountContextCache<T> {
  const cache = new MountContextCache<T>(`ssh-mount-context:${caches.length}`, maxEntries);
  caches.push(cache as MountContextCache<unknown>);
  return cache;
}

/** Drop every cached entry of a mount in every cache (call after writing its roles, CA, TTLs or zero-address list). */
export function invalidateMountContexts(mount: string): void {
  for (const cache of caches) cache.invalidate(mount);
}
