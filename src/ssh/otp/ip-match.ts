/**
 * IP text and CIDR membership as Go's `net` package treats them, on the 16-byte keys of
 * src/lib/net/ip.ts (IPv4 mapped into ::ffff:0:0/96).
 */
import { type CidrRange, ipKey, isIpv4Mapped, parseCidr, rangeContains } from "../../lib/net/ip";

/** First address of ::ffff:0:0/96, where IPv4 lives in the 16-byte key space. */
export const IPV4_BLOCK_START = "00000000000000000000ffff00000000";

/**
 * Go's `net.IP.String()`: IPv4 (and IPv4-mapped IPv6) as a dotted quad; other IPv6 in
 * lowercase hex groups without leading zeros, the longest run of two or more zero
 * groups (the first one on a tie) written `::`.
 */
export function formatIp(addr: Uint8Array): string {
  if (isIpv4Mapped(addr)) return `${addr[12]}.${addr[13]}.${addr[14]}.${addr[15]}`;
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((addr[i]! << 8) | addr[i + 1]!);
  let bestStart = -1;
  let bestLength = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i >= 2 && j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = (from: number, to: number) =>
    groups
      .slice(from, to)
      .map((g) => g.toString(16))
      .join(":");
  if (bestStart === -1) return hex(0, 8);
  return `${hex(0, bestStart)}::${hex(bestStart + bestLength, 8)}`;
}

/**
 * Whether a CIDR range contains an address key, as Go's `IPNet.Contains` decides: an
 * IPv4 address belongs only to blocks inside ::ffff:0:0/96 (IPv4 blocks, or IPv6
 * blocks written within the mapped range); an IPv6 block that merely spans that range,
 * such as `::/0`, does not contain IPv4 addresses.
 */
export function cidrContains(range: Pick<CidrRange, "start" | "end">, key: string): boolean {
  if (!rangeContains(range, key)) return false;
  return key < IPV4_BLOCK_START || key > "00000000000000000000ffffffffffff" || range.start >= IPV4_BLOCK_START;
}

/** Result of checking an address against a role's blocks. */
export type CidrCheck = { ok: true } | { ok: false; error: string };

/**
 * As Vault's path_creds_create.go checks it: the address must be inside one of `cidrList` and outside every
 * block of `excludeCidrList`. Messages are Vault's (prefixed by the caller with
 * `Error validating IP: `).
 */
export function checkRoleCidrs(addr: Uint8Array, cidrList: string[], excludeCidrList: string[]): CidrCheck {
  const key = ipKey(addr);
  const notInRole: CidrCheck = { ok: false, error: "IP does not belong to role" };
  if (cidrList.length === 0) return notInRole;
  const included = listContains(cidrList, key);
  if (typeof included === "string") return { ok: false, error: `invalid CIDR entry "${included}"` };
  if (!included) return notInRole;
  const excluded = listContains(excludeCidrList, key);
  if (typeof excluded === "string") return { ok: false, error: `invalid CIDR entry "${excluded}"` };
  return excluded ? notInRole : { ok: true };
}

/** Whether any block of the list contains the key; the first unparsable entry instead. */
function listContains(list: string[], key: string): boolean | string {
  let hit = false;
  for (const entry of list) {
    const range = parseCidr(entry);
    if (!range) return entry;
    if (cidrContains(range, key)) hit = true;
  }
  return hit;
}
