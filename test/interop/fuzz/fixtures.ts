/**
 * What the fuzz suite's generators point at (see ./harness.ts), created through
 * both APIs of the running Worker: a CA, a CA role, an OTP role, a policy and a token under
 * it, an organization with an owner and its tokens.
 */
import { tfeOk, vaultOk } from "../../support/client";

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

/** Create what the generators point at: a CA, a CA role, an OTP role, a policy and token, an organization with an owner and its token. */
export async function seedFixtures(keyway: {
  url: string;
  rootToken: string;
  adminToken: string;
}): Promise<FuzzFixtures> {
  const { url, rootToken, adminToken } = keyway;
  await vaultOk(keyway, "POST", "ssh/config/ca", { key_type: "ed25519" });
  await vaultOk(keyway, "POST", "ssh/roles/web", {
    key_type: "ca",
    allow_user_certificates: true,
    allowed_users: "*",
    ttl: "1h",
  });
  await vaultOk(keyway, "POST", "ssh/roles/otp-role", {
    key_type: "otp",
    default_user: "ubuntu",
    cidr_list: "10.0.0.0/8",
  });
  await vaultOk(keyway, "POST", "sys/policies/acl/dev", {
    policy: JSON.stringify({
      path: { "ssh/sign/*": { capabilities: ["create", "update"] }, "ssh/sign/admin": { capabilities: ["deny"] } },
    }),
  });
  const limited = await vaultOk(keyway, "POST", "auth/token/create", { policies: ["dev"], ttl: "2h" });
  const org = `fuzz-${crypto.randomUUID().slice(0, 8)}`;
  const created = await tfeOk(keyway, "POST", "organizations", adminToken, {
    data: { type: "organizations", attributes: { name: org, email: `a@${org}.example.test` } },
  });
  const ownersTeam = created.json.data.relationships["owners-team"].data.id as string;
  const user = await tfeOk(keyway, "POST", "admin/users", adminToken, {
    data: { type: "users", attributes: { username: `${org}-owner`, email: `o@${org}.example.test` } },
  });
  const userToken = await tfeOk(keyway, "POST", `users/${user.json.data.id}/authentication-tokens`, adminToken, {
    data: { type: "authentication-tokens" },
  });
  await tfeOk(keyway, "POST", `teams/${ownersTeam}/relationships/users`, adminToken, {
    data: [{ type: "users", id: `${org}-owner` }],
  });
  const orgToken = await tfeOk(keyway, "POST", `organizations/${org}/authentication-token`, adminToken);
  const ownerToken = userToken.json.data.attributes.token as string;
  return {
    ...(await consoleSession(url, ownerToken)),
    url,
    rootToken,
    adminToken,
    limitedToken: limited.json.auth.client_token,
    ownerToken,
    organizationToken: orgToken.json.data.attributes.token,
    org,
    caRole: "web",
    otpRole: "otp-role",
    policy: "dev",
  };
}
