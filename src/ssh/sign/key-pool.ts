/**
 * RSA key pairs generated ahead of time for `issue`, per isolate.
 *
 * Generating an RSA-2048 key takes 100–500 ms of the isolate's one thread, nearly all of an
 * `issue` request's cost. A burst of requests after a quiet spell therefore queues behind
 * one generation per request. This pool lets the first few of a burst answer at once:
 *
 * - It is filled only after a request has issued a key of its kind, in that request's
 *   `waitUntil`, one key at a time, up to `capacity`: memory and background work are
 *   bounded, and an isolate that never issues RSA-2048 never generates ahead.
 * - It generates only in a quiet moment: no key asked for during the last `quietMs`, longer
 *   than one generation. A generation holds the isolate's one thread, so one started as
 *   soon as the handler returns would hold back the answer itself (workerd writes it in
 *   later turns of the same thread), and one started between two requests of a steady
 *   stream would hold back the next. Under steady load (a key asked for at least every
 *   `quietMs`) the fill never finds a quiet moment and gives up after `maxWaitMs`;
 *   requests then generate inline, as without a pool. Measured: docs/performance.md.
 * - `take` removes the key it returns before returning, synchronously, so no two requests
 *   ever get the same key (a Worker runs one piece of JavaScript at a time).
 * - Keys live only in this isolate's memory: never stored, never logged, never reused; an
 *   isolate that goes away takes its unused keys with it.
 *
 * Under steady load every request still costs one generation (inline or in the refill), so
 * the steady rate stays the raw generation rate; docs/performance.md has the figures.
 */
import { type GeneratedSshKeyPair, generateSshKeyPair } from "../../lib/crypto/ssh-keys-and-certificates";
import type { KeySpec } from "../issuers/key-specs";

export class PregeneratedKeys {
  private readonly ready: GeneratedSshKeyPair[] = [];
  private filling = false;
  /** When a key was last asked for (ms). */
  private lastDemand = 0;

  constructor(
    readonly capacity: number,
    private readonly generate: () => Promise<GeneratedSshKeyPair>,
    readonly timing: { quietMs: number; maxWaitMs: number } = { quietMs: 500, maxWaitMs: 5000 },
  ) {}

  /** Keys ready now. */
  get size(): number {
    return this.ready.length;
  }

  /** A key generated ahead of time, removed from the pool; undefined when there is none. */
  take(): GeneratedSshKeyPair | undefined {
    this.lastDemand = Date.now();
    return this.ready.shift();
  }

  /**
   * Generate keys until the pool holds `capacity`, each in a quiet moment, waiting at most
   * `maxWaitMs` in all for those. Only one fill runs at a time per isolate (a call during a
   * fill returns at once: a pending promise is never shared between requests); a failed
   * generation ends the fill quietly, the next request generates inline.
   */
  async fill(): Promise<void> {
    if (this.filling) return;
    this.filling = true;
    const { quietMs, maxWaitMs } = this.timing;
    try {
      let waited = 0;
      while (this.ready.length < this.capacity) {
        const pause = quietMs - (Date.now() - this.lastDemand);
        if (pause > 0) {
          if (waited >= maxWaitMs) break;
          // Timers advance workerd's clock; the pause ends when the quiet moment would.
          await new Promise((resolve) => setTimeout(resolve, pause));
          waited += pause;
          continue;
        }
        this.ready.push(await this.generate());
      }
    } catch {
      // Nothing to report to anyone: issue generates inline when the pool is empty.
    } finally {
      this.filling = false;
    }
  }
}

/** Keys per isolate kept ready: a burst of this many issues answers without generating. */
export const RSA_2048_POOL_CAPACITY = 4;

/** RSA-2048 (issue's default RSA size, the one asked for most) is the only size pooled. */
export const rsa2048Pool = new PregeneratedKeys(RSA_2048_POOL_CAPACITY, () => generateSshKeyPair("rsa", 2048));

/** The pool for a key spec, or null when keys of that spec are generated on demand only. */
export function poolFor(spec: KeySpec): PregeneratedKeys | null {
  return spec.kind === "rsa" && spec.bits === 2048 ? rsa2048Pool : null;
}
