/**
 * `POST ssh/lookup` (Vault's path_lookup.go, decision S14): Vault's
 * TestSSHBackend_Lookup (adapted: `[]` rather than null), exclude_cidr_list, zero-address roles, and
 * the CIDR index with 10,000 roles.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ipKey, parseCidr, parseIp } from "../../../../src/lib/net/ip";
import { cidrContains } from "../../../../src/ssh/otp/ip-match";
import { candidateStarts } from "../../../../src/ssh/otp/lookup";
import { uniqueName, vault } from "../../../helpers/vault";
import { direct, otpRoleObject, removeRole, writeOtpRole, writeRole } from "./helpers";

const lookup = (ip: unknown, mount = "ssh") => vault("POST", `${mount}/lookup`, { body: { ip } });
/** Timed lookups go through `direct` (helpers.ts): the harness's own slowdown would skew them. */
const timedLookup = async (ip: string, mount: string) => {
  const res = await direct("POST", `${mount}/lookup`, { body: { ip } });
  expect(res.status).toBe(200);
};
const rolesFor = async (ip: string, mount = "ssh") => {
  const res = await lookup(ip, mount);
  expect(res.status, res.text).toBe(200);
  return res.json.data.roles as string[];
};

describe("lookup", () => {
  for (const name of ["testOTPRoleName", "test@RoleName"]) {
    it(`[] on an empty mount, the role once it covers the IP, [] after its deletion (${name})`, async () => {
      const empty = await lookup("127.0.0.1");
      expect(empty.status).toBe(200);
      expect(empty.json.data).toEqual({ roles: [] }); // S14: Vault says null
      await writeOtpRole(name, { default_user: "vaultssh", cidr_list: "127.0.0.1/32" });
      expect(await rolesFor("127.0.0.1")).toEqual([name]);
      await removeRole(name);
      expect(await rolesFor("127.0.0.1")).toEqual([]);
    });
  }

  it("a missing ip and an unparsable ip get Vault's messages (`<nil>` literally)", async () => {
    const missing = await vault("POST", "ssh/lookup", { body: {} });
    expect(missing.status).toBe(400);
    expect(missing.json).toEqual({ errors: ["Missing ip"] });
    for (const bad of ["999.1.1.1", "garbage", "10.0.0.0/8", "fe80::1%eth0"]) {
      const res = await lookup(bad);
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ errors: ['Invalid IP "<nil>"'] });
    }
  });

  it("S14: honours exclude_cidr_list, sorts by byte order, and skips CA roles", async () => {
    const M = "ssh-two";
    const wide = `Z-${uniqueName("wide")}`;
    const narrow = `a-${uniqueName("narrow")}`;
    const excluded = `m-${uniqueName("excl")}`;
    await writeOtpRole(wide, { cidr_list: "172.16.0.0/12" }, M);
    await writeOtpRole(narrow, { cidr_list: "172.16.5.0/24,192.168.0.0/16" }, M);
    await writeOtpRole(excluded, { cidr_list: "172.16.0.0/16", exclude_cidr_list: "172.16.5.0/25" }, M);
    await writeRole(uniqueName("ca"), { key_type: "ca", allow_user_certificates: true }, M);

    expect(await rolesFor("172.16.5.1", M)).toEqual([wide, narrow]); // byte order: "Z" < "a"
    expect(await rolesFor("172.16.5.200", M)).toEqual([wide, narrow, excluded]);
    expect(await rolesFor("172.16.200.1", M)).toEqual([wide, excluded]);
    expect(await rolesFor("172.17.0.1", M)).toEqual([wide]);
    expect(await rolesFor("172.32.0.1", M)).toEqual([]);
    expect(await rolesFor("192.168.255.255", M)).toEqual([narrow]);
  });

  it("S14: appends zero-address roles, sorted in, without duplicates", async () => {
    const M = "ssh-two";
    const matched = `k-${uniqueName("match")}`;
    const zeroOnly = `b-${uniqueName("zero")}`;
    await writeOtpRole(matched, { cidr_list: "203.0.113.0/24" }, M);
    await writeOtpRole(zeroOnly, { cidr_list: "198.18.0.0/15" }, M);
    await vault("POST", `${M}/config/zeroaddress`, { body: { roles: [matched, zeroOnly, matched] } });
    expect(await rolesFor("203.0.113.9", M)).toEqual([zeroOnly, matched]);
    const elsewhere = await rolesFor("8.8.8.8", M);
    expect(elsewhere).toContain(zeroOnly);
    expect(elsewhere).toContain(matched);
    await vault("DELETE", `${M}/config/zeroaddress`);
    expect(await rolesFor("8.8.8.8", M)).toEqual([]);
  });

  it("matches IPv6 blocks, and IPv4 addresses only against IPv4 blocks (Go's IPNet.Contains)", async () => {
    const M = "ssh-two";
    const v6 = uniqueName("v6");
    const all6 = uniqueName("all6");
    await writeOtpRole(v6, { cidr_list: "2001:db8:aa::/48", exclude_cidr_list: "2001:db8:aa:ff::/64" }, M);
    await writeOtpRole(all6, { cidr_list: "::/0" }, M);
    expect((await rolesFor("2001:db8:aa::1", M)).sort()).toEqual([all6, v6].sort());
    expect(await rolesFor("2001:db8:aa:ff::1", M)).toEqual([all6]);
    expect(await rolesFor("2001:db8:ab::1", M)).toEqual([all6]);
    expect(await rolesFor("100.64.0.1", M)).toEqual([]);
    expect(await rolesFor("::ffff:100.64.0.1", M)).toEqual([]);
  });

  it("warns about unknown parameters; only update is an operation here", async () => {
    const res = await vault("POST", "ssh/lookup", { body: { ip: "127.0.0.2", user: "x" } });
    expect(res.json.warnings).toEqual(["Endpoint ignored these unrecognized parameters: [user]"]);
    expect((await vault("GET", "ssh/lookup")).status).toBe(405);
  });

  // Answers and the zero-address list are kept per isolate for 1 s. Each case
  // primes the cache (the same lookup twice) and then changes what it holds through the
  // API of this isolate: the next lookup must see the change at once, not a second later.
  it("a role write, update and delete reach the next lookup at once, the cache primed", async () => {
    const M = "ssh-two";
    const ip = "198.51.100.77";
    const first = `a-${uniqueName("cache")}`;
    const second = `b-${uniqueName("cache")}`;
    const primed = async (expected: string[]) => {
      expect(await rolesFor(ip, M)).toEqual(expected);
      expect(await rolesFor(ip, M)).toEqual(expected);
    };
    await primed([]);
    await writeOtpRole(first, { cidr_list: "198.51.100.0/24" }, M);
    await primed([first]);
    // Every spelling of the address shares the entry (the key is the parsed address).
    expect(await rolesFor(`::ffff:${ip}`, M)).toEqual([first]);
    await writeOtpRole(second, { cidr_list: "198.51.0.0/16" }, M);
    await primed([first, second]);
    // An update that moves the first role away from the address.
    await writeOtpRole(first, { cidr_list: "198.51.101.0/24" }, M);
    await primed([second]);
    // An update that excludes the address from the second role.
    await writeOtpRole(second, { cidr_list: "198.51.0.0/16", exclude_cidr_list: `${ip}/32` }, M);
    await primed([]);
    await writeOtpRole(first, { cidr_list: "198.51.100.0/24" }, M);
    await primed([first]);
    await removeRole(first, M);
    expect(await rolesFor(ip, M)).toEqual([]);
    await removeRole(second, M);
  });

  it("a zero-address write or delete, and a role leaving the list, reach the next lookup at once", async () => {
    const M = "ssh-two";
    const ip = "192.0.2.200";
    const zero = `c-${uniqueName("zero")}`;
    const other = `d-${uniqueName("zero")}`;
    await writeOtpRole(zero, { cidr_list: "203.0.113.0/24" }, M);
    await writeOtpRole(other, { cidr_list: "203.0.113.0/24" }, M);
    expect(await rolesFor(ip, M)).toEqual([]);
    expect(await rolesFor(ip, M)).toEqual([]);
    expect((await vault("POST", `${M}/config/zeroaddress`, { body: { roles: [zero, other] } })).status).toBe(204);
    expect(await rolesFor(ip, M)).toEqual([zero, other]);
    expect(await rolesFor(ip, M)).toEqual([zero, other]);
    // A role delete takes the role off the list in the same batch (Vault's path_roles.go).
    await removeRole(zero, M);
    expect(await rolesFor(ip, M)).toEqual([other]);
    expect(await rolesFor(ip, M)).toEqual([other]);
    expect((await vault("DELETE", `${M}/config/zeroaddress`)).status).toBe(204);
    expect(await rolesFor(ip, M)).toEqual([]);
    await removeRole(other, M);
  });

  it("S14: stays correct and indexed with 10,000 roles", { timeout: 600_000 }, async () => {
    const M = "ssh"; // the bulk lives on `ssh`; the 10-role baseline is measured first
    // Baseline: 10 roles.
    const few = Array.from({ length: 10 }, (_, i) => `few-${i}`);
    for (const [i, name] of few.entries()) await writeOtpRole(name, { cidr_list: `100.${i}.0.0/16` }, M);
    const baseline = await medianMs(() => timedLookup("100.3.2.1", M));
    expect(await rolesFor("100.3.2.1", M)).toEqual(["few-3"]);

    // 10,000 roles: bulk-00000 … bulk-09999, role i owns 10.(i>>8).(i&255).0/24; every
    // 10th also owns 2001:db8:<i>::/48; every 100th excludes the upper half of its /24.
    // Four wide roles cover 10.0.0.0/8, one of them minus 10.5.0.0/16.
    const specs: { name: string; cidr: string; exclude: string }[] = [];
    for (let i = 0; i < 10_000; i++) {
      const v4 = `10.${i >> 8}.${i & 255}.0/24`;
      specs.push({
        name: `bulk-${String(i).padStart(5, "0")}`,
        cidr: i % 10 === 0 ? `${v4},2001:db8:${i.toString(16)}::/48` : v4,
        exclude: i % 100 === 0 ? `10.${i >> 8}.${i & 255}.128/25` : "",
      });
    }
    specs.push({ name: "wide-a", cidr: "10.0.0.0/8", exclude: "" });
    specs.push({ name: "wide-b", cidr: "10.0.0.0/8", exclude: "10.5.0.0/16" });
    specs.push({ name: "wide-c", cidr: "10.0.0.0/9", exclude: "" });
    specs.push({ name: "wide-d", cidr: "::/0", exclude: "" });
    const started = Date.now();
    await bulkInsertRoles(M, specs);
    const inserted = Date.now() - started;

    // Spot checks against a brute-force evaluation of every role.
    const cases: [string, string[]][] = [
      ["10.3.7.9", ["bulk-00775", "wide-a", "wide-b", "wide-c"]],
      ["10.5.1.1", ["bulk-01281", "wide-a", "wide-c"]], // wide-b excludes 10.5.0.0/16
      ["10.0.100.200", ["wide-a", "wide-b", "wide-c"]], // bulk-00100 excludes .128/25
      ["10.0.100.100", ["bulk-00100", "wide-a", "wide-b", "wide-c"]],
      ["10.0.0.20", ["bulk-00000", "wide-a", "wide-b", "wide-c"]],
      ["10.39.15.1", ["bulk-09999", "wide-a", "wide-b", "wide-c"]],
      ["10.200.0.1", ["wide-a", "wide-b"]],
      ["11.0.0.1", []],
      ["2001:db8:3e8::1", ["bulk-01000", "wide-d"]],
      ["2001:db8:3e9::1", ["wide-d"]],
    ];
    for (const [ip, expected] of cases) {
      expect(await rolesFor(ip, M), ip).toEqual(expected);
      expect(bruteForce(specs, ip), ip).toEqual(expected);
    }
    for (let k = 0; k < 20; k++) {
      const i = Math.floor(Math.random() * 10_000);
      const ip = `10.${i >> 8}.${i & 255}.${Math.floor(Math.random() * 256)}`;
      expect(await rolesFor(ip, M), ip).toEqual(bruteForce(specs, ip));
    }

    const withMany = await medianMs(() => timedLookup("10.3.7.9", M));
    const v6Many = await medianMs(() => timedLookup("2001:db8:3e8::1", M));

    // The query shape: a bounded set of index probes, never a scan of the table.
    const plan = await queryPlan("10.3.7.9");
    expect(plan).toMatch(/SEARCH ssh_role_cidrs USING INDEX ssh_role_cidrs_lookup \(mount=\? AND range_start=\?/);
    expect(plan).not.toMatch(/SCAN ssh_role_cidrs/);

    // The work done, as D1 counts it: the probes read a handful of rows whatever the
    // table size, while the obvious range query walks the index below the address.
    const probedRows = (await indexedQuery(M, "10.39.15.1")).meta.rows_read;
    const naiveRows = (await naiveQuery(M, "10.39.15.1")).meta.rows_read;
    expect(probedRows).toBeLessThan(200);
    expect(naiveRows).toBeGreaterThan(10_000);
    const naive = await medianMs(() => naiveQuery(M, "10.39.15.1"));
    const probed = await medianMs(() => indexedQuery(M, "10.39.15.1"));
    console.log(
      `lookup timing (median of 15 requests through the app in workerd; one address each, so after the first the per-isolate answer cache serves it): 10 roles ${baseline} ms; ` +
        `10,004 roles ${withMany} ms (IPv4), ${v6Many} ms (IPv6); bulk insert ${inserted} ms. ` +
        `SQL alone at 10,004 roles: probes ${probed} ms (${probedRows} rows read), ` +
        `naive range scan ${naive} ms (${naiveRows} rows read)`,
    );
  });
});

/** Insert roles and their CIDR index rows the way putRole writes them, in a few statements. */
async function bulkInsertRoles(mount: string, specs: { name: string; cidr: string; exclude: string }[]): Promise<void> {
  const roles: unknown[] = [];
  const cidrs: unknown[] = [];
  for (const s of specs) {
    const role = otpRoleObject(s.name, {
      key_type: "otp",
      default_user: "ubuntu",
      cidr_list: s.cidr,
      exclude_cidr_list: s.exclude,
    });
    roles.push({ name: s.name, config: JSON.stringify(role) });
    for (const [list, included] of [
      [role.cidrList, 1],
      [role.excludeCidrList, 0],
    ] as const) {
      for (const block of list) {
        const range = parseCidr(block)!;
        cidrs.push({ role: s.name, included, start: range.start, end: range.end });
      }
    }
  }
  const insertRoles = env.DB.prepare(
    `INSERT INTO ssh_roles (mount, name, key_type, config, updated_at)
     SELECT ?1, value->>'name', 'otp', value->>'config', ?2 FROM json_each(?3)`,
  );
  const insertCidrs = env.DB.prepare(
    `INSERT INTO ssh_role_cidrs (mount, role, included, range_start, range_end)
     SELECT ?1, value->>'role', value->>'included', value->>'start', value->>'end' FROM json_each(?2)`,
  );
  const statements: D1PreparedStatement[] = [];
  for (let i = 0; i < roles.length; i += 2_000) {
    statements.push(insertRoles.bind(mount, Date.now(), JSON.stringify(roles.slice(i, i + 2_000))));
  }
  for (let i = 0; i < cidrs.length; i += 2_000) {
    statements.push(insertCidrs.bind(mount, JSON.stringify(cidrs.slice(i, i + 2_000))));
  }
  await env.DB.batch(statements);
}

/** S14's answer computed by checking every role, for comparison. */
function bruteForce(specs: { name: string; cidr: string; exclude: string }[], ip: string): string[] {
  const key = ipKey(parseIp(ip)!);
  const inAny = (list: string) =>
    list
      .split(",")
      .filter((b) => b !== "")
      .some((b) => cidrContains(parseCidr(b)!, key));
  return specs
    .filter((s) => inAny(s.cidr) && !inAny(s.exclude))
    .map((s) => s.name)
    .sort();
}

const INDEXED_SQL = `SELECT role, included FROM ssh_role_cidrs
  WHERE mount = ?1 AND range_start IN (SELECT value FROM json_each(?2)) AND range_end >= ?3`;

function indexedQuery(mount: string, ip: string) {
  const addr = parseIp(ip)!;
  return env.DB.prepare(INDEXED_SQL)
    .bind(mount, JSON.stringify(candidateStarts(addr)), ipKey(addr))
    .all();
}

function naiveQuery(mount: string, ip: string) {
  const key = ipKey(parseIp(ip)!);
  return env.DB.prepare(
    "SELECT role, included FROM ssh_role_cidrs WHERE mount = ?1 AND range_start <= ?2 AND range_end >= ?2",
  )
    .bind(mount, key)
    .all();
}

async function queryPlan(ip: string): Promise<string> {
  const addr = parseIp(ip)!;
  const rows = await env.DB.prepare(`EXPLAIN QUERY PLAN ${INDEXED_SQL}`)
    .bind("ssh", JSON.stringify(candidateStarts(addr)), ipKey(addr))
    .all<{ detail: string }>();
  return rows.results.map((r) => r.detail).join("\n");
}

async function medianMs(fn: () => Promise<unknown>, runs = 15): Promise<number> {
  await fn(); // warm-up
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return Math.round(times[Math.floor(runs / 2)]! * 100) / 100;
}
