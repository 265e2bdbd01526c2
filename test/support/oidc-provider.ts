/**
 * A real OpenID Provider on loopback for node-side tests (decision S26): panva's
 * `oidc-provider` with one confidential client, a few users with `email`, `groups` and
 * `preferred_username` claims, PKCE required, and its development interactions (any login is accepted).
 * `signIn` plays the browser: it follows the authorization URL through the provider's
 * login and consent pages with a cookie jar and returns what the provider sends to the
 * redirect URI (a query redirect, or the auto-submitting form of `form_post`).
 *
 * The provider follows OIDC Core §5.4 (`conformIdTokenClaims`): when an access token is
 * issued, the ID token carries only `sub` and the profile claims come from `/userinfo`,
 * so a relying party that skips the userinfo merge never sees `email` or `groups`.
 */
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair } from "jose";
import Provider from "oidc-provider";

export interface TestAccount {
  email: string;
  groups: string[];
  /** `preferred_username` (profile scope); the account id when omitted. */
  username?: string;
  /** `email_verified`; true when omitted. */
  emailVerified?: boolean;
}

export interface RunningOidcProvider {
  /** The issuer, which is also the discovery base URL (`<issuer>/.well-known/openid-configuration`). */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Sign `accountId` in at `authUrl` and return what reaches the redirect URI. */
  signIn(authUrl: string, accountId: string): Promise<ProviderRedirect>;
  stop(): Promise<void>;
}

/** What the provider sent to the redirect URI: its parameters, and how (query or form_post). */
export interface ProviderRedirect {
  mode: "query" | "form_post";
  /** The redirect URI it went to (without the parameters). */
  target: string;
  params: URLSearchParams;
}

export async function startOidcProvider(options: {
  accounts: Record<string, TestAccount>;
  redirectUris: string[];
  clientId?: string;
  clientSecret?: string;
  /** Grant every client every scope without the consent page (a browser then sees only the login page). */
  autoConsent?: boolean;
}): Promise<RunningOidcProvider> {
  const clientId = options.clientId ?? "keyway-test";
  const clientSecret = options.clientSecret ?? `secret-${crypto.randomUUID()}`;
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), alg: "RS256", use: "sig", kid: "test-rs256" };

  // The issuer needs the port, so bind first, then build the provider and hand it the socket.
  const { createServer } = await import("node:http");
  let handler: ((req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => void) | null =
    null;
  const server = createServer((req, res) => {
    if (handler) handler(req, res);
    else res.writeHead(503).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const issuer = `http://127.0.0.1:${port}`;

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_basic",
      },
    ],
    jwks: { keys: [signingKey] },
    cookies: { keys: [`cookie-key-${crypto.randomUUID()}`] },
    pkce: { required: () => true },
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, AuthorizationCode: 60, IdToken: 600 },
    claims: {
      openid: ["sub"],
      email: ["email", "email_verified"],
      groups: ["groups"],
      profile: ["preferred_username"],
    },
    scopes: ["openid", "email", "groups", "profile"],
    features: { devInteractions: { enabled: true } },
    ...(options.autoConsent
      ? {
          async loadExistingGrant(ctx: import("oidc-provider").KoaContextWithOIDC) {
            const clientId = ctx.oidc.client?.clientId;
            const accountId = ctx.oidc.session?.accountId;
            if (!clientId || !accountId) return undefined;
            const grant = new ctx.oidc.provider.Grant({ clientId, accountId });
            grant.addOIDCScope("openid email groups profile");
            await grant.save();
            return grant;
          },
        }
      : {}),
    async findAccount(_ctx, sub) {
      const account = options.accounts[sub];
      if (!account) return undefined;
      return {
        accountId: sub,
        async claims() {
          return {
            sub,
            email: account.email,
            email_verified: account.emailVerified ?? true,
            groups: account.groups,
            preferred_username: account.username ?? sub,
          };
        },
      };
    },
  });
  // The provider's own warnings (dev interactions, in-memory adapter) are expected here.
  provider.on("server_error", (_ctx, err) => console.error("oidc-provider server_error", err));
  handler = provider.callback();

  return {
    issuer,
    clientId,
    clientSecret,
    signIn: (authUrl, accountId) => playBrowser(issuer, authUrl, accountId),
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Follow the authorization URL as a browser would: redirects within the provider, the login
 * form (any login), the consent form, until the provider sends the browser away from itself.
 */
async function playBrowser(issuer: string, authUrl: string, accountId: string): Promise<ProviderRedirect> {
  const jar = new Map<string, string>();
  const cookieHeader = () => [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
  const remember = (response: Response) => {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (value === "" || /expires=Thu, 01 Jan 1970/i.test(line)) jar.delete(name);
      else jar.set(name, value);
    }
  };
  let url = authUrl;
  let method = "GET";
  let body: URLSearchParams | undefined;
  for (let step = 0; step < 20; step++) {
    if (!url.startsWith(issuer)) {
      const target = new URL(url);
      const params = new URLSearchParams(target.search);
      target.search = "";
      return { mode: "query", target: target.href, params };
    }
    const response = await fetch(url, {
      method,
      body,
      redirect: "manual",
      headers: { cookie: cookieHeader(), ...(body ? { "content-type": "application/x-www-form-urlencoded" } : {}) },
    });
    remember(response);
    method = "GET";
    body = undefined;
    if (response.status >= 300 && response.status < 400) {
      url = new URL(response.headers.get("location")!, url).href;
      continue;
    }
    const html = await response.text();
    if (response.status !== 200) throw new Error(`provider answered ${response.status}: ${html.slice(0, 500)}`);
    const form = parseForm(html, url);
    if (!form) throw new Error(`provider page without a form: ${html.slice(0, 500)}`);
    if (!form.action.startsWith(issuer)) {
      // form_post (OAuth 2.0 Form Post Response Mode): the page posts the answer to the client.
      return { mode: "form_post", target: form.action, params: form.fields };
    }
    const prompt = form.fields.get("prompt");
    if (prompt === "login") {
      form.fields.set("login", accountId);
      form.fields.set("password", "any");
    } else if (prompt !== "consent") {
      throw new Error(`unexpected provider form: ${html.slice(0, 500)}`);
    }
    url = form.action;
    method = "POST";
    body = form.fields;
  }
  throw new Error("the provider's interactions did not end in 20 steps");
}

/** The first form of a page: its action and its named inputs. */
function parseForm(html: string, base: string): { action: string; fields: URLSearchParams } | null {
  const formTag = /<form\b[^>]*>/i.exec(html);
  if (!formTag) return null;
  const action = /action="([^"]*)"/i.exec(formTag[0])?.[1] ?? base;
  const fields = new URLSearchParams();
  const formBody = html.slice(formTag.index, html.indexOf("</form>", formTag.index));
  for (const input of formBody.matchAll(/<input\b[^>]*>/gi)) {
    const name = /name="([^"]*)"/i.exec(input[0])?.[1];
    if (!name) continue;
    const value = /value="([^"]*)"/i.exec(input[0])?.[1] ?? "";
    fields.set(name, decodeEntities(value));
  }
  return { action: new URL(decodeEntities(action), base).href, fields };
}

function decodeEntities(text: string): string {
  return text
    .replace(/&quot;/g, '"')
    .replace(/&#x27;|&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&#x2F;/gi, "/")
    .replace(/&amp;/g, "&");
}
