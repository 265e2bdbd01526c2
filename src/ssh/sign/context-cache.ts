/**
 * Per-isolate cache of what sign and issue read from D1 for a (mount, role): the role, the
 * CA row and the mount's lease TTLs. A D1 round trip costs far more than an Ed25519
 * signature, so the hot path serves these from memory.
 *
 * Consistency: every write that changes them in this isolate — role writes and deletes
 * (roles/repo.ts), CA writes and deletes (ca/store.ts), mount tunes (sys/mounts.ts) — drops
 * the mount's entries at once, so a client sees its own writes. Writes made by another
 * isolate are seen after at most SIGN_CONTEXT_TTL_MS (the eventual consistency Vault's
 * standby nodes have too). Concurrent misses share one D1 read. A leaf module: it imports
 * nothing, so the writers can import it without cycles.
 */

/** How long an entry may be served without re-reading D1. */
export const SIGN_CONTEXT_TTL_MS = 1000;

/** Upper bound on cached (mount, role) entries, unknown role names included. */
const MAX_ENTRIES = 1024;

interface Entry<T> {
  expires: number;
  value: Promise<T>;
}

/** mount → role name → entry. Map order is insertion order, oldest first. */
const mounts = new Map<string, Map<string, Entry<unknown>>>();
let size = 0;

/** Drop every cached entry of a mount (call after writing its roles, CA or TTLs). */
export function invalidateSignContexts(mount: string): void {
  const roles = mounts.get(mount);
  if (!roles) return;
  size -= roles.size;
  mounts.delete(mount);
}

function evictOldest(): void {
  for (const [mount, roles] of mounts) {
    for (const name of roles.keys()) {
      roles.delete(name);
      size--;
      if (roles.size === 0) mounts.delete(mount);
      return;
    }
  }
}

/**
 * The cached value for (mount, role), or `load()`'s when absent or expired. A failed load
 * is not kept.
 */
export function cachedSignContext<T>(mount: string, role: string, load: () => Promise<T>, now: number = Date.now()): Promise<T> {
  let roles = mounts.get(mount);
  const hit = roles?.get(role);
  if (hit && hit.expires > now) return hit.value as Promise<T>;
  if (!roles) {
    roles = new Map();
    mounts.set(mount, roles);
  }
  if (hit) {
    roles.delete(role);
    size--;
  }
  const entry: Entry<T> = { expires: now + SIGN_CONTEXT_TTL_MS, value: load() };
  if (size >= MAX_ENTRIES) evictOldest();
  // evictOldest may have removed this mount's (now empty) map.
  if (!mounts.has(mount)) mounts.set(mount, roles);
  roles.set(role, entry);
  size++;
  const owner = roles;
  entry.value.catch(() => {
    // Only while the entry is still cached (an invalidation may have dropped it already).
    if (mounts.get(mount) === owner && owner.get(role) === entry) {
      owner.delete(role);
      size--;
    }
  });
  return entry.value;
}
