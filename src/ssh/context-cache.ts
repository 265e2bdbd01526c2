/**
 * Per-isolate caches of what the hot `/v1` paths read from D1 for a (mount, role): sign
 * and issue read the role, the CA row and the mount's lease TTLs; creds reads the role,
 * the zero-address list and the TTLs. A D1 round trip costs far more than the rest of
 * such a request, so these are served from memory.
 *
 * Consistency: every write that changes them in this isolate — role writes and deletes
 * (roles/repo.ts), issuer writes and deletes (issuers/repo.ts), mount tunes (sys/mounts.ts), the
 * zero-address list (otp/zeroaddress.ts) — drops the mount's entries in every cache at
 * once, so a client sees its own writes. Writes made by another isolate are seen after at
 * most MOUNT_CONTEXT_TTL_MS (the eventual consistency Vault's standby nodes have too).
 * Concurrent misses share one D1 read. A leaf module: it imports nothing, so the writers
 * can import it without cycles.
 */

/** How long an entry may be served without re-reading D1. */
export const MOUNT_CONTEXT_TTL_MS = 1000;

/** Upper bound on cached (mount, role) entries per cache, unknown role names included. */
const MAX_ENTRIES = 1024;

interface Entry<T> {
  expires: number;
  value: Promise<T>;
}

/** One cache of values per (mount, role). */
export class MountContextCache<T> {
  /** mount → role name → entry. Map order is insertion order, oldest first. */
  readonly #mounts = new Map<string, Map<string, Entry<T>>>();
  #size = 0;

  /**
   * The cached value for (mount, role), or `load()`'s when absent or expired. A failed
   * load is not kept.
   */
  get(mount: string, role: string, load: () => Promise<T>, now: number = Date.now()): Promise<T> {
    let roles = this.#mounts.get(mount);
    const hit = roles?.get(role);
    if (hit && hit.expires > now) return hit.value;
    if (!roles) {
      roles = new Map();
      this.#mounts.set(mount, roles);
    }
    if (hit) {
      roles.delete(role);
      this.#size--;
    }
    const entry: Entry<T> = { expires: now + MOUNT_CONTEXT_TTL_MS, value: load() };
    if (this.#size >= MAX_ENTRIES) this.#evictOldest();
    // #evictOldest may have removed this mount's (now empty) map.
    if (!this.#mounts.has(mount)) this.#mounts.set(mount, roles);
    roles.set(role, entry);
    this.#size++;
    const owner = roles;
    entry.value.catch(() => {
      // Only while the entry is still cached (an invalidation may have dropped it already).
      if (this.#mounts.get(mount) === owner && owner.get(role) === entry) {
        owner.delete(role);
        this.#size--;
      }
    });
    return entry.value;
  }

  /** Drop every entry of a mount. */
  invalidate(mount: string): void {
    const roles = this.#mounts.get(mount);
    if (!roles) return;
    this.#size -= roles.size;
    this.#mounts.delete(mount);
  }

  #evictOldest(): void {
    for (const [mount, roles] of this.#mounts) {
      for (const name of roles.keys()) {
        roles.delete(name);
        this.#size--;
        if (roles.size === 0) this.#mounts.delete(mount);
        return;
      }
    }
  }
}

const caches: MountContextCache<unknown>[] = [];

/** A new cache, cleared by invalidateMountContexts along with every other. */
export function mountContextCache<T>(): MountContextCache<T> {
  const cache = new MountContextCache<T>();
  caches.push(cache as MountContextCache<unknown>);
  return cache;
}

/** Drop every cached entry of a mount in every cache (call after writing its roles, CA, TTLs or zero-address list). */
export function invalidateMountContexts(mount: string): void {
  for (const cache of caches) cache.invalidate(mount);
}
