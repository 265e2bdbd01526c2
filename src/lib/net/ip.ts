/**
 * IP addresses and CIDR blocks as fixed-width keys. Every address is mapped to 16 bytes
 * (IPv4 as ::ffff:a.b.c.d), written as 32 lowercase hex digits, so that string order is
 * address order and a CIDR block is the range [first, last].
 */

/** Parse an IPv4 or IPv6 address to 16 bytes; null when it is not one. */
export function parseIp(text: string): Uint8Array | null {
  const s = text.trim();
  if (s.includes(":")) return parseIpv6(s);
  const v4 = parseIpv4(s);
  if (!v4) return null;
  const out = new Uint8Array(16);
  out[10] = 0xff;
  out[11] = 0xff;
  out.set(v4, 12);
  return out;
}

function parseIpv4(s: string): Uint8Array | null {
  const parts = s.split(".");
  if (parts.length !== 4) return null;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i]!;
    // Go's net.ParseIP refuses leading zeros ("01") and values above 255.
    if (!/^(0|[1-9]\d{0,2})$/.test(p)) return null;
    const n = Number(p);
    if (n > 255) return null;
    out[i] = n;
  }
  return out;
}

function parseIpv6(s: string): Uint8Array | null {
  if (s.includes("%")) return null;
  let text = s;
  let tail: Uint8Array | null = null;
  const lastColon = text.lastIndexOf(":");
  const last = text.slice(lastColon + 1);
  if (last.includes(".")) {
    tail = parseIpv4(last);
    if (!tail) return null;
    text = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const parseGroups = (part: string) => (part === "" ? [] : part.split(":"));
  const head = parseGroups(halves[0]!);
  const rest = halves.length === 2 ? parseGroups(halves[1]!) : [];
  const total = head.length + rest.length;
  if (halves.length === 1 ? total !== 8 : total > 7) return null;
  const groups = [...head, ...new Array<string>(8 - total).fill("0"), ...rest];
  const out = new Uint8Array(16);
  for (let i = 0; i < 8; i++) {
    const g = groups[i]!;
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    const n = Number.parseInt(g, 16);
    out[i * 2] = n >> 8;
    out[i * 2 + 1] = n & 0xff;
  }
  if (tail) out.set(tail, 12);
  return out;
}

/** True when the 16-byte address is an IPv4-mapped address. */
export function isIpv4Mapped(addr: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (addr[i] !== 0) return false;
  return addr[10] === 0xff && addr[11] === 0xff;
}

/** 32-hex-digit key of an address. */
export function ipKey(addr: Uint8Array): string {
  let out = "";
  for (const b of addr) out += b.toString(16).padStart(2, "0");
  return out;
}

export interface CidrRange {
  /** The block as written, trimmed and lowercased. */
  text: string;
  start: string;
  end: string;
}

/**
 * Parse a CIDR block (`10.0.0.0/8`, `2001:db8::/32`) into its address range, like Go's
 * net.ParseCIDR (host bits may be set; the block is what the prefix selects). Null when
 * unparsable.
 */
export function parseCidr(text: string): CidrRange | null {
  const s = text.trim().toLowerCase();
  const slash = s.indexOf("/");
  if (slash === -1) return null;
  const addrText = s.slice(0, slash);
  const prefixText = s.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefixText)) return null;
  const addr = parseIp(addrText);
  if (!addr) return null;
  const v4 = !addrText.includes(":");
  const prefix = Number(prefixText) + (v4 ? 96 : 0);
  if (prefix > 128 || (v4 && Number(prefixText) > 32)) return null;
  const start = new Uint8Array(16);
  const end = new Uint8Array(16);
  for (let i = 0; i < 16; i++) {
    const bits = Math.max(0, Math.min(8, prefix - i * 8));
    const mask = bits === 0 ? 0 : (0xff << (8 - bits)) & 0xff;
    start[i] = addr[i]! & mask;
    end[i] = (addr[i]! & mask) | (~mask & 0xff);
  }
  return { text: s, start: ipKey(start), end: ipKey(end) };
}

/** True when the address key lies within the range. */
export function rangeContains(range: { start: string; end: string }, key: string): boolean {
  return range.start <= key && key <= range.end;
}
