/**
 * What the fuzz suite's generators point at (issue 14; see ./harness.ts), created through
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
