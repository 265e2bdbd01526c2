/**
 * The one bounded per-isolate cache (decision B18; N2b). Every per-isolate collection
 * that outlives a request is an instance of this class: /api/v2's tokens, rights and E3
 * inputs (src/nocode/cache.ts), /v1's (mount, role) contexts (src/ssh/context-cache.ts)
 * and callers (src/ssh/access/token-cache.ts), imported keys of deployment secrets
 * (src/lib/crypto), CA signing keys, parsed configuration. A static test
 * (test/unit/lib/module-state.test.ts) fails on any other mutated module-level `Map`,
 * `Set`, `WeakMap`, array or object in `src/` unless it is allow-listed with a reason.
 *
 * Bounded: `maxEntries` (at most {@link MAX_CACHE_ENTRIES}) is required; where value sizes
 * vary, `maxBytes` (at most {@link MAX_CACHE_BYTES}) bounds the estimated size of all
 * values together. The oldest entry goes first; a value larger than `maxBytes` on its own
 * is not stored.
 *
 * Values are shared, pending loads never are ({@link IsolateCache.get}). In workerd, a
 * promise born in one request's I/O context and awaited by another never settles when the
 * first request is cancelled (its client disconnects or times out): the runtime drops that
 * request's pending I/O, and every other request waiting on it hangs until it is killed
 * ("the script will never generate a response", Cloudflare's Workers errors page). So a
 * miss runs its own load in its own request and only a settled value is stored; concurrent
 * misses of one key each load once (at most one round trip each, as without a cache).
 * {@link IsolateCache.set} stores a value as given, for values that belong to no request
 * (an imported key of a deployment secret).
 *
 * Consistency: a load that started before an invalidation (clear, delete, deletePrefix)
 * does not store its value, since it may have read what the invalidating write changed.
 * An entry lives `ttlMs` from the moment its load started. A failed load stores nothing.
 *
 * What a client chooses (a cookie, a token, a CSRF value) is never a key unless it was
 * first authenticated (B18): callers pass `keep` to store only values keyed by
 * server-side facts. Pure: no bindings, no Hono.
 *
 * @example
 * const tokens = new IsolateCache<Caller | null>({ name: "tokens", ttlMs: 1000, maxEntries: 2048 });
 * const caller = await tokens.get(`token:${hash}`, () => lookUp(db, hash), { keep: (c) => c !== null });
 */

/** B18: no cache holds more entries than this. */
export const MAX_CACHE_ENTRIES = 10_000;

/** B18: no cache's values together are estimated larger than this. */
export const MAX_CACHE_BYTES = 4 * 1024 * 1024;

export interface IsolateCacheOptions<V = unknown> {
  /** Names the cache in {@link isolateCacheStats} (a literal; a second cache of one name replaces the first there). */
  name: string;
  /** Upper bound on entries (1 … {@link MAX_CACHE_ENTRIES}). */
  maxEntries: number;
  /** How long a value may be served without loading it again; default: until evicted. */
  ttlMs?: number;
  /**
   * Upper bound on the estimated bytes of all values (≤ {@link MAX_CACHE_BYTES}); required
   * where value sizes vary. Sizes come from `sizeOf`, else {@link estimateBytes}.
   */
  maxBytes?: number;
  /** The size of one value in bytes (used with `maxBytes`). */
  sizeOf?: (value: V) => number;
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

/** What {@link isolateCacheStats} reports of one cache. */
export interface IsolateCacheStats {
  name: string;
  size: number;
  bytes: number;
  maxEntries: number;
  maxBytes: number | null;
}

interface Entry<V> {
  expires: number;
  value: V;
  bytes: number;
}

/**
 * Every cache by name, so tests can check that none grew past its bound. Allow-listed in
 * the module-state test: one entry per cache name written in code, replaced, never added
 * per request.
 */
const registry = new Map<string, IsolateCache<unknown>>();

/** Sizes and bounds of every cache of this isolate (for tests and diagnostics). */
export function isolateCacheStats(): IsolateCacheStats[] {
  return [...registry.values()].map((cache) => cache.stats());
}

export class IsolateCache<V> {
  /** key → entry. Map order is insertion order, oldest first. */
  readonly #entries = new Map<string, Entry<V>>();
  /** Bumped by every invalidation: a load that began under an older generation is not stored. */
  #generation = 0;
  #bytes = 0;
  readonly #ttlMs: number;
  readonly #maxBytes: number | null;
  readonly #sizeOf: (value: V) => number;

  constructor(readonly options: IsolateCacheOptions<V>) {
    const { maxEntries, maxBytes } = options;
    if (!Number.isInteger(maxEntries) || maxEntries < 1 || maxEntries > MAX_CACHE_ENTRIES)
      throw new RangeError(`cache ${options.name}: maxEntries must be an integer from 1 to ${MAX_CACHE_ENTRIES}`);
    if (maxBytes !== undefined && (!Number.isInteger(maxBytes) || maxBytes < 1 || maxBytes > MAX_CACHE_BYTES))
      throw new RangeError(`cache ${options.name}: maxBytes must be an integer from 1 to ${MAX_CACHE_BYTES}`);
    this.#ttlMs = options.ttlMs ?? Number.POSITIVE_INFINITY;
    this.#maxBytes = maxBytes ?? null;
    this.#sizeOf = options.sizeOf ?? ((value) => estimateBytes(value, maxBytes ?? MAX_CACHE_BYTES));
    registry.set(options.name, this as IsolateCache<unknown>);
  }

  /** Number of stored entries (expired ones included until they are next touched). */
  get size(): number {
    return this.#entries.size;
  }

  /** Estimated bytes of the stored values (0 when the cache has no `maxBytes`). */
  get bytes(): number {
    return this.#bytes;
  }

  stats(): IsolateCacheStats {
    return {
      name: this.options.name,
      size: this.size,
      bytes: this.#bytes,
      maxEntries: this.options.maxEntries,
      maxBytes: this.#maxBytes,
    };
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
      this.#remove(key);
    }
    const generation = this.#generation;
    const value = await load();
    if (generation === this.#generation && (options.keep?.(value) ?? true)) this.#store(key, value, now);
    return value;
  }

  /** Store `value` under `key` as given (it may be a promise that belongs to no request). */
  set(key: string, value: V, now: number = Date.now()): void {
    this.#store(key, value, now);
  }

  /** Drop one key. */
  delete(key: string): void {
    this.#generation++;
    this.#remove(key);
  }

  /** Drop every key that starts with `prefix` (e.g. every role of one mount). */
  deletePrefix(prefix: string): void {
    this.#generation++;
    for (const key of [...this.#entries.keys()]) if (key.startsWith(prefix)) this.#remove(key);
  }

  /** Drop everything. */
  clear(): void {
    this.#generation++;
    this.#entries.clear();
    this.#bytes = 0;
  }

  #remove(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }

  #store(key: string, value: V, now: number): void {
    this.#remove(key);
    const bytes = this.#maxBytes === null ? 0 : this.#sizeOf(value);
    if (this.#maxBytes !== null && bytes > this.#maxBytes) return;
    while (
      this.#entries.size >= this.options.maxEntries ||
      (this.#maxBytes !== null && this.#bytes + bytes > this.#maxBytes)
    ) {
      const oldest = this.#entries.keys().next();
      if (oldest.done) break;
      this.#remove(oldest.value);
    }
    this.#entries.set(key, { expires: now + this.#ttlMs, value, bytes });
    this.#bytes += bytes;
  }
}

/**
 * A rough size in bytes of a JSON-like value as V8 holds it (strings at two bytes a
 * character, a fixed cost per number, object and array slot; byte arrays at their
 * length; a promise at a fixed cost; an object by its own enumerable fields). Stops
 * counting once past `limit` (it then answers more than `limit`), so a huge value costs
 * little to refuse.
 */
export function estimateBytes(value: unknown, limit: number = MAX_CACHE_BYTES): number {
  let total = 0;
  const stack: unknown[] = [value];
  const seen = new Set<object>();
  while (stack.length > 0 && total <= limit) {
    const item = stack.pop();
    if (typeof item === "string") total += 16 + 2 * item.length;
    else if (typeof item !== "object" || item === null) total += 8;
    else if (seen.has(item)) total += 8;
    else {
      seen.add(item);
      if (ArrayBuffer.isView(item) || item instanceof ArrayBuffer) total += 32 + item.byteLength;
      else if (Array.isArray(item)) {
        total += 16 + 8 * item.length;
        for (const element of item) stack.push(element);
      } else if (item instanceof Map) {
        total += 32;
        for (const [k, v] of item) stack.push(k, v);
      } else if (item instanceof Set) {
        total += 32;
        for (const v of item) stack.push(v);
      } else if (item instanceof Promise) total += 64;
      else {
        // Plain objects and class instances alike (an opaque object such as a CryptoKey has no own fields).
        total += 32;
        for (const [k, v] of Object.entries(item)) {
          total += 16 + 2 * k.length;
          stack.push(v);
        }
      }
    }
  }
  return total;
}
