/**
 * A per-isolate TTL cache of values (issue 14 finding 15; decisions N2b and the
 * per-isolate cache rule). Both wings use it for what their hot paths read from D1:
 * /api/v2's tokens, rights and E3 inputs (src/nocode/cache.ts) and /v1's (mount, role)
 * contexts of sign, issue and creds (src/ssh/context-cache.ts).
 *
 * Values are shared, pending loads never are. In workerd, a promise born in one
 * request's I/O context and awaited by another never settles when the first request is
 * cancelled (its client disconnects or times out): the runtime drops that request's
 * pending I/O, and every other request waiting on it hangs until it is killed ("the
 * script will never generate a response", Cloudflare's Workers errors page). So a miss
 * runs its own load in its own request and only a settled value is stored; concurrent
 * misses of one key each read D1 once (at most one round trip each, as without a cache).
 *
 * Consistency: a load that started before an invalidation (clear, deletePrefix) does not
 * store its value, since it may have read what the invalidating write changed. An entry
 * lives `ttlMs` from the moment its load started. A failed load stores nothing.
 *
 * Bounded: at most `maxEntries`; the oldest entry goes first. Pure: no bindings, no Hono.
 *
 * @example
 * const tokens = new IsolateCache<Caller | null>({ ttlMs: 1000, maxEntries: 2048 });
 * const caller = await tokens.get(`token:${hash}`, () => lookUp(db, hash), { keep: (c) => c !== null });
 */

export interface IsolateCacheOptions {
  /** How long a value may be served without loading it again. */
  ttlMs: number;
  /** Upper bound on entries. */
  maxEntries: number;
}

export interface IsolateCacheGetOptions<V> {
  /** Current time (ms since the epoch); tests pass it. */
  now?: number;
  /**
   * Whether a loaded value may be stored. Lets a caller keep only values keyed by
   * server-side facts, e.g. not a failed token lookup keyed by what a client sent (N2b).
   */
  keep?: (value: V) => boolean;
}

interface Entry<V> {
  expires: number;
  value: V;
}

export class IsolateCache<V> {
  /** key → entry. Map order is insertion order, oldest first. */
  readonly #entries = new Map<string, Entry<V>>();
  /** Bumped by every invalidation: a load that began under an older generation is not stored. */
  #generation = 0;

  constructor(readonly options: IsolateCacheOptions) {}

  /** Number of stored entries (expired ones included until they are next touched). */
  get size(): number {
    return this.#entries.size;
  }

  /** The stored, unexpired value of `key`, or undefined. Never loads. */
  peek(key: string, now: number = Date.now()): V | undefined {
    const hit = this.#entries.get(key);
    return hit && hit.expires > now ? hit.value : undefined;
  }

  /**
   * The stored value of `key`, or the value of this caller's own `load()` when absent or
   * expired (stored if no invalidation happened meanwhile and `keep` allows it).
   */
  async get(key: string, load: () => Promise<V>, options: IsolateCacheGetOptions<V> = {}): Promise<V> {
    const now = options.now ?? Date.now();
    const hit = this.#entries.get(key);
    if (hit) {
      if (hit.expires > now) return hit.value;
      this.#entries.delete(key);
    }
    const generation = this.#generation;
    const value = await load();
    if (generation === this.#generation && (options.keep?.(value) ?? true))
      this.#store(key, value, now + this.options.ttlMs);
    return value;
  }

  /** Drop one key. */
  delete(key: string): void {
    this.#generation++;
    this.#entries.delete(key);
  }

  /** Drop every key that starts with `prefix` (e.g. every role of one mount). */
  deletePrefix(prefix: string): void {
    this.#generation++;
    for (const key of this.#entries.keys()) if (key.startsWith(prefix)) this.#entries.delete(key);
  }

  /** Drop everything. */
  clear(): void {
    this.#generation++;
    this.#entries.clear();
  }

  #store(key: string, value: V, expires: number): void {
    this.#entries.delete(key);
    while (this.#entries.size >= this.options.maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done) break;
      this.#entries.delete(oldest.value);
    }
    this.#entries.set(key, { expires, value });
  }
}
