/**
 * The requests the fuzz suite sends (see ./harness.ts): fast-check generators of
 * methods, paths built from every route template of both APIs with hostile segments and
 * spellings (S2b), query strings, bodies (JSON of any shape, JSON:API documents, Vault
 * fields of wrong types, JSON deeper than B9's bound, malformed text) and credentials;
 * B19: every unauthenticated path with every query parameter it reads, and the console's
 * forms (sign-in and every POST under /app) with hostile field values.
 */
import fc from "fast-check";
import type { FuzzFixtures } from "./fixtures";

export interface FuzzRequest {
  api: "v1" | "v2" | "app";
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
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
  "organizations/:org/sso-configuration",
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
  fc.constantFrom(
    "",
    ".",
    "..",
    "%2F",
    "%2f",
    "%00",
    "%",
    "%zz",
    "%C0%AF",
    "a%20b",
    "*",
    "+",
    "~",
    "default",
    "root",
    "x".repeat(300),
  ),
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
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...(known[name] ?? ["x"])) },
    { weight: 2, arbitrary: hostileSegment },
  );
}

/** A path from a template, then maybe respelled (S2b: trailing slash, `//`, case, `%2F`). */
function pathArb(templates: string[], f: FuzzFixtures): fc.Arbitrary<string> {
  return fc
    .tuple(
      fc.constantFrom(...templates),
      fc.infiniteStream(fc.nat()),
      fc.constantFrom("none", "none", "none", "trailing", "double", "upper", "encoded"),
    )
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
  const keys = [
    "list",
    "page[size]",
    "filter[provider]",
    "filter[registry_name]",
    "filter[version]",
    "include",
    "q",
    "search[version]",
    "domain",
    "x",
  ];
  const page = known.hugePageNumber
    ? fc.tuple(
        fc.constant("page[number]"),
        fc.oneof(queryValue, fc.bigInt({ min: 100_001n, max: 10n ** 30n }).map(String)),
      )
    : fc.tuple(
        fc.constant("page[number]"),
        fc.oneof(fc.integer({ min: -5, max: 100_000 }).map(String), fc.constantFrom("", "x", "1.5", "-0")),
      );
  const pair = fc.oneof(fc.tuple(fc.oneof(fc.constantFrom(...keys), fc.string({ maxLength: 10 })), queryValue), page);
  return fc
    .array(pair, { maxLength: 4 })
    .map((pairs) => (pairs.length === 0 ? "" : `?${new URLSearchParams(pairs).toString()}`));
}

/** Any JSON value, shallow enough for B9's bound unless the deep-JSON switch is on. */
const anyJson = fc.jsonValue({ maxDepth: 4 });

const V1_FIELDS = [
  "public_key",
  "valid_principals",
  "ttl",
  "max_ttl",
  "key_type",
  "key_bits",
  "cert_type",
  "key_id",
  "extensions",
  "critical_options",
  "ip",
  "username",
  "otp",
  "policies",
  "no_parent",
  "entity_id",
  "display_name",
  "num_uses",
  "period",
  "renewable",
  "explicit_max_ttl",
  "token",
  "accessor",
  "increment",
  "policy",
  "paths",
  "path",
  "lease_id",
  "name",
  "metadata",
  "allowed_users",
  "default_user",
  "cidr_list",
  "default_lease_ttl",
  "max_lease_ttl",
  "roles",
  "private_key",
  "generate_signing_key",
  "algorithm_signer",
  "allow_user_certificates",
];
const V2_ATTRIBUTES = [
  "name",
  "email",
  "username",
  "enabled",
  "version-pin",
  "variable-options",
  "vars",
  "key",
  "value",
  "sensitive",
  "hcl",
  "category",
  "description",
  "auto-apply",
  "no-code",
  "registry-name",
  "provider",
  "namespace",
  "organization-access",
  "visibility",
  "comment",
];

function fieldsArb(names: string[]): fc.Arbitrary<Record<string, unknown>> {
  return fc.dictionary(fc.oneof(fc.constantFrom(...names), fc.string({ maxLength: 12 })), anyJson, { maxKeys: 6 });
}

/** JSON nested deeper than B9's 64: bare, or as the value of a field the handler reads. */
function deepJson(api: "v1" | "v2"): fc.Arbitrary<string> {
  const field = api === "v1" ? fc.constantFrom(...V1_FIELDS) : fc.constantFrom(...V2_ATTRIBUTES);
  return fc
    .tuple(fc.integer({ min: 65, max: 30_000 }), fc.constantFrom("bare", "field"), field, fc.constantFrom("[", '{"a":'))
    .map(([depth, where, name, open]) => {
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
              fc.record({
                type: fc.constantFrom("organizations", "teams", "users", "vars", "workspaces", "no-code-modules", "x"),
                attributes: fieldsArb(V2_ATTRIBUTES),
              }),
              fc.array(fc.record({ type: fc.constantFrom("users", "x"), id: fc.string({ maxLength: 10 }) }), {
                maxLength: 3,
              }),
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
    fc.constantFrom(
      "{",
      "{}",
      "[]",
      "null",
      '{"a":',
      "\u0000",
      '{"__proto__":{"x":1}}',
      '{"constructor":{"prototype":{}}}',
    ),
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

// ---------------------------------------------------------------- B19: side doors and forms

/** Text a person (or an attacker) may type into a field: control characters, line breaks, Unicode, long. */
const hostileText = fc.oneof(
  fc.constantFrom(
    "",
    " ",
    "\n",
    "a\nb",
    "a\r\nb",
    "\t",
    "\u0000",
    "\u007f",
    "\u2028",
    "\ud800",
    "é",
    "%00",
    "<script>",
    '"',
    "x".repeat(600),
    "1".repeat(30),
    "-1",
    "1e309",
    "true",
  ),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.string({ unit: "binary", maxLength: 20 }),
);

/** A value for a status-code parameter of sys/health (B19: an integer in 200–599, else 400). */
const statusCodeValue = fc.oneof(
  fc.constantFrom(
    "200",
    "204",
    "205",
    "304",
    "429",
    "473",
    "503",
    "599",
    "600",
    "199",
    "100",
    "0",
    "-200",
    "2e2",
    "0x1f4",
    " 204",
    "204 ",
    "",
  ),
  fc.integer({ min: -1000, max: 10_000 }).map(String),
  hostileText,
);

const booleanValue = fc.oneof(fc.constantFrom("true", "false", "1", "0", "t", "", "TRUE", "yes"), hostileText);

/** Values of the signed links' parameters (B23): right-looking, wrong, and hostile. */
const expiresValue = fc.oneof(
  fc.integer({ min: 0, max: 2 ** 40 }).map(String),
  fc.constantFrom("", "0", "01", "9".repeat(13), "1e10", "-1", "NaN"),
  hostileText,
);
const signatureValue = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9_-]{43}$/),
  fc.stringMatching(/^[0-9a-f]{64}$/),
  hostileText,
);
const viewValue = fc.oneof(
  fc.tuple(expiresValue, signatureValue).map(([e, sig]) => `${e}.${sig}`),
  hostileText,
);

/** Every unauthenticated path of the Worker, with every query parameter it reads. */
function unauthenticatedArb(f: FuzzFixtures): fc.Arbitrary<FuzzRequest> {
  const segment = (known: string[]) => fc.oneof(fc.constantFrom(...known), hostileSegment);
  const query = (params: Record<string, fc.Arbitrary<string>>) =>
    fc
      .subarray(Object.keys(params))
      .chain((keys) =>
        fc.tuple(
          fc.tuple(...keys.map((k) => params[k]!.map((value) => [k, value] as [string, string]))),
          fc.array(fc.tuple(fc.string({ maxLength: 10 }), queryValue), { maxLength: 1 }),
        ),
      )
      .map(([pairs, extra]) => {
        const all = [...pairs, ...extra];
        return all.length === 0 ? "" : `?${new URLSearchParams(all).toString()}`;
      });
  const read = fc.constantFrom("GET", "GET", "GET", "HEAD", "POST", "OPTIONS");
  const request = (
    api: FuzzRequest["api"],
    methods: fc.Arbitrary<string>,
    path: fc.Arbitrary<string>,
    q: fc.Arbitrary<string>,
    body: fc.Arbitrary<string | undefined> = fc.constant(undefined),
    headers: fc.Arbitrary<Record<string, string>> = fc.constant({}),
  ) =>
    fc.record({ method: methods, path, q, body, headers }).map(
      (r): FuzzRequest => ({
        api,
        method: r.method,
        path: `${r.path}${r.q}`,
        headers: r.headers,
        body: hasBody(r.method) ? r.body : undefined,
      }),
    );
  const healthCodes = {
    standbyok: booleanValue,
    perfstandbyok: booleanValue,
    activecode: statusCodeValue,
    standbycode: statusCodeValue,
    sealedcode: statusCodeValue,
    uninitcode: statusCodeValue,
    drsecondarycode: statusCodeValue,
    performancestandbycode: statusCodeValue,
  };
  // Header values must be bytes a client can send: printable ASCII of the hostile text.
  const etag = fc.oneof(
    fc.constant({}),
    hostileText.map((t) => ({ "If-None-Match": t.replace(/[^\x20-\x7e]/g, "") })),
  );
  return fc.oneof(
    request("v1", fc.constantFrom("GET", "HEAD", "GET", "POST"), fc.constant("/v1/sys/health"), query(healthCodes)),
    request("v1", read, fc.constantFrom("/v1/sys/seal-status", "/v1/sys/leader"), query({})),
    request("v1", read, fc.constant("/v1/sys/internal/specs/openapi"), query({ generic: booleanValue })),
    request(
      "v1",
      read,
      segment(["ssh"]).map((m) => `/v1/${m}/public_key`),
      query({}),
    ),
    request(
      "v1",
      read,
      fc.tuple(segment(["ssh"]), segment(["default", "x"])).map(([m, r]) => `/v1/${m}/issuer/${r}/public_key`),
      query({}),
    ),
    request(
      "v1",
      read,
      segment(["ssh"]).map((m) => `/v1/${m}/trusted_keys`),
      query({}),
      undefined,
      etag,
    ),
    request(
      "v1",
      read,
      segment(["ssh"]).map((m) => `/v1/${m}/known_hosts`),
      query({ domain: fc.oneof(fc.domain(), hostileText) }),
      undefined,
      etag,
    ),
    request(
      "v1",
      read,
      segment(["ssh"]).map((m) => `/v1/${m}/krl`),
      query({}),
      undefined,
      etag,
    ),
    request(
      "v1",
      fc.constantFrom("POST", "PUT"),
      segment(["ssh"]).map((m) => `/v1/${m}/verify`),
      query({}),
      fc.oneof(
        hostileText.map((otp) => JSON.stringify({ otp })),
        bodyArb("v1", { deepJson: false, hugePageNumber: false }),
      ),
    ),
    request(
      "v2",
      read,
      fc.constantFrom("/api/v2/ping", "/api/v2/openapi.json", "/.well-known/terraform.json"),
      query({}),
    ),
    request(
      "v2",
      fc.constantFrom("PUT", "GET", "POST"),
      fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{43}$/), hostileSegment).map((t) => `/api/v2/uploads/${t}`),
      query({}),
      hostileText,
    ),
    request(
      "v2",
      read,
      fc
        .tuple(segment([f.org]), segment(["mod"]), segment(["aws"]), segment(["1.0.0", "0.0.0-x"]))
        .map(([o, n, p, v]) => `/api/registry/v1/modules/${o}/${n}/${p}/${v}/archive`),
      query({
        expires: expiresValue,
        signature: signatureValue,
        archive: fc.oneof(fc.constant("tar.gz"), hostileText),
      }),
    ),
    request(
      "app",
      read,
      fc
        .tuple(segment([f.org]), segment(["ws"]), segment(["run-AAAAAAAAAAAAAAAA"]))
        .map(([o, w, r]) => `/app/${o}/workspaces/${w}/runs/${r}`),
      query({ view: viewValue, format: fc.oneof(fc.constantFrom("json", "html"), hostileText) }),
    ),
    // N16: an organization's SSO callback, with hostile state, code and provider error.
    request(
      "app",
      read,
      fc.oneof(fc.constant(f.org), hostileSegment).map((o) => `/app/~/sso/${o}/callback`),
      query({
        state: fc.oneof(fc.constant("A".repeat(43)), hostileText),
        code: hostileText,
        error: hostileText,
        error_description: hostileText,
      }),
    ),
    request(
      "app",
      read,
      fc.constantFrom("/app/~/sign-in", "/app/~/console.css", "/app/~/console.js", "/app"),
      query({
        next: fc.oneof(
          fc.constantFrom("/app", "//evil.example", "/app/../x", "https://evil.example/app", "/app/~/sign-in"),
          hostileText,
        ),
        return: fc.oneof(
          fc.constantFrom("/app/settings/tokens?source=terraform-login", "/\\evil.example", "/app/%2e%2e/x"),
          hostileText,
        ),
      }),
    ),
    request(
      "app",
      read,
      fc.constantFrom("/app/settings", "/app/settings/tokens"),
      query({
        source: fc.oneof(fc.constant("terraform-login"), hostileText),
        page: fc.oneof(fc.constantFrom("1", "2", "0", "999999", "1e9"), hostileText),
        notice: fc.oneof(fc.constant("revoked"), hostileText),
      }),
    ),
  );
}

/** The console's forms: every POST under /app, with the session and CSRF (or a wrong one), and hostile fields. */
function consoleFormArb(f: FuzzFixtures): fc.Arbitrary<FuzzRequest> {
  const id = fc.oneof(fc.constantFrom("nocode-AAAAAAAAAAAAAAAA", "x"), hostileSegment);
  const org = fc.oneof(fc.constant(f.org), hostileSegment);
  const signedIn = fc.oneof(
    fc.tuple(org, id).map(([o, m]) => `/app/${o}/modules/${m}/rollouts`),
    fc.tuple(org, id).map(([o, m]) => `/app/${o}/modules/${m}/provision`),
    fc
      .tuple(org, id, fc.constantFrom("confirm", "pause", "resume", "cancel", "x"))
      .map(([o, r, a]) => `/app/${o}/rollouts/${r}/actions/${a}`),
    fc.tuple(org, id).map(([o, w]) => `/app/${o}/workspaces/${w}/upgrade`),
    fc.constant("/app/settings/tokens"),
    fc
      .oneof(fc.constantFrom("at-AAAAAAAAAAAAAAAA", "x"), hostileSegment)
      .map((t) => `/app/settings/tokens/${t}/revoke`),
    fc.tuple(org, id, id).map(([o, w, r]) => `/app/${o}/workspaces/${w}/upgrade/${r}/confirm`),
    fc
      .tuple(org, id, id, fc.constantFrom("apply", "discard", "x"))
      .map(([o, w, r, a]) => `/app/${o}/workspaces/${w}/runs/${r}/actions/${a}`),
  );
  const fieldNames = fc.constantFrom(
    "name",
    "batch-size",
    "auto-confirm",
    "max-failures",
    "token",
    "var:prefix",
    "description",
    "expiry",
    "source",
    "x",
  );
  const fields = fc.dictionary(fieldNames, hostileText, { maxKeys: 5 });
  const encode = (form: Record<string, string>) => new URLSearchParams(form).toString();
  const body = (csrf: fc.Arbitrary<string>) =>
    fc.oneof(
      { weight: 4, arbitrary: fc.tuple(fields, csrf).map(([form, c]) => encode({ ...form, csrf: c })) },
      { weight: 1, arbitrary: hostileText },
    );
  const contentType = fc.constantFrom(
    "application/x-www-form-urlencoded",
    "application/x-www-form-urlencoded",
    "application/x-www-form-urlencoded; charset=utf-8",
    "text/plain",
    "multipart/form-data",
  );
  const sessionCsrf = fc.oneof(
    { weight: 4, arbitrary: fc.constant(f.consoleCsrf) },
    { weight: 1, arbitrary: hostileText },
  );
  const signInCsrf = fc.oneof(
    { weight: 4, arbitrary: fc.constant(f.signInCsrf) },
    { weight: 1, arbitrary: hostileText },
  );
  const signInBody = fc.oneof(
    { weight: 4, arbitrary: fc.tuple(hostileText, signInCsrf).map(([token, c]) => encode({ token, csrf: c })) },
    { weight: 1, arbitrary: hostileText },
  );
  return fc.oneof(
    fc.record({ path: signedIn, body: body(sessionCsrf), type: contentType }).map(
      (r): FuzzRequest => ({
        api: "app",
        method: "POST",
        path: r.path,
        headers: { "Content-Type": r.type, Cookie: f.consoleCookie },
        body: r.body,
      }),
    ),
    fc.record({ body: signInBody, type: contentType, next: fc.oneof(fc.constant(""), hostileText) }).map(
      (r): FuzzRequest => ({
        api: "app",
        method: "POST",
        path: `/app/~/sign-in${r.next ? `?${new URLSearchParams({ next: r.next })}` : ""}`,
        headers: { "Content-Type": r.type, Cookie: f.signInCookie },
        body: r.body,
      }),
    ),
    // N16: an organization's SSO start, with the sign-in CSRF token or a wrong one.
    fc.record({ org: fc.oneof(fc.constant(f.org), hostileSegment), body: signInBody, type: contentType }).map(
      (r): FuzzRequest => ({
        api: "app",
        method: "POST",
        path: `/app/~/sso/${r.org}/start`,
        headers: { "Content-Type": r.type, Cookie: f.signInCookie },
        body: r.body,
      }),
    ),
    // Sign-out only with a wrong CSRF value: a right one would end the session the other forms use.
    hostileText.map(
      (c): FuzzRequest => ({
        api: "app",
        method: "POST",
        path: "/app/~/sign-out",
        headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: f.consoleCookie },
        body: encode({ csrf: `${c}-wrong` }),
      }),
    ),
  );
}

/** A generated request to /v1 or /api/v2 with that API's paths, headers and bodies. */
function apiRequestArb(
  api: "v1" | "v2",
  methods: fc.Arbitrary<string>,
  f: FuzzFixtures,
  known: KnownIssueSwitches,
): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      method: methods,
      path: pathArb(api === "v1" ? V1_TEMPLATES : V2_TEMPLATES, f),
      query: queryArb(known),
      headers: api === "v1" ? v1Headers(f) : v2Headers(f),
      body: bodyArb(api, known),
    })
    .map(
      (r): FuzzRequest => ({
        api,
        method: r.method,
        path: `${api === "v1" ? "/v1" : "/api/v2"}/${r.path}${r.query}`,
        // A JSON:API body says its media type; a /v1 body goes as the generator made it.
        headers:
          api === "v2" && r.body !== undefined && hasBody(r.method)
            ? { ...r.headers, "Content-Type": "application/vnd.api+json" }
            : r.headers,
        body: hasBody(r.method) ? r.body : undefined,
      }),
    );
}

/** One generated request to either API. */
export function requestArb(f: FuzzFixtures, known: KnownIssueSwitches): fc.Arbitrary<FuzzRequest> {
  const methods = fc.constantFrom("GET", "GET", "POST", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS");
  const v1 = apiRequestArb("v1", methods, f, known);
  const v2 = apiRequestArb("v2", methods, f, known);
  return fc.oneof(
    { weight: 8, arbitrary: v1 },
    { weight: 8, arbitrary: v2 },
    { weight: 3, arbitrary: unauthenticatedArb(f) },
    { weight: 2, arbitrary: consoleFormArb(f) },
  );
}

const hasBody = (method: string) => method !== "GET" && method !== "HEAD";
