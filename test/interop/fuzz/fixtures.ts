/**
 * What the fuzz suite's generators point at (see ./harness.ts), created through
 * both APIs of the running Worker: a CA, a CA role, an OTP role, a policy and a token under
 * it, an organization with an owner and its tokens.
 */

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
  /** The console session of the owner (`keyway_console=…`) and its forms' CSRF token. */
  consoleCookie: string;
  consoleCsrf: string;
  /** The sign-in form's pre-session cookie and the CSRF token that goes with it. */
  signInCookie: string;
  signInCsrf: string;
}

/** The sign-in form's pre-session cookie and CSRF token, then a session signed in with `token`. */
async function consoleSession(url: string, token: string) {
  const form = await fetch(`${url}/app/~/sign-in`);
  const signInCookie = form.headers.getSetCookie()[0]!.split(";")[0]!;
  const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)![1]!;
  const signInCsrf = csrfOf(await form.text());
  const signedIn = await fetch(`${url}/app/~/sign-in`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: signInCookie },
    body: new URLSearchParams({ csrf: signInCsrf, token }).toString(),
    redirect: "manual",
  });
  await signedIn.text();
  if (signedIn.status !== 303) throw new Error(`fixture console sign-in: ${signedIn.status}`);
  const consoleCookie = signedIn.headers
    .getSetCookie()
    .find((c) => c.startsWith("keyway_console="))!
    .split(";")[0]!;
  const page = await fetch(`${url}/app`, { headers: { Cookie: consoleCookie } });
  return { consoleCookie, consoleCsrf: csrfOf(await page.text()), signInCookie, signInCsrf };
}

async function call(url: string, method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      ...headers,
      ...(body === undefined
        ? {}
        : { "Content-Type": path.startsWith("/api/") ? "application/vnd.api+json" : "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`fixture ${method} ${path}: ${res.status} ${text}`);
  // biome-ignore lint/suspicious/noExplicitAny: fixture answers are walked ad hoc
  return (text ? JSON.parse(text) : null) as any;
}

/** Create what the generators point at: a CA, a CA role, an OTP role, a policy and token, an organization with an owner and its token. */
export async function seedFixtures(keyway: {
  url: string;
  rootToken: string;
  adminToken: string;
}): Promise<FuzzFixtures> {
  const { url, rootToken, adminToken } = keyway;
  const root = { "X-Vault-Token": rootToken };
  const admin = { Authorization: `Bearer ${adminToken}` };
  await call(url, "POST", "/v1/ssh/config/ca", root, { key_type: "ed25519" });
  await call(url, "POST", "/v1/ssh/roles/web", root, {
    key_type: "ca",
    allow_user_certificates: true,
    allowed_users: "*",
    ttl: "1h",
  });
  await call(url, "POST", "/v1/ssh/roles/otp-role", root, {
    key_type: "otp",
    default_user: "ubuntu",
    cidr_list: "10.0.0.0/8",
  });
  await call(url, "POST", "/v1/sys/policies/acl/dev", root, {
    policy: JSON.stringify({
      path: { "ssh/sign/*": { capabilities: ["create", "update"] }, "ssh/sign/admin": { capabilities: ["deny"] } },
    }),
  });
  const limited = await call(url, "POST", "/v1/auth/token/create", root, { policies: ["dev"], ttl: "2h" });
  const org = `fuzz-${crypto.randomUUID().slice(0, 8)}`;
  const created = await call(url, "POST", "/api/v2/organizations", admin, {
    data: { type: "organizations", attributes: { name: org, email: `a@${org}.example.test` } },
  });
  const ownersTeam = created.data.relationships["owners-team"].data.id as string;
  const user = await call(url, "POST", "/api/v2/admin/users", admin, {
    data: { type: "users", attributes: { username: `${org}-owner`, email: `o@${org}.example.test` } },
  });
  const userToken = await call(url, "POST", `/api/v2/users/${user.data.id}/authentication-tokens`, admin, {
    data: { type: "authentication-tokens" },
  });
  await call(url, "POST", `/api/v2/teams/${ownersTeam}/relationships/users`, admin, {
    data: [{ type: "users", id: `${org}-owner` }],
  });
  const orgToken = await call(url, "POST", `/api/v2/organizations/${org}/authentication-token`, admin);
  const ownerToken = userToken.data.attributes.token as string;
  return {
    ...(await consoleSession(url, ownerToken)),
    url,
    rootToken,
    adminToken,
    limitedToken: limited.auth.client_token,
    ownerToken,
    organizationToken: orgToken.data.attributes.token,
    org,
    caRole: "web",
    otpRole: "otp-role",
    policy: "dev",
  };
}
