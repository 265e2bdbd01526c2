/**
 * The /v1 authorization matrix, GENERATED FROM
 * THE ROUTE TABLE. Every route and operation of `vaultRoutes` × {no token, bad token, a
 * token lacking the capability, a token whose policy denies exactly that path, root} ×
 * {canonical path, trailing slash, `//`, `%2F`, another case, and for a parameter the
 * handler would normalise: another case of it, surrounding spaces}. The expected status of
 * every cell follows S2b's order (403 for no or bad token; 403 where the ACL denies the
 * path as received; else 404 `unsupported path`, or 400 for a name needing normalising):
 * never a 2xx for a non-canonical spelling, and the database is unchanged after each
 * route's cells. S16a's unauthenticated operations are exempt only on their canonical
 * spelling, and the exemption comes from the routes' `unauthenticated` flags, so a route
 * added to the table is covered without touching this file.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { CAPABILITIES, type Capability } from "../../../src/ssh/access/acl-policy";
import { NAME_PATTERN, type Operation, requiredCapability, type VaultRoute } from "../../../src/ssh/router";
import { vaultRoutes } from "../../../src/ssh/routes";
import { vault } from "../../helpers/vault";
import { workerRequest } from "../../helpers/worker-request";
import { CA_KEYS } from "./ca-fixtures";

const MOUNT = "ssh";
const SAMPLE = "matrix-x";

/**
 * A value for a path parameter that its pattern accepts (the same name everywhere when
 * possible), and not one an earlier parameter of the route took (`auth/:mount/role/:name`),
 * so each parameter can be respelled alone.
 */
function sampleFor(route: VaultRoute, name: string, taken: readonly string[]): string {
  const source = route.params?.[name] ?? NAME_PATTERN;
  const candidates = [SAMPLE, "ssh", "0a1b2c3d-0000-4000-8000-000000000001", "x", "1"];
  const found = candidates.find((c) => !taken.includes(c) && new RegExp(`^(?:${source})$`).test(c));
  if (!found) throw new Error(`no sample value for :${name} of ${route.pattern} (${source}); add one here`);
  return found;
}

interface Cell {
  route: VaultRoute;
  operation: Operation;
  /** Canonical path below /v1 (without a list's trailing slash). */
  path: string;
  params: Record<string, string>;
}

const METHOD: Record<Operation, string> = {
  read: "GET",
  list: "GET",
  update: "POST",
  delete: "DELETE",
  patch: "PATCH",
};

function cells(): Cell[] {
  const out: Cell[] = [];
  for (const route of vaultRoutes) {
    const params: Record<string, string> = {};
    const segments = route.pattern.split("/").map((segment) => {
      if (!segment.startsWith(":")) return segment;
      const name = segment.slice(1);
      params[name] = sampleFor(route, name, Object.values(params));
      return params[name]!;
    });
    const path = [...(route.mounted ? [MOUNT] : []), ...segments].join("/");
    for (const operation of Object.keys(route.operations) as Operation[]) out.push({ route, operation, path, params });
  }
  return out;
}

/** The ACL path of a request path as received (S2b; a list's carries a trailing slash). */
function aclPath(decoded: string, operation: Operation): string {
  return operation === "list" && !decoded.endsWith("/") ? `${decoded}/` : decoded;
}

interface Variant {
  name: string;
  /** The path below /v1 as sent (raw, possibly percent-encoded). */
  raw: string;
  /** True when this spelling is canonical for the operation (only a list's trailing slash). */
  canonical: boolean;
  /** The 4xx an authorised caller gets: 404 unsupported path, or 400 for a name to normalise. */
  refusal: 400 | 404;
}

function variants(cell: Cell): Variant[] {
  const { path, operation, route } = cell;
  const slash = path.lastIndexOf("/");
  const first = path.indexOf("/");
  const list: Variant[] = [
    { name: "canonical", raw: path, canonical: true, refusal: 404 },
    { name: "trailing slash", raw: `${path}/`, canonical: operation === "list", refusal: 404 },
    { name: "empty segment", raw: `${path.slice(0, first)}//${path.slice(first + 1)}`, canonical: false, refusal: 404 },
    { name: "leading empty segment", raw: `/${path}`, canonical: false, refusal: 404 },
    {
      name: "encoded slash",
      raw: `${path.slice(0, slash)}%2F${path.slice(slash + 1)}`,
      canonical: false,
      refusal: 404,
    },
    { name: "another case", raw: path.toUpperCase(), canonical: false, refusal: 404 },
  ];
  // Parameters the handler would normalise: another spelling of the value is 400 (S2b).
  for (const name of Object.keys(route.normalisedParams ?? {})) {
    const value = cell.params[name]!;
    const respell = (other: string) => path.replace(new RegExp(`(^|/)${value}(?=/|$)`), `$1${other}`);
    list.push({ name: `:${name} in another case`, raw: respell(value.toUpperCase()), canonical: false, refusal: 400 });
    list.push({
      name: `:${name} with surrounding spaces`,
      raw: respell(`%20${value}%20`),
      canonical: false,
      refusal: 400,
    });
  }
  return list;
}

type TokenKind = "no token" | "bad token" | "lacks the capability" | "denied exactly this path" | "root";

/** Everything in the database, table by table: a cell changed nothing when this is equal. */
async function snapshot(): Promise<string> {
  if (tableNames.length === 0) {
    const tables = await env.DB.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all<{
      name: string;
    }>();
    for (const { name } of tables.results) {
      if (!name.startsWith("_cf") && !name.startsWith("sqlite_") && name !== "d1_migrations") tableNames.push(name);
    }
  }
  // One round trip for every table.
  const results = await env.DB.batch(
    tableNames.map((name) => env.DB.prepare(`SELECT * FROM "${name}" ORDER BY rowid`)),
  );
  return JSON.stringify(results.map((r, i) => [tableNames[i], r.results]));
}
const tableNames: string[] = [];

const ALL_CELLS = cells();
const tokens = new Map<string, string>();
let denyToken = "";
const denied = new Set<string>();

async function writePolicy(name: string, rules: Record<string, string[]>): Promise<void> {
  const path: Record<string, { capabilities: string[] }> = {};
  for (const [pattern, capabilities] of Object.entries(rules)) path[pattern] = { capabilities };
  const res = await vault("PUT", `sys/policies/acl/${name}`, { body: { policy: JSON.stringify({ path }) } });
  if (res.status !== 204) throw new Error(`policy ${name}: ${res.status} ${res.text}`);
}

async function tokenFor(policy: string): Promise<string> {
  const res = await vault("POST", "auth/token/create", { body: { policies: [policy], no_default_policy: true } });
  if (res.status !== 200) throw new Error(`token: ${res.status} ${res.text}`);
  return res.json.auth.client_token as string;
}

/** A token granted every capability on every path except `needed` (S6; patch is also allowed by update). */
async function lackingToken(needed: Capability): Promise<string> {
  const existing = tokens.get(needed);
  if (existing) return existing;
  const name = `matrix-lacks-${needed}`;
  await writePolicy(name, { "*": [...lackingCaps(needed)] });
  const token = await tokenFor(name);
  tokens.set(needed, token);
  return token;
}

beforeAll(async () => {
  // Real things behind the sample paths, so a request that wrongly reached a handler
  // would succeed (and change something) instead of failing for a missing object.
  const ca = await vault("POST", `${MOUNT}/config/ca`, {
    body: { private_key: CA_KEYS.ecdsa256.privateKey, public_key: CA_KEYS.ecdsa256.publicKey },
  });
  if (ca.status !== 204) throw new Error(`CA: ${ca.status} ${ca.text}`);
  const role = await vault("POST", `${MOUNT}/roles/${SAMPLE}`, {
    body: { key_type: "ca", allow_user_certificates: true, allowed_users: "*", default_user: "ops" },
  });
  if (role.status !== 204) throw new Error(`role: ${role.status} ${role.text}`);
  await writePolicy(SAMPLE, { "ssh/roles/*": ["read"] });
  // One token whose policy grants everything (sudo included) and denies exactly the
  // canonical ACL path of every route and operation.
  const rules: Record<string, string[]> = { "*": CAPABILITIES.filter((c) => c !== "deny") };
  for (const cell of ALL_CELLS) {
    const p = aclPath(cell.path, cell.operation);
    denied.add(p);
    rules[p] = ["deny"];
  }
  await writePolicy("matrix-deny", rules);
  denyToken = await tokenFor("matrix-deny");
  for (const cell of ALL_CELLS) await lackingToken(requiredCapability(cell.route, cell.operation));
});

/** Capabilities of the token that lacks `needed` (see lackingToken). */
function lackingCaps(needed: Capability): Set<Capability> {
  return new Set(CAPABILITIES.filter((c) => c !== "deny" && c !== needed && !(needed === "patch" && c === "update")));
}

function expected(cell: Cell, variant: Variant, kind: TokenKind): number | "skip" {
  const unauthenticated = variant.canonical && (cell.route.unauthenticated ?? []).includes(cell.operation);
  // S16a: the canonical spelling of an unauthenticated operation is served to anyone.
  if (unauthenticated) return "skip";
  if (kind === "root") return variant.canonical ? "skip" : variant.refusal;
  if (kind === "no token" || kind === "bad token") return 403;
  if (kind === "lacks the capability") {
    // A spelling that routes nowhere needs the operation's plain capability (S6: `update`
    // for writes), which this token may hold: then it is refused as unsupported, not denied.
    const caps = lackingCaps(requiredCapability(cell.route, cell.operation));
    const needed = requiredCapability(variant.canonical ? cell.route : undefined, cell.operation);
    const allowed = caps.has(needed) || (needed === "patch" && caps.has("update"));
    return allowed ? (variant.canonical ? "skip" : variant.refusal) : 403;
  }
  const decoded = decodeURIComponent(variant.raw);
  if (denied.has(aclPath(decoded, cell.operation))) return 403;
  return variant.canonical ? "skip" : variant.refusal;
}

async function tokenOf(kind: TokenKind, cell: Cell): Promise<string | null> {
  switch (kind) {
    case "no token":
      return null;
    case "bad token":
      return "hvs.not-a-token-of-this-service";
    case "lacks the capability":
      return lackingToken(requiredCapability(cell.route, cell.operation));
    case "denied exactly this path":
      return denyToken;
    case "root":
      return env.ROOT_TOKEN;
  }
}

const KINDS: TokenKind[] = ["no token", "bad token", "lacks the capability", "denied exactly this path", "root"];

/** A body a handler would accept, so that a request that wrongly got through would succeed. */
const BODY = { policy: '{"path":{"x/*":{"capabilities":["read"]}}}', key_type: "ca", allow_user_certificates: true };

describe("the /v1 authorization matrix (S2b, S16a), generated from the route table", () => {
  it("covers every route of the table, including the unauthenticated ones", () => {
    expect(ALL_CELLS.length).toBeGreaterThan(20);
    expect(ALL_CELLS.some((c) => c.route.unauthenticated?.includes(c.operation))).toBe(true);
    expect(ALL_CELLS.some((c) => c.route.normalisedParams)).toBe(true);
  });

  for (const cell of ALL_CELLS) {
    it(`${cell.operation} ${cell.route.mounted ? `<mount>/${cell.route.pattern}` : cell.route.pattern}`, async () => {
      const before = await snapshot();
      const checks: Promise<string | null>[] = [];
      for (const variant of variants(cell)) {
        for (const kind of KINDS) {
          const want = expected(cell, variant, kind);
          if (want === "skip") continue;
          checks.push(
            (async () => {
              const token = await tokenOf(kind, cell);
              const query = cell.operation === "list" ? "?list=true" : "";
              const write = cell.operation === "update" || cell.operation === "patch";
              // Not the vault() helper: it would drop the leading slash of a variant.
              const res = await workerRequest(`http://keyway.test/v1/${variant.raw}${query}`, {
                method: METHOD[cell.operation],
                headers: {
                  ...(token ? { "X-Vault-Token": token } : {}),
                  ...(write ? { "Content-Type": "application/json" } : {}),
                },
                body: write ? JSON.stringify(BODY) : undefined,
              });
              const label = `${METHOD[cell.operation]} /v1/${variant.raw}${query} [${variant.name}] with ${kind}`;
              if (res.status >= 200 && res.status < 300) return `${label}: ${res.status} (a 2xx for a refused request)`;
              if (res.status !== want) return `${label}: ${res.status} ${res.text}, expected ${want}`;
              const message =
                want === 403 ? "permission denied" : want === 404 ? "unsupported path" : "not in canonical form";
              if (!JSON.stringify(res.json?.errors ?? []).includes(message)) return `${label}: body ${res.text}`;
              return null;
            })(),
          );
        }
      }
      const failures = (await Promise.all(checks)).filter((f): f is string => f !== null);
      expect(failures).toEqual([]);
      expect(await snapshot()).toBe(before);
    });
  }
});
