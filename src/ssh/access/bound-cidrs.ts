/**
 * Token and role CIDR bindings (decision S25: `token_bound_cidrs`). Vault's
 * parseutil.ParseAddrs accepts CIDR blocks and bare addresses (a single-address block).
 */
import { ipKey, parseCidr, parseIp, rangeContains } from "../../lib/net/ip";

/** Normalise a list of CIDR blocks or addresses; the first entry that is neither is returned as `invalid`. */
export function parseBoundCidrs(values: string[]): { cidrs: string[] } | { invalid: string } {
  const cidrs: string[] = [];
  for (const raw of values) {
    const text = raw.trim();
    if (text === "") continue;
    if (text.includes("/")) {
      if (!parseCidr(text)) return { invalid: text };
      cidrs.push(text.toLowerCase());
    } else {
      const addr = parseIp(text);
      if (!addr) return { invalid: text };
      cidrs.push(`${text.toLowerCase()}/${text.includes(":") ? 128 : 32}`);
    }
  }
  return { cidrs };
}

/**
 * True when the client address (Cloudflare's `CF-Connecting-IP`) lies in one of the blocks.
 * No address, or one that does not parse, is in none.
 */
export function addressInCidrs(address: string | null, cidrs: readonly string[]): boolean {
  if (cidrs.length === 0) return true;
  const addr = address ? parseIp(address) : null;
  if (!addr) return false;
  const key = ipKey(addr);
  return cidrs.some((c) => {
    const range = parseCidr(c);
    return range !== null && rangeContains(range, key);
  });
}
