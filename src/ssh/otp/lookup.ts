/**
 * `POST <mount>/lookup` (Vault's path_lookup.go, decision S14): the roles an IP is
 * associated with.
 *
 * S14 departs from Vault: the answer is sorted and de-duplicated, `[]` when nothing
 * matches (Vault: null), honours `exclude_cidr_list` (Vault ignores it), and includes the
 * zero-address roles.
 *
 * It reads the CIDR index `ssh_role_cidrs` that the roles repository maintains, never
 * the roles themselves. A CIDR block is aligned: the block of prefix length p that
 * contains address A starts exactly at A with its low bits cleared. So at most 129
 * starts (33 for IPv4) can belong to a block containing A, and the query asks the
 * (mount, range_start, range_end) index for exactly those starts: a bounded number of
 * index probes, whatever the number of roles. A plain `range_start <= A AND range_end
 * >= A` would walk every index entry below A instead, half the table on average.
 *
 * Per isolate (docs/performance.md), the zero-address list comes from its 1 s cache and each answer
 * is kept for 1 s per (mount, normalized address), in a bounded cache, with the
 * consistency contract of the other per-isolate caches (context-cache.ts): a role write
 * or delete, a zero-address write or delete and a mount tune drop the mount's answers at
 * once in the isolate that made them; other isolates see them within 1 s. Lookup is
 * authenticated, so a caller may choose the keys (N2b); the entries are bounded in number
 * and in size. A repeated address is answered without D1; a new one makes one D1 call,
 * the index probe (plus the zero-address list at most once a second).
 */
import { and, eq, gte, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { sshRoleCidrs } from "../../db/schema/ssh";
import { ipKey, isIpv4Mapped, parseIp } from "../../lib/net/ip";
import { mountContextCache } from "../context-cache";
import { badRequest } from "../errors";
import { parseFields, unknownFieldWarnings } from "../fields";
import { vaultJson } from "../respond";
import type { VaultRequest } from "../router";
import { readZeroAddressCached } from "./zeroaddress";

/**
 * The start key of every block that can contain `addr`. IPv4 addresses belong only to
 * blocks inside ::ffff:0:0/96 (prefix 96 and longer), as in Go (see ip-match.ts).
 */
export function candidateStarts(addr: Uint8Array): string[] {
  const shortest = isIpv4Mapped(addr) ? 96 : 0;
  const starts = new Set<string>();
  const masked = new Uint8Array(addr);
  // From the longest prefix to the shortest, clearing one more low bit each time.
  starts.add(ipKey(masked));
  for (let prefix = 127; prefix >= shortest; prefix--) {
    const byte = prefix >> 3;
    masked[byte] = masked[byte]! & ~(0x80 >> (prefix & 7)) & 0xff;
    starts.add(ipKey(masked));
  }
  return [...starts];
}

/** The CIDR-index rows of the blocks that can hold `addr` (decode with rolesFromIndexRows). */
export function roleIndexQuery(db: Db, mount: string, addr: Uint8Array) {
  const key = ipKey(addr);
  // One bound parameter (a JSON array) however many candidates: D1 caps parameters at 100.
  const starts = JSON.stringify(candidateStarts(addr));
  return db
    .select({ role: sshRoleCidrs.role, included: sshRoleCidrs.included })
    .from(sshRoleCidrs)
    .where(
      and(
        eq(sshRoleCidrs.mount, mount),
        sql`${sshRoleCidrs.rangeStart} IN (SELECT value FROM json_each(${starts}))`,
        gte(sshRoleCidrs.rangeEnd, key),
      ),
    );
}

/** Names of the roles whose index rows make the address theirs: included and not excluded. */
export function rolesFromIndexRows(rows: { role: string; included: boolean }[]): string[] {
  const included = new Set<string>();
  const excluded = new Set<string>();
  for (const row of rows) (row.included ? included : excluded).add(row.role);
  return [...included].filter((role) => !excluded.has(role));
}

/** Byte-order comparison (role names are compared as Go compares strings). */
function byteOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The fields `lookup` takes. */
export const LOOKUP_FIELDS = { ip: { type: "string" } } as const;

/** Answers kept per (mount, normalized address); every mount's share one bound. */
const lookupAnswers = mountContextCache<readonly string[]>(4096);

/**
 * Only answers of at most this many characters of role names are kept, so the cache holds
 * at most 4096 × 4 KiB however many roles an address matches.
 */
const MAX_CACHED_ANSWER_CHARS = 4096;

function smallAnswer(roles: readonly string[]): boolean {
  let chars = 0;
  for (const role of roles) chars += role.length;
  return chars <= MAX_CACHED_ANSWER_CHARS;
}

/** The sorted, de-duplicated roles of `addr` in a mount: matched through the index, plus the zero-address roles. */
async function rolesForAddress(db: Db, mount: string, addr: Uint8Array): Promise<readonly string[]> {
  const [indexRows, zeroAddress] = await Promise.all([
    roleIndexQuery(db, mount, addr),
    readZeroAddressCached(db, mount),
  ]);
  return [...new Set([...rolesFromIndexRows(indexRows), ...(zeroAddress ?? [])])].sort(byteOrder);
}

export async function lookupHandler(req: VaultRequest): Promise<Response> {
  const f = parseFields(req.body, LOOKUP_FIELDS);
  const ipText = f.values.ip as string;
  if (ipText === "") throw badRequest("Missing ip");
  const addr = parseIp(ipText);
  // Vault formats the failed parse result, not the input: the text is literally <nil>.
  if (!addr) throw badRequest('Invalid IP "<nil>"');
  // The key is the parsed address (16 bytes): every spelling of one address shares it.
  const roles = await lookupAnswers.get(
    req.mount,
    ipKey(addr),
    () => rolesForAddress(req.db, req.mount, addr),
    Date.now(),
    smallAnswer,
  );
  return vaultJson(req, { data: { roles }, warnings: unknownFieldWarnings(f.unknown) });
}
