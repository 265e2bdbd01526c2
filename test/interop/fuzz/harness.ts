/**
 * Property-based fuzzing of both APIs against the real Worker (issue 14, "prove the class
 * is gone"; decisions B3, B9, S2b, S13): fast-check generates requests — methods, paths
 * built from every route template with hostile segments and spellings, query strings,
 * bodies (JSON of any shape, JSON:API documents, Vault fields of wrong types, malformed
 * text) and credentials — and each answer must be
 * - never a 5xx,
 * - for a 4xx, in that API's error format: /v1 Vault's `{"errors":["…"]}` (strings;
 *   `[]` for a bare 404), /api/v2 JSON:API's `{"errors":[{"status":"4xx","title":…}]}`
 *   with `application/vnd.api+json`,
 * - and answered at all (a request that times out means the service stopped answering).
 * The OTP race check issues OTPs and has several callers verify each at once: exactly one
 * may succeed (S13).
 *
 * Used by test/interop/fuzz/fuzz.test.ts: a seed-fixed slice in the normal run, the full
 * run with `npm run fuzz` (KEYWAY_FUZZ=full).
 */
import fc from "fast-check";

/** Tokens and names the generators draw from (created by seedFixtures). */
export interface FuzzFixtures {
  url: string;
  rootToken: string;
  adminToken: string;
  /** /v1 token with a narrow policy. */
  limitedToken: string;
  /** /api/v2 user token of the organization's owners team. */
  ownerToken: string;
  organizationToken: string;
  org: string;
  caRole: string;
  otpRole: string;
  policy: string;
}

export interface FuzzRequest {
  api: "v1" | "v2";
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface FuzzFailure {
  request: FuzzRequest;
  status: number | "timeout" | "network error";
  why: string;
  body: string;
}

export interface FuzzStats {
  sent: number;
  serverErrors: number;
  badFormat: number;
  timeouts: number;
  /** Answers made by wrangler's dev proxy, not the Worker (see isDevProxyFailure). */
  proxyFailures: number;
  /** Connections to the local server that failed and were retried once (not timeouts). */
  connectionRetries: number;
  failures: FuzzFailure[];
}

/**
 * wrangler's dev proxy (ProxyWorker, in front of the Worker under `npm start` and
 * unstable_startWorker) answers 503 "Your worker restarted mid-request" itself when its
 * loopback connection to the Worker's runtime fails (kj "Connection reset by peer",
 * "stream disconnected prematurely"), which happens now and then under concurrent load.
 * It takes every such network error for a restart because it compares the request's full
 * URL with the runtime's origin (templates/startDevWorker/ProxyWorker.ts, wrangler
 * 4.86.0). The Worker did not answer: every answer of the Worker carries X-Request-Id.
 * Counted and reported apart; a run fails when they exceed 1% (the service stops answering).
 */
export function isDevProxyFailure(status: number, headers: Headers, body: string): boolean {
  return status === 503 && !headers.has("x-request-id") && body.startsWith("Your worker restarted mid-request");
}

/** Areas other developers own, whose known 5xx the CI slice may leave out (see fuzz.test.ts). */
export interface KnownIssueSwitches {
  /** Request bodies nested deeper than B9's 64 (JSON depth bound). */
  deepJson: boolean;
  /** `page[number]` beyond B9's 100,000. */
  hugePageNumber: boolean;
}

// ---------------------------------------------------------------- route templates

/** /v1 paths (mount routes under `ssh`): every pattern of src/ssh/routes.ts. */
const V1_TEMPLATES = [
  "auth/token/create",
  "auth/token/lookup-self",
  "auth/token/lookup",
  "auth/token/renew-self",
  "auth/token/revoke-self",
  "auth/token/revoke",
  "sys/auth",
  "sys/leases/revoke",
  "sys/capabilities-self",
  "sys/policies/acl",
  "sys/policies/acl/:policy",
  "sys/mounts/:mount/tune",
  "sys/rotate/rewrap",
  "identity/entity",
  "identity/entity/id",
  "identity/entity/id/:id",
  "identity/entity/name/:name",
  "identity/entity-alias",
  ":mount/config/ca",
  ":mount/public_key",
  ":mount/config/zeroaddress",
  ":mount/roles",
  ":mount/roles/:role",
  ":mount/sign/:role",
  ":mount/issue/:role",
  ":mount/creds/:otprole",
  ":mount/lookup",
  ":mount/verify",
  ":mount/tidy/dynamic-keys",
  "nowhere/at/all",
];

/** /api/v2 paths: every route of src/nocode (Hono's patterns). */
const V2_TEMPLATES = [
  "ping",
  "account/details",
  "admin/terraform-versions",
  "admin/terraform-versions/:id",
  "admin/users",
  "organizations",
  "organizations/:org",
  "organizations/:org/agent-pools",
  "organizations/:org/authentication-token",
  "organizations/:org/no-code-modules",
  "organizations/:org/projects",
  "organizations/:org/registry-modules",
  "organizations/:org/registry-modules/private/:org/:name/:provider",
  "organizations/:org/registry-modules/private/:org/:name/:provider/version",
  "organizations/:org/registry-modules/private/:org/:name/:provider/versions",
  "organizations/:org/teams",
  "organizations/:org/workspaces/:name",
  ":org/workspaces/:name/runs/:id",
  "agent-pools/:id",
  "no-code-modules/:id",
  "no-code-modules/:id/versions/:version/module-variables",
  "no-code-modules/:id/workspaces",
  "plans/:id",
  "plans/:id/json-output",
  "projects/:id",
  "registry-modules/:id",
  "registry-modules/:org/:name/:provider/versions",
  "runs/:id",
  "runs/:id/actions/apply",
  "runs/:id/actions/discard",
  "runs/:id/plan",
  "state-versions/:id",
  "teams/:id",
  "teams/:id/authentication-token",
  "teams/:id/relationships/users",
  "uploads/:id",
  "users/:id/authentication-tokens",
  "workspaces/:id",
  "workspaces/:id/runs",
  "workspaces/:id/vars",
  "workspaces/:id/vars/:id",
  "nowhere",
];

// ---------------------------------------------------------------- generators

/** Hostile path segments, sent percent-encoded unless they are meant raw. */
const hostileSegment = fc.oneof(
  fc.constantFrom("", ".", "..", "%2F", "%2f", "%00", "%", "%zz", "%C0%AF", "a%20b", "*", "+", "~", "default", "root", "x".repeat(300)),
  fc.string({ maxLength: 40 }).map(encodeURIComponent),
  fc.string({ unit: "grapheme", maxLength: 12 }).map(encodeURIComponent),
  fc.integer().map(String),
);

function segmentFor(name: string, f: FuzzFixtures): fc.Arbitrary<string> {
  const known: Record<string, string[]> = {
    mount: ["ssh"],
    role: [f.caRole, f.otpRole],
    otprole: [f.otpRole],
    policy: [f.policy, "default", "root"],
    org: [f.org],
  };
  return fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...(known[name] ?? ["x"])) }, { weight: 2, arbitrary: hostileSegment });
}

/** A path from a template, then maybe respelled (S2b: trailing slash, `//`, case, `%2F`). */
function pathArb(templates: string[], f: FuzzFixtures): fc.Arbitrary<string> {
  return fc
    .tuple(fc.constantFrom(...templates), fc.infiniteStream(fc.nat()), fc.constantFrom("none", "none", "none", "trailing", "double", "upper", "encoded"))
    .chain(([template, , spelling]) => {
      const parts = template.split("/");
      const segments = parts.map((p) => (p.startsWith(":") ? segmentFor(p.slice(1), f) : fc.constant(p)));
      return fc.tuple(...segments).map((filled) => {
        let path = filled.join("/");
        if (spelling === "trailing") path += "/";
        if (spelling === "double") path = path.replace("/", "//");
        if (spelling === "upper") path = path.toUpperCase();
        if (spelling === "encoded") path = path.replace("/", "%2F");
        return path;
      });
    });
}

const queryValue = fc.oneof(
  fc.constantFrom("true", "false", "1", "0", "-1", "", "yes", "t", "1e309", "NaN", "99999999999999999999", "null"),
  fc.string({ maxLength: 30 }),
  fc.integer().map(String),
);

function queryArb(known: KnownIssueSwitches): fc.Arbitrary<string> {
  const keys = ["list", "page[size]", "filter[provider]", "filter[registry_name]", "filter[version]", "include", "q", "search[version]", "domain", "x"];
  const page = known.hugePageNumber
    ? fc.tuple(fc.constant("page[number]"), fc.oneof(queryValue, fc.bigInt({ min: 100_001n, max: 10n ** 30n }).map(String)))
    : fc.tuple(fc.constant("page[number]"), fc.oneof(fc.integer({ min: -5, max: 100_000 }).map(String), fc.constantFrom("", "x", "1.5", "-0")));
  const pair = fc.oneof(fc.tuple(fc.oneof(fc.constantFrom(...keys), fc.string({ maxLength: 10 })), queryValue), page);
  return fc.array(pair, { maxLength: 4 }).map((pairs) => (pairs.length === 0 ? "" : `?${new URLSearchParams(pairs).toString()}`));
}

/** Any JSON value, shallow enough for B9's bound unless the deep-JSON switch is on. */
const anyJson = fc.jsonValue({ maxDepth: 4 });

const V1_FIELDS = [
  "public_key", "valid_principals", "ttl", "max_ttl", "key_type", "key_bits", "cert_type", "key_id", "extensions", "critical_options",
  "ip", "username", "otp", "policies", "no_parent", "entity_id", "display_name", "num_uses", "period", "renewable", "explicit_max_ttl",
  "token", "accessor", "increment", "policy", "paths", "path", "lease_id", "name", "metadata", "allowed_users", "default_user",
  "cidr_list", "default_lease_ttl", "max_lease_ttl", "roles", "private_key", "generate_signing_key", "algorithm_signer", "allow_user_certificates",
];
const V2_ATTRIBUTES = [
  "name", "email", "username", "enabled", "version-pin", "variable-options", "vars", "key", "value", "sensitive", "hcl", "category",
  "description", "auto-apply", "no-code", "registry-name", "provider", "namespace", "organization-access", "visibility", "comment",
];

function fieldsArb(names: string[]): fc.Arbitrary<Record<string, unknown>> {
  return fc.dictionary(fc.oneof(fc.constantFrom(...names), fc.string({ maxLength: 12 })), anyJson, { maxKeys: 6 });
}

/** JSON nested deeper than B9's 64: bare, or as the value of a field the handler reads. */
function deepJson(api: "v1" | "v2"): fc.Arbitrary<string> {
  const field = api === "v1" ? fc.constantFrom(...V1_FIELDS) : fc.constantFrom(...V2_ATTRIBUTES);
  return fc.tuple(fc.integer({ min: 65, max: 30_000 }), fc.constantFrom("bare", "field"), field, fc.constantFrom("[", '{"a":')).map(([depth, where, name, open]) => {
    const close = open === "[" ? "]" : "}";
    const deep = `${open.repeat(depth)}1${close.repeat(depth)}`;
    if (where === "bare") return deep;
    return api === "v1" ? `{"${name}":${deep}}` : `{"data":{"type":"vars","attributes":{"${name}":${deep}}}}`;
  });
}

function bodyArb(api: "v1" | "v2", known: KnownIssueSwitches): fc.Arbitrary<string | undefined> {
  const structured =
    api === "v1"
      ? fieldsArb(V1_FIELDS).map((o) => JSON.stringify(o))
      : fc
          .record({
            data: fc.oneof(
              fc.record({ type: fc.constantFrom("organizations", "teams", "users", "vars", "workspaces", "no-code-modules", "x"), attributes: fieldsArb(V2_ATTRIBUTES) }),
              fc.array(fc.record({ type: fc.constantFrom("users", "x"), id: fc.string({ maxLength: 10 }) }), { maxLength: 3 }),
              anyJson,
            ),
          })
          .map((o) => JSON.stringify(o));
  const options: fc.Arbitrary<string | undefined>[] = [
    fc.constant(undefined),
    structured,
    structured,
    anyJson.map((v) => JSON.stringify(v)),
    fc.string({ maxLength: 60 }),
    fc.constantFrom("{", "{}", "[]", "null", '{"a":', "\u0000", '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{}}}'),
  ];
  if (known.deepJson) options.push(deepJson(api));
  return fc.oneof(...options);
}

function v1Headers(f: FuzzFixtures): fc.Arbitrary<Record<string, string>> {
  return fc.constantFrom<Record<string, string>>(
    {},
    { "X-Vault-Token": f.rootToken },
    { "X-Vault-Token": f.rootToken },
    { Authorization: `Bearer ${f.rootToken}` },
    { "X-Vault-Token": f.limitedToken },
    { "X-Vault-Token": "hvs.not-a-token" },
    { "X-Vault-Token": f.adminToken },
  );
}

function v2Headers(f: FuzzFixtures): fc.Arbitrary<Record<string, string>> {
  return fc.constantFrom<Record<string, string>>(
    {},
    { Authorization: `Bearer ${f.ownerToken}` },
    { Authorization: `Bearer ${f.ownerToken}` },
    { Authorization: `Bearer ${f.organizationToken}` },
    { Authorization: `Bearer ${f.adminToken}` },
    { Authorization: "Bearer AAAAAAAAAAAAAA.atlasv1.not-a-token" },
    { Authorization: `Bearer ${f.rootToken}` },
  );
}

/** One generated request to either API. */
export function requestArb(f: FuzzFixtures, known: KnownIssueSwitches): fc.Arbitrary<FuzzRequest> {
  const methods = fc.constantFrom("GET", "GET", "POST", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS");
  const v1 = fc
    .record({ method: methods, path: pathArb(V1_TEMPLATES, f), query: queryArb(known), headers: v1Headers(f), body: bodyArb("v1", known) })
    .map(
      (r): FuzzRequest => ({ api: "v1", method: r.method, path: `/v1/${r.path}${r.query}`, headers: r.headers, body: hasBody(r.method) ? r.body : undefined }),
    );
  const v2 = fc
    .record({ method: methods, path: pathArb(V2_TEMPLATES, f), query: queryArb(known), headers: v2Headers(f), body: bodyArb("v2", known) })
    .map(
      (r): FuzzRequest => ({
        api: "v2",
        method: r.method,
        path: `/api/v2/${r.path}${r.query}`,
        headers: { ...r.headers, ...(r.body !== undefined && hasBody(r.method) ? { "Content-Type": "application/vnd.api+json" } : {}) },
        body: hasBody(r.method) ? r.body : undefined,
      }),
    );
  return fc.oneof(v1, v2);
}

const hasBody = (method: string) => method !== "GET" && method !== "HEAD";

// ---------------------------------------------------------------- checks

/** Why an answer breaks the contract, or null when it is fine. */
export function contractViolation(request: FuzzRequest, status: number, contentType: string, body: string): string | null {
  if (status >= 500) return `status ${status}`;
  if (status < 400 || request.method === "HEAD") return null;
  // The URL parser resolves `..` segments before sending (`/v1/../x` is `/x`): judge the
  // answer by the path the Worker received. Outside /v1, the root not-found is JSON:API's.
  const received = new URL(request.path, "http://x").pathname;
  const api = received === "/v1" || received.startsWith("/v1/") ? "v1" : "v2";
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return "error body is not JSON";
  }
  const errors = (parsed as { errors?: unknown })?.errors;
  if (!Array.isArray(errors)) return "error body has no errors array";
  if (api === "v1") {
    if (!contentType.startsWith("application/json")) return `content type ${contentType}`;
    if (!errors.every((e) => typeof e === "string")) return "Vault errors must be strings";
    if (errors.length === 0 && status !== 404) return "empty errors outside a 404";
    return null;
  }
  if (!contentType.startsWith("application/vnd.api+json")) return `content type ${contentType}`;
  if (errors.length === 0) return "JSON:API errors is empty";
  for (const e of errors as Record<string, unknown>[]) {
    if (typeof e !== "object" || e === null) return "JSON:API error is not an object";
    if (e.status !== String(status)) return `JSON:API error status ${String(e.status)} differs from ${status}`;
    if (typeof e.title !== "string") return "JSON:API error has no title";
  }
  return null;
}

/** Send one request; the answer's status, content type and body, or why there was none. */
async function send(f: FuzzFixtures, r: FuzzRequest, timeoutMs: number) {
  try {
    const res = await fetch(`${f.url}${r.path}`, { method: r.method, headers: r.headers, body: r.body, signal: AbortSignal.timeout(timeoutMs) });
    const body = await res.text();
    if (isDevProxyFailure(res.status, res.headers, body)) return { status: "dev proxy" as const, contentType: "", body };
    return { status: res.status, contentType: res.headers.get("content-type") ?? "", body };
  } catch (err) {
    const name = (err as Error).name;
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const detail = `${String(err)}${cause ? ` (${cause.code ?? ""} ${cause.message ?? ""})` : ""}`;
    return { status: name === "TimeoutError" || name === "AbortError" ? ("timeout" as const) : ("network error" as const), contentType: "", body: detail };
  }
}

/** Send `count` generated requests, `concurrency` at a time; collects every violation. */
export async function runApiFuzz(
  f: FuzzFixtures,
  options: { count: number; seed: number; concurrency: number; known: KnownIssueSwitches; timeoutMs?: number },
): Promise<FuzzStats> {
  const stats: FuzzStats = { sent: 0, serverErrors: 0, badFormat: 0, timeouts: 0, proxyFailures: 0, connectionRetries: 0, failures: [] };
  const requests = fc.sample(requestArb(f, options.known), { numRuns: options.count, seed: options.seed });
  let next = 0;
  const worker = async () => {
    while (next < requests.length) {
      const r = requests[next++]!;
      let answer = await send(f, r, options.timeoutMs ?? 30_000);
      stats.sent++;
      // A connection the local server reset (keep-alive races of the dev proxy under load)
      // is retried once; a second failure, or any timeout, counts as not answering.
      if (answer.status === "network error") {
        stats.connectionRetries++;
        answer = await send(f, r, options.timeoutMs ?? 30_000);
      }
      if (answer.status === "dev proxy") {
        stats.proxyFailures++;
        continue;
      }
      if (typeof answer.status !== "number") {
        stats.timeouts++;
        stats.failures.push({ request: r, status: answer.status, why: "no answer", body: answer.body });
        continue;
      }
      const why = contractViolation(r, answer.status, answer.contentType, answer.body);
      if (!why) continue;
      if (answer.status >= 500) stats.serverErrors++;
      else stats.badFormat++;
      stats.failures.push({ request: r, status: answer.status, why, body: answer.body.slice(0, 300) });
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return stats;
}

// ---------------------------------------------------------------- OTP races

export interface OtpRaceStats {
  otps: number;
  attempts: number;
  wonTwice: number;
  /** OTPs no caller won although every attempt was answered by the Worker. */
  neverWon: number;
  /**
   * Attempts lost in transport — answered by the dev proxy itself (isDevProxyFailure) or a
   * kept-alive connection the local server closed — whose outcome is unknown.
   */
  proxyFailures: number;
  /** OTPs nobody was seen to win because some attempt was lost in the dev proxy. */
  indeterminate: number;
  otherAnswers: number;
}

/**
 * Issue `otps` OTPs, then have `callers` concurrent callers verify each (all callers of one
 * OTP at once, `concurrency` OTPs in flight): exactly one may succeed (S13).
 */
export async function runOtpRaces(f: FuzzFixtures, options: { otps: number; callers: number; concurrency: number }): Promise<OtpRaceStats> {
  const stats: OtpRaceStats = { otps: 0, attempts: 0, wonTwice: 0, neverWon: 0, proxyFailures: 0, indeterminate: 0, otherAnswers: 0 };
  let issued = 0;
  const worker = async () => {
    while (issued < options.otps) {
      issued++;
      let creds: Response;
      try {
        creds = await fetch(`${f.url}/v1/ssh/creds/${f.otpRole}`, {
          method: "POST",
          headers: { "X-Vault-Token": f.rootToken, "Content-Type": "application/json" },
          body: JSON.stringify({ ip: "10.1.2.3" }),
        });
      } catch {
        stats.proxyFailures++;
        issued--;
        continue;
      }
      if (creds.status !== 200) {
        const text = await creds.text();
        if (isDevProxyFailure(creds.status, creds.headers, text)) {
          stats.proxyFailures++;
          issued--;
          continue;
        }
        throw new Error(`creds answered ${creds.status}: ${text}`);
      }
      const otp = ((await creds.json()) as { data: { key: string } }).data.key;
      stats.otps++;
      const answers = await Promise.all(
        Array.from({ length: options.callers }, async () => {
          try {
            const res = await fetch(`${f.url}/v1/ssh/verify`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ otp }) });
            const text = await res.text();
            return { status: res.status, text, proxy: isDevProxyFailure(res.status, res.headers, text) };
          } catch (err) {
            // The local server closed a kept-alive connection as it was reused ("other side
            // closed"): the attempt's outcome is unknown, like one lost in the dev proxy.
            return { status: 0, text: String(err), proxy: true };
          }
        }),
      );
      stats.attempts += answers.length;
      const proxied = answers.filter((a) => a.proxy).length;
      stats.proxyFailures += proxied;
      const wins = answers.filter((a) => a.status === 200).length;
      if (wins > 1) stats.wonTwice++;
      if (wins === 0 && proxied === 0) stats.neverWon++;
      if (wins === 0 && proxied > 0) stats.indeterminate++;
      stats.otherAnswers += answers.filter((a) => !a.proxy && a.status !== 200 && !(a.status === 400 && a.text.includes("OTP not found"))).length;
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return stats;
}

// ---------------------------------------------------------------- fixtures

async function call(url: string, method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { "Content-Type": path.startsWith("/api/") ? "application/vnd.api+json" : "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`fixture ${method} ${path}: ${res.status} ${text}`);
  // biome-ignore lint/suspicious/noExplicitAny: fixture answers are walked ad hoc
  return (text ? JSON.parse(text) : null) as any;
}

/** Create what the generators point at: a CA, a CA role, an OTP role, a policy and token, an organization with an owner and its token. */
export async function seedFixtures(keyway: { url: string; rootToken: string; adminToken: string }): Promise<FuzzFixtures> {
  const { url, rootToken, adminToken } = keyway;
  const root = { "X-Vault-Token": rootToken };
  const admin = { Authorization: `Bearer ${adminToken}` };
  await call(url, "POST", "/v1/ssh/config/ca", root, { key_type: "ed25519" });
  await call(url, "POST", "/v1/ssh/roles/web", root, { key_type: "ca", allow_user_certificates: true, allowed_users: "*", ttl: "1h" });
  await call(url, "POST", "/v1/ssh/roles/otp-role", root, { key_type: "otp", default_user: "ubuntu", cidr_list: "10.0.0.0/8" });
  await call(url, "POST", "/v1/sys/policies/acl/dev", root, {
    policy: JSON.stringify({ path: { "ssh/sign/*": { capabilities: ["create", "update"] }, "ssh/sign/admin": { capabilities: ["deny"] } } }),
  });
  const limited = await call(url, "POST", "/v1/auth/token/create", root, { policies: ["dev"], ttl: "2h" });
  const org = `fuzz-${crypto.randomUUID().slice(0, 8)}`;
  const created = await call(url, "POST", "/api/v2/organizations", admin, { data: { type: "organizations", attributes: { name: org, email: `a@${org}.example.test` } } });
  const ownersTeam = created.data.relationships["owners-team"].data.id as string;
  const user = await call(url, "POST", "/api/v2/admin/users", admin, { data: { type: "users", attributes: { username: `${org}-owner`, email: `o@${org}.example.test` } } });
  const userToken = await call(url, "POST", `/api/v2/users/${user.data.id}/authentication-tokens`, admin, { data: { type: "authentication-tokens" } });
  await call(url, "POST", `/api/v2/teams/${ownersTeam}/relationships/users`, admin, { data: [{ type: "users", id: `${org}-owner` }] });
  const orgToken = await call(url, "POST", `/api/v2/organizations/${org}/authentication-token`, admin);
  return {
    url,
    rootToken,
    adminToken,
    limitedToken: limited.auth.client_token,
    ownerToken: userToken.data.attributes.token,
    organizationToken: orgToken.data.attributes.token,
    org,
    caRole: "web",
    otpRole: "otp-role",
    policy: "dev",
  };
}
