/** Token lifetimes of the token store (decision S5a) and how Vault writes them. */
import type { TokenContext } from "./token-context";

/** S5a: default and maximum token TTL, 768h. */
export const TOKEN_MAX_TTL_SECONDS = 768 * 3600;

/** Seconds of life left (0 for tokens that never expire). */
export function remainingTtl(token: TokenContext, now = Date.now()): number {
  return token.expireAt === null ? 0 : Math.max(0, Math.floor((token.expireAt - now) / 1000));
}

/** Go's time.Duration String() for whole seconds, e.g. `768h0m0s`. */
export function formatGoDuration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}
