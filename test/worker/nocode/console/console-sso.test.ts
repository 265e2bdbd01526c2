/**
 * The console's single sign-on (decision N16) against the Worker with its real bindings:
 * the start (CSRF, the `__Host-keyway_sso` Lax cookie, the authorization URL with state,
 * nonce and PKCE S256), the callback's refusals (no cookie, a spent state, a provider
 * error, a configuration changed meanwhile, S28's rate limit), and SSO sessions (scoped to
 * their organization, ended when the user leaves its teams, when SSO is disabled or its
 * generation changes, after 12 h, and by sign-out). The whole flow with a real provider is
 * in test/interop/console/sso-browser.test.ts.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { openSsoSession } from "../../../../src/nocode/browser/console-session";
import { signInStore } from "../../../../src/platform/sign-in";
import { CONSOLE_ORIGIN, ConsoleBrowser, parseSetCookie, REFUSED_RETURNS } from "../../../helpers/console-browser";
import { serveProvider } from "../../../helpers/jwt-auth";
import { bootstrapOrg, createMember, tfe, uniqueName } from "../../../helpers/nocode";

/** The console's cookie jar of one person, who can also start single sign-on. */
class Browser extends ConsoleBrowser {
  /** Open the organization's sign-in page and press "Sign in with …"; returns the start's answer. */
  async start(org: string) {
    const signIn = await this.request("GET", `/app/~/sign-in?next=${encodeURIComponent(`/app/${org}`)}`);
    const csrf = /name="csrf" value="([^"]+)"/.exec(signIn.text)![1]!;
    return this.request("POST", `/app/~/sso/${org}/start`, { csrf });
  }
}

async function ssoOrg() {
  const world = await bootstrapOrg();
  const issuer = await serveProvider();
  const patch = (attributes: Record<string, unknown>) =>
    tfe("PATCH", `organizations/${world.org}/sso-configuration`, {
      token: world.ownerToken,
      body: { data: { type: "sso-configurations", attributes } },
    });
  const res = await patch({ enabled: true, issuer, "client-id": "keyway", "client-secret": "s3cret" });
  if (res.status !== 200) throw new Error(`sso: ${res.status} ${res.text}`);
  return { ...world, issuer, patch };
}

/** The provider URL a start page moves on to. */
function providerUrl(text: string): URL {
  const m = /<meta http-equiv="refresh" content="0;url=([^"]+)">/.exec(text);
  if (!m) throw new Error(`no refresh on the page: ${text.slice(0, 300)}`);
  return new URL(m[1]!.replaceAll("&amp;", "&"));
}

const generationOf = async (org: string) =>
  (await env.DB.prepare("SELECT generation FROM sso_configurations WHERE organization = ?")
    .bind(org)
    .first<number>("generation"))!;

describe("SSO start (N16)", () => {
  it("sets the Lax SSO cookie and sends the browser to the provider with state, nonce and PKCE S256", async () => {
    const { org, issuer } = await ssoOrg();
    const b = new Browser();
    const signIn = await b.request("GET", `/app/~/sign-in?next=/app/${org}`);
    expect(signIn.text).toContain(`action="/app/~/sso/${org}/start?return=${encodeURIComponent(`/app/${org}`)}"`);
    const res = await b.start(org);
    expect(res.status).toBe(200);
    const set = res.headers.getSetCookie().find((c) => c.startsWith("__Host-keyway_sso="))!;
    expect(parseSetCookie(set)).toEqual({
      name: "__Host-keyway_sso",
      value: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      attributes: ["HttpOnly", "Max-Age=600", "Path=/", "SameSite=Lax", "Secure"],
    });
    // The page moving on to the provider has the console's stylesheet (at its hashed URL) and no script.
    expect(res.text).toMatch(/<link rel="stylesheet" href="\/app\/~\/console\.[0-9a-f]{16}\.css">/);
    expect(res.text).not.toContain("<script");
    const url = providerUrl(res.text);
    expect(`${url.origin}${url.pathname}`).toBe(`${issuer}/auth`);
    expect(url.searchParams.get("client_id")).toBe("keyway");
    expect(url.searchParams.get("redirect_uri")).toBe(`${CONSOLE_ORIGIN}/app/~/sso/${org}/callback`);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("state")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get("nonce")).toBeTruthy();
    expect(url.searchParams.get("scope")).toBe("openid email profile");
    expect(res.headers.get("cache-control")).toBe("no-store");
  });

  it("refuses a start without the sign-in CSRF token, and one for an organization without SSO", async () => {
    const { org, patch } = await ssoOrg();
    const b = new Browser();
    const res = await b.request("POST", `/app/~/sso/${org}/start`, { csrf: "forged" });
    expect(res.status).toBe(403);
    expect(b.cookies.has("__Host-keyway_sso")).toBe(false);
    expect((await patch({ enabled: false })).status).toBe(200);
    const off = await new Browser().start(org);
    expect(off.status).toBe(403);
    expect(off.text).toContain("Single sign-on is not enabled");
    const signIn = await new Browser().request("GET", `/app/~/sign-in?next=/app/${org}`);
    expect(signIn.text).not.toContain(`/app/~/sso/${org}/start`);
    // A malformed escape in the path after sign-in names no organization: the plain page.
    const malformed = await new Browser().request("GET", `/app/~/sign-in?next=${encodeURIComponent("/app/%zz")}`);
    expect(malformed.status).toBe(200);
  });
});

describe("SSO callback refusals (N16)", () => {
  it("needs the cookie; a provider error is a page; a state works once", async () => {
    const { org } = await ssoOrg();
    const b = new Browser();
    const state = providerUrl((await b.start(org)).text).searchParams.get("state")!;
    const callback = `/app/~/sso/${org}/callback?state=${state}&error=access_denied&error_description=nope`;

    const stranger = await new Browser().request("GET", callback);
    expect(stranger.status).toBe(400);
    expect(stranger.text).toContain("did not start in this browser");

    // The stranger did not spend the state: its own browser still can.
    const denied = await b.request("GET", callback);
    expect(denied.status).toBe(400);
    expect(denied.text).toContain("The identity provider refused the sign-in");
    expect(denied.text).toContain("access_denied: nope");
    expect(denied.headers.getSetCookie().map(parseSetCookie)).toContainEqual({
      name: "__Host-keyway_sso",
      value: "",
      attributes: ["HttpOnly", "Max-Age=0", "Path=/", "SameSite=Lax", "Secure"],
    });
    expect(b.cookies.has("__Host-keyway_sso")).toBe(false);

    const b2 = new Browser();
    await b2.start(org);
    const again = await b2.request("GET", callback);
    expect(again.status).toBe(400);
    expect(again.text).toContain("already used");
  });

  it("refuses a sign-in started before the configuration changed", async () => {
    const { org, patch } = await ssoOrg();
    const b = new Browser();
    const state = providerUrl((await b.start(org)).text).searchParams.get("state")!;
    expect((await patch({ "client-id": "another" })).status).toBe(200);
    const res = await b.request("GET", `/app/~/sso/${org}/callback?state=${state}&code=abc`);
    expect(res.status).toBe(403);
    expect(res.text).toContain("turned off or changed");
  });

  it("an organization without SSO, and S28's rate limit, answer pages, never a 5xx", async () => {
    const plain = await bootstrapOrg();
    const none = await new Browser().request("GET", `/app/~/sso/${plain.org}/callback?state=x&code=y`);
    expect(none.status).toBe(403);
    const { org } = await ssoOrg();
    const statuses: number[] = [];
    for (let i = 0; i < 61; i++) {
      statuses.push((await new Browser().request("GET", `/app/~/sso/${org}/callback?state=s${i}&code=c`)).status);
    }
    expect(statuses.slice(0, 60).every((s) => s === 400)).toBe(true);
    expect(statuses[60]).toBe(429);
  });
});

describe("SSO by organization name, and the return path (N16)", () => {
  const TERRAFORM_LOGIN = "/app/settings/tokens?source=terraform-login";

  /** The sign-in page for `returnTo`, and the start by organization name posted from it. */
  async function startByName(b: Browser, organization: string, returnTo = TERRAFORM_LOGIN) {
    const signIn = await b.request("GET", `/app/~/sign-in?return=${encodeURIComponent(returnTo)}`);
    const csrf = /name="csrf" value="([^"]+)"/.exec(signIn.text)![1]!;
    return b.request("POST", `/app/~/sso/start?return=${encodeURIComponent(returnTo)}`, { csrf, organization });
  }

  /** The record the start kept under the state of its provider URL (read by consuming it). */
  async function storedRecord(org: string, startPage: string) {
    const state = providerUrl(startPage).searchParams.get("state")!;
    const consumed = await signInStore(env, `nocode:${org}`).consume(state);
    if (!consumed.ok) throw new Error(`no state stored: ${consumed.error}`);
    return consumed.value.record;
  }

  it("offers the form by organization name when the return path names no SSO organization, carrying the return path", async () => {
    const { org } = await ssoOrg();
    const plain = await new Browser().request("GET", `/app/~/sign-in?return=${encodeURIComponent(TERRAFORM_LOGIN)}`);
    expect(plain.text).toContain(`action="/app/~/sso/start?return=${encodeURIComponent(TERRAFORM_LOGIN)}"`);
    expect(plain.text).toContain('name="organization"');
    expect(plain.text).toContain("terraform login");
    const offered = await new Browser().request("GET", `/app/~/sign-in?return=${encodeURIComponent(`/app/${org}/x`)}`);
    expect(offered.text).toContain(`action="/app/~/sso/${org}/start?return=${encodeURIComponent(`/app/${org}/x`)}"`);
    expect(offered.text).not.toContain('name="organization"');
  });

  it("answers an unknown organization and one without SSO with the same page, and sets no cookie", async () => {
    const { org, patch } = await ssoOrg();
    expect((await patch({ enabled: false })).status).toBe(200);
    const unknown = uniqueName("nope");
    const pages: string[] = [];
    for (const name of [unknown, org]) {
      const b = new Browser();
      const res = await startByName(b, name);
      expect(res.status, name).toBe(403);
      expect(b.cookies.has("__Host-keyway_sso")).toBe(false);
      pages.push(res.text.replaceAll(name, "NAME"));
    }
    expect(pages[0]).toContain("The organization NAME does not offer single sign-on.");
    expect(pages[1]).toBe(pages[0]);
    // A name that cannot be an organization is not echoed.
    const odd = await startByName(new Browser(), "<b>x</b>/../y");
    expect(odd.status).toBe(403);
    expect(odd.text).toContain("That organization does not offer single sign-on.");
    // Without the sign-in CSRF token nothing starts.
    const forged = await new Browser().request("POST", "/app/~/sso/start", { csrf: "forged", organization: org });
    expect(forged.status).toBe(403);
  });

  it("starts an enabled organization's sign-in and keeps the return path with the state", async () => {
    const { org, issuer } = await ssoOrg();
    const b = new Browser();
    const res = await startByName(b, org);
    expect(res.status).toBe(200);
    expect(b.cookies.has("__Host-keyway_sso")).toBe(true);
    const url = providerUrl(res.text);
    expect(`${url.origin}${url.pathname}`).toBe(`${issuer}/auth`);
    expect(url.searchParams.get("redirect_uri")).toBe(`${CONSOLE_ORIGIN}/app/~/sso/${org}/callback`);
    expect((await storedRecord(org, res.text)).returnTo).toBe(TERRAFORM_LOGIN);
    // The organization's own button carries it too.
    const signIn = await b.request("GET", `/app/~/sign-in?return=/app/${org}/w`);
    const csrf = /name="csrf" value="([^"]+)"/.exec(signIn.text)![1]!;
    const own = await b.request("POST", `/app/~/sso/${org}/start?return=${encodeURIComponent(`/app/${org}/w`)}`, {
      csrf,
    });
    expect((await storedRecord(org, own.text)).returnTo).toBe(`/app/${org}/w`);
  });

  it("keeps no hostile return path: every refused spelling is stored as /app", async () => {
    const { org } = await ssoOrg();
    const b = new Browser();
    const signIn = await b.request("GET", "/app/~/sign-in");
    const csrf = /name="csrf" value="([^"]+)"/.exec(signIn.text)![1]!;
    for (const raw of REFUSED_RETURNS) {
      const res = await b.request("POST", `/app/~/sso/start?return=${encodeURIComponent(raw)}`, {
        csrf,
        organization: org,
      });
      expect(res.status, JSON.stringify(raw)).toBe(200);
      expect((await storedRecord(org, res.text)).returnTo, JSON.stringify(raw)).toBe("/app");
    }
  });
});

describe("SSO sessions (N16)", () => {
  async function signedIn() {
    const world = await ssoOrg();
    const member = await createMember(world.org, { "read-workspaces": true });
    const other = await bootstrapOrg();
    // The member belongs to the other organization too.
    const addToOther = await tfe("POST", `teams/${other.ownersTeamId}/relationships/users`, {
      body: { data: [{ type: "users", id: member.username }] },
    });
    expect(addToOther.status).toBe(204);
    const id = await openSsoSession(env, {
      userId: member.id,
      organization: world.org,
      generation: await generationOf(world.org),
    });
    const b = new Browser();
    b.cookies.set("__Host-keyway_console", id);
    return { ...world, member, other: other.org, b, id };
  }

  it("carries only its organization's rights: another organization answers 404 although the user is an owner there", async () => {
    const { org, other, b, member } = await signedIn();
    const home = await b.request("GET", `/app/${org}`);
    expect(home.status).toBe(200);
    expect(home.text).toContain(member.username);
    expect((await b.request("GET", `/app/${other}`)).status).toBe(404);
    const list = await b.request("GET", "/app");
    expect(list.text).toContain(org);
    expect(list.text).not.toContain(other);
    // The session row holds no token, only the user, organization and generation.
    const row = await env.DB.prepare("SELECT * FROM console_sessions WHERE user_id = ?")
      .bind(member.id)
      .first<Record<string, unknown>>();
    expect(row).toMatchObject({ token_hash: null, sso_organization: org });
  });

  it("ends when the user leaves the organization's teams", async () => {
    const { org, b, member } = await signedIn();
    expect((await b.request("GET", `/app/${org}`)).status).toBe(200);
    const removed = await tfe("DELETE", `teams/${member.teamId}/relationships/users`, {
      body: { data: [{ type: "users", id: member.username }] },
    });
    expect(removed.status).toBe(204);
    const res = await b.request("GET", `/app/${org}`);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toContain("/app/~/sign-in");
  });

  it("ends when SSO is disabled, or its generation changes", async () => {
    const first = await signedIn();
    expect((await first.patch({ enabled: false })).status).toBe(200);
    expect((await first.b.request("GET", `/app/${first.org}`)).status).toBe(303);

    const second = await signedIn();
    expect((await second.patch({ "groups-claim": "groups" })).status).toBe(200);
    expect((await second.b.request("GET", `/app/${second.org}`)).status).toBe(200);
    expect((await second.patch({ issuer: `${second.issuer}/` })).status).toBe(200);
    expect((await second.b.request("GET", `/app/${second.org}`)).status).toBe(303);
  });

  it("lasts 12 hours at most, and sign-out ends it", async () => {
    const { org, member } = await signedIn();
    const old = await openSsoSession(
      env,
      { userId: member.id, organization: org, generation: await generationOf(org) },
      Date.now() - 12 * 3600_000 - 1000,
    );
    const b = new Browser();
    b.cookies.set("__Host-keyway_console", old);
    expect((await b.request("GET", `/app/${org}`)).status).toBe(303);

    const s = await signedIn();
    const page = await s.b.request("GET", `/app/${s.org}`);
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)![1]!;
    expect((await s.b.request("POST", "/app/~/sign-out", { csrf })).status).toBe(303);
    s.b.cookies.set("__Host-keyway_console", s.id);
    expect((await s.b.request("GET", `/app/${s.org}`)).status).toBe(303);
  });
});
