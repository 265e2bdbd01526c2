// The benchmarks of `npm run bench` (docs/performance.md): how each endpoint's state is set up through
// the public API, and the autocannon requests that exercise it. A setup that fails marks its
// benchmark "not available" with the reason; it never stops the run.
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { exportJWK, exportSPKI, generateKeyPair, SignJWT } from "jose";
import { projectRoot } from "./runtime.mjs";
import { moduleTarball, nullResourceModuleMainTf } from "./tarball.mjs";

/** SSH mounts (S1): one per benchmark family, so no benchmark sees another's state. */
export const SSH_MOUNTS = [
  "ssh",
  "bench-ed",
  "bench-rsa",
  "bench-otp",
  "bench-otp-big",
  "lookup-small",
  "lookup-big",
  "bench-krl",
];

/** Roles in the two lookup mounts. */
export const LOOKUP_SMALL_ROLES = 10;
export const LOOKUP_BIG_ROLES = 10_000;
/** Outstanding OTPs beside verify-10k-otps' own (docs/performance.md). */
export const OUTSTANDING_OTPS = 10_000;
/** Workspaces in the organizations of the no-code rows (docs/performance.md): small and big. */
export const SMALL_ORG_WORKSPACES = 10;
export const BIG_ORG_WORKSPACES = 10_000;

const fixture = (name) => readFileSync(path.join(projectRoot, "test", "fixtures", "ssh", "keys", name), "utf8");

/** CA keys (test/fixtures/ssh/keys, made by ssh-keygen) and the subject key every sign uses. */
export const KEYS = {
  ed25519: { privateKey: fixture("ed25519"), publicKey: fixture("ed25519.pub") },
  rsa4096: { privateKey: fixture("rsa-4096"), publicKey: fixture("rsa-4096.pub") },
  ecdsa256: { privateKey: fixture("ecdsa-256"), publicKey: fixture("ecdsa-256.pub") },
};
export const SUBJECT_PUBLIC_KEY = fixture("ed25519.pub").trim();

/** A benchmark that cannot run: its endpoint is missing (404/405/501) or its setup failed. */
export class Unavailable extends Error {
  constructor(reason, { missing = false } = {}) {
    super(reason);
    this.name = "Unavailable";
    this.missing = missing;
  }
}

const JSONAPI = "application/vnd.api+json";

/** A small HTTP client for setup calls (not timed). */
export function apiClient(origin, secrets) {
  /**
   * @param {string} method
   * @param {string} urlPath
   * @param {{ token?: string, bearer?: string, body?: unknown, raw?: BodyInit, contentType?: string }} [options]
   */
  async function call(method, urlPath, { token, bearer, body, raw, contentType } = {}) {
    /** @type {Record<string, string>} */
    const headers = {};
    if (token) headers["X-Vault-Token"] = token;
    if (bearer) headers.Authorization = `Bearer ${bearer}`;
    let payload;
    if (raw !== undefined) {
      payload = raw;
      headers["Content-Type"] = contentType ?? "application/octet-stream";
    } else if (body !== undefined) {
      payload = JSON.stringify(body);
      headers["Content-Type"] = contentType ?? (urlPath.startsWith("/api/v2") ? JSONAPI : "application/json");
    }
    let res;
    let text;
    for (let attempt = 1; ; attempt++) {
      try {
        res = await fetch(new URL(urlPath, origin), { method, headers, body: payload });
        text = await res.text();
        break;
      } catch (e) {
        // A kept-alive socket that workerd closed while idle fails the next request
        // ("other side closed"); setup calls are safe to repeat.
        if (attempt >= 3) throw new Error(`${method} ${urlPath}: ${e.message} (${e.cause?.message ?? "no cause"})`);
        await new Promise((r) => setTimeout(r, 200 * attempt));
      }
    }
    let json = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = null;
    }
    return { status: res.status, json, text };
  }

  /** Call and require a 2xx answer; anything else makes the benchmark unavailable. */
  async function expectOk(what, method, urlPath, options) {
    const res = await call(method, urlPath, options);
    if (res.status >= 200 && res.status <= 299) return res;
    const missing = [404, 405, 501].includes(res.status);
    const excerpt = res.text.replace(/\s+/g, " ").slice(0, 160);
    throw new Unavailable(`${what}: ${method} ${urlPath.split("?")[0]} → ${res.status} ${excerpt}`, { missing });
  }

  /** A user made with ADMIN_TOKEN, then a token of theirs: the token call's answer. */
  async function createUserToken(username) {
    const userRes = await expectOk("create a user", "POST", "/api/v2/admin/users", {
      bearer: secrets.ADMIN_TOKEN,
      body: { data: { type: "users", attributes: { username, email: `${username}@example.test` } } },
    });
    return expectOk("create a user token", "POST", `/api/v2/users/${userRes.json?.data?.id}/authentication-tokens`, {
      bearer: secrets.ADMIN_TOKEN,
      body: { data: { type: "authentication-tokens" } },
    });
  }

  /** A private registry module `name` (provider null) of `org`, made with `token`: the answer. */
  function createRegistryModule(what, org, token, name) {
    return expectOk(what, "POST", `/api/v2/organizations/${org}/registry-modules`, {
      bearer: token,
      body: { data: { type: "registry-modules", attributes: { name, provider: "null", "registry-name": "private" } } },
    });
  }

  return {
    call,
    expectOk,
    createUserToken,
    createRegistryModule,
    root: secrets.ROOT_TOKEN,
    admin: secrets.ADMIN_TOKEN,
  };
}

/** Only the first call runs `fn`; later calls share its promise (shared setup steps). */
function once(fn) {
  let p = null;
  return () => {
    p ??= fn();
    return p;
  };
}

const vaultJson = (token) => ({ "X-Vault-Token": token, "Content-Type": "application/json" });
const JSON_HEADERS = { "Content-Type": "application/json" };

/** A CA role allowing user certificates for anyone, with a one-hour default TTL. */
const SIGNER_ROLE = {
  key_type: "ca",
  allow_user_certificates: true,
  allowed_users: "*",
  default_user: "alice",
  ttl: "1h",
  max_ttl: "24h",
  allowed_extensions: "permit-pty",
  default_extensions: { "permit-pty": "" },
};

/**
 * One benchmark. `role` "floor" marks the floor; `raw` names the raw signing rate a signing
 * benchmark is compared with; `pairWith`/`pairRaw`/`compareP50With` pair its slices with
 * another benchmark's; `onlyWhenAsked` keeps it out of the default run.
 * @typedef {{
 *   name: string,
 *   title: string,
 *   setup: (context: { needed: number }) => Promise<any>,
 *   role?: string,
 *   raw?: string,
 *   pairWith?: string,
 *   pairRaw?: string,
 *   compareP50With?: string,
 *   onlyWhenAsked?: boolean,
 *   maxConnections?: number,
 * }} Scenario
 */

/**
 * Every benchmark, in run order. Each has `setup(api, state)` returning the autocannon
 * request list (and options), or throwing Unavailable.
 * @returns {Scenario[]}
 */
export function scenarios({ api, state }) {
  const opsToken = opsTokenOnce(api);
  const { edCa, rsaCa, signBody, signSetup, storingSignSetup, krlMount, namedIssuer, issueSetup } = sshSignSetups(
    api,
    state,
    opsToken,
  );
  const { otpRole, credsRequests, otpPool, verifySetup } = otpSetups(api, state);
  const { lookupSetup } = lookupSetups(api, state, opsToken);
  const { jwtLoginRequest } = jwtLoginSetups(api);
  const { noCode, noCodeBig, e3Setup, e4Setup } = noCodeSetups(api, state);

  // The floor stays an authenticated ping: ping answers without a token since B12, but a
  // token sent with it is still checked, so this does the same work as the floor of earlier
  // runs (token check + 204) and their ratios stay comparable.
  const ping = {
    setup: async () => {
      await api.expectOk("ping", "GET", "/api/v2/ping", { bearer: api.admin });
      return { requests: [{ method: "GET", path: "/api/v2/ping", headers: { Authorization: `Bearer ${api.admin}` } }] };
    },
  };

  return [
    { name: "floor", title: "GET /api/v2/ping (admin bearer)", role: "floor", ...ping },
    {
      // Informational (docs/performance.md): the root token, which nobody should use in production.
      name: "sign-ed25519-root",
      title: "POST sign, Ed25519 CA, root token",
      raw: "ed25519",
      setup: () => signSetup("bench-ed", edCa, api.root),
    },
    {
      name: "sign-ed25519",
      title: "POST sign, Ed25519 CA, policy token",
      raw: "ed25519",
      // Its target compares it with the root token's rate: run the two in alternating slices.
      pairWith: "sign-ed25519-root",
      setup: async () => signSetup("bench-ed", edCa, await opsToken()),
    },
    {
      name: "sign-ed25519-named-issuer",
      title: "POST sign, role bound to a named non-default Ed25519 issuer",
      raw: "ed25519",
      // Its target compares it with sign-ed25519 (the default issuer): run the two in alternating slices.
      pairWith: "sign-ed25519",
      setup: async () => signSetup("bench-ed", namedIssuer, await opsToken(), "signer-next"),
    },
    {
      name: "sign-rsa4096",
      title: "POST sign, RSA-4096 CA (rsa-sha2-256)",
      raw: "rsa4096",
      // Its target compares it with the raw RSA-4096 rate: measure that in slices beside it.
      pairRaw: "rsa4096",
      setup: async () => signSetup("bench-rsa", rsaCa, await opsToken()),
    },
    {
      name: "sign-ed25519-stored",
      title: "POST sign, Ed25519 CA, store_certificates (paired with sign-ed25519)",
      raw: "ed25519",
      // Its target compares it with sign without the inventory: run the two in alternating slices.
      pairWith: "sign-ed25519",
      setup: storingSignSetup,
    },
    {
      name: "krl-read",
      title: "GET krl (200 serials + 50 key ids, no token)",
      setup: async () => {
        await krlMount();
        const res = await api.expectOk("read the KRL", "GET", "/v1/bench-krl/krl", {});
        if (!res.text.startsWith("SSHKRL")) throw new Unavailable("krl answered something other than a KRL");
        return { requests: [{ method: "GET", path: "/v1/bench-krl/krl" }] };
      },
    },
    {
      name: "issue-ed25519",
      title: "POST issue ed25519 (Ed25519 CA)",
      raw: "ed25519",
      setup: () => issueSetup({ key_type: "ed25519" }),
    },
    {
      name: "issue-rsa2048",
      title: "POST issue rsa 2048 (Ed25519 CA)",
      // Its target compares it with the raw RSA-2048 key generation rate, in slices beside it.
      pairRaw: "rsa2048-keygen",
      // RSA key generation takes hundreds of ms of one workerd thread: more connections
      // only queue longer (same req/s, latency × connections).
      maxConnections: 4,
      setup: () => issueSetup({ key_type: "rsa", key_bits: 2048 }, { burst: 4 }),
    },
    {
      name: "creds",
      title: "POST creds (OTP role), policy token",
      setup: async () => {
        await otpRole("bench-otp");
        const token = await opsToken();
        const res = await api.expectOk("creds once", "POST", "/v1/bench-otp/creds/otp", {
          token,
          body: { ip: "10.1.2.3" },
        });
        if (typeof res.json?.data?.key !== "string") throw new Unavailable("creds answered without data.key");
        return { requests: credsRequests(token) };
      },
    },
    {
      name: "verify",
      title: "POST verify (distinct pre-minted OTPs)",
      setup: ({ needed }) => verifySetup({ mount: "bench-otp", pool: otpPool, needed }),
    },
    {
      name: "verify-10k-otps",
      title: `POST verify beside ${OUTSTANDING_OTPS.toLocaleString("en")} outstanding OTPs`,
      compareP50With: "verify",
      // A longer scale check (about 40 s of minting and load): only with --only=verify-10k-otps.
      onlyWhenAsked: true,
      setup: ({ needed }) => verifySetup({ mount: "bench-otp-big", pool: [], needed, outstanding: OUTSTANDING_OTPS }),
    },
    {
      name: "lookup-10",
      title: `POST lookup, ${LOOKUP_SMALL_ROLES} roles, policy token`,
      setup: () => lookupSetup("lookup-small", LOOKUP_SMALL_ROLES),
    },
    {
      name: "lookup-10k",
      title: `POST lookup, ${LOOKUP_BIG_ROLES.toLocaleString("en")} roles, policy token`,
      // Its target compares its p50 with lookup-10's: run the two in alternating slices.
      pairWith: "lookup-10",
      setup: () => lookupSetup("lookup-big", LOOKUP_BIG_ROLES),
    },
    {
      name: "login-jwt-static",
      title: "POST auth/<m>/login, ES256 JWT, static key (S25)",
      setup: async () => ({ requests: [await jwtLoginRequest("bench-jwt-static", "static")] }),
    },
    {
      name: "login-jwt-jwks",
      title: "POST auth/<m>/login, ES256 JWT, JWKS cached (alias unchanged between logins)",
      setup: async () => ({ requests: [await jwtLoginRequest("bench-jwt-jwks", "jwks")] }),
    },
    {
      name: "login-then-sign",
      title: "login (JWKS) then sign with the new token, per pair of requests",
      setup: async () => {
        const login = await jwtLoginRequest("bench-jwt-jwks", "jwks");
        await edCa();
        return {
          requests: [
            {
              ...login,
              onResponse: (status, responseBody, context) => {
                if (status === 200) context.token = JSON.parse(responseBody).auth.client_token;
              },
            },
            {
              method: "POST",
              path: "/v1/bench-ed/sign/signer",
              body: signBody,
              setupRequest: (req, context) => ({ ...req, headers: vaultJson(context.token ?? "none") }),
            },
          ],
        };
      },
    },
    { name: "e3-read", title: "E3 GET /no-code-modules/:id, team token", setup: () => e3Setup(noCode) },
    {
      name: "e3-read-10k-ws",
      title: `E3 in an organization of ${BIG_ORG_WORKSPACES.toLocaleString("en")} workspaces`,
      // Its target compares its p50 with e3-read's (10 workspaces): alternating slices.
      pairWith: "e3-read",
      setup: () => e3Setup(noCodeBig),
    },
    { name: "floor-end", title: "GET /api/v2/ping again (drift check)", role: "floor", ...ping },
    // Last: each workspace queues its first run, and the consumer's work would disturb
    // anything measured after it.
    { name: "e4-create", title: "E4 POST /no-code-modules/:id/workspaces, team token", setup: () => e4Setup(noCode) },
    {
      name: "e4-create-10k-ws",
      title: `E4 in an organization of ${BIG_ORG_WORKSPACES.toLocaleString("en")} workspaces`,
      pairWith: "e4-create",
      setup: () => e4Setup(noCodeBig),
    },
  ];
}

/** The SSH signing and issuing benchmarks' setups: CA mounts, roles, a KRL, a named issuer. */
function sshSignSetups(api, state, opsToken) {
  const caMount = (mount, key) =>
    once(async () => {
      await api.expectOk(`import the ${key} CA`, "POST", `/v1/${mount}/config/ca`, {
        token: api.root,
        body: { private_key: KEYS[key].privateKey, public_key: KEYS[key].publicKey, generate_signing_key: false },
      });
      await api.expectOk("create the CA role", "POST", `/v1/${mount}/roles/signer`, {
        token: api.root,
        body: SIGNER_ROLE,
      });
    });
  const edCa = caMount("bench-ed", "ed25519");
  const rsaCa = caMount("bench-rsa", "rsa4096");
  const signBody = JSON.stringify({ public_key: SUBJECT_PUBLIC_KEY, valid_principals: "alice" });

  async function signSetup(mount, ready, token, role = "signer") {
    await ready();
    const res = await api.expectOk("sign once", "POST", `/v1/${mount}/sign/${role}`, {
      token,
      body: JSON.parse(signBody),
    });
    if (!res.json?.data?.signed_key?.startsWith("ssh-ed25519-cert-v01@openssh.com ")) {
      throw new Unavailable(`sign answered ${res.status} without a certificate: ${res.text.slice(0, 160)}`);
    }
    return {
      requests: [{ method: "POST", path: `/v1/${mount}/sign/${role}`, headers: vaultJson(token), body: signBody }],
    };
  }

  // S22: the same signer with store_certificates, on the Ed25519 mount (one D1 write per sign).
  const storingRole = once(async () => {
    await edCa();
    await api.expectOk("create the storing role", "POST", "/v1/bench-ed/roles/storing", {
      token: api.root,
      body: { ...SIGNER_ROLE, store_certificates: true },
    });
  });

  async function storingSignSetup() {
    await storingRole();
    const token = await opsToken();
    const res = await api.expectOk("sign once (stored)", "POST", "/v1/bench-ed/sign/storing", {
      token,
      body: JSON.parse(signBody),
    });
    const serial = res.json?.data?.serial_number;
    if (!serial) throw new Unavailable(`sign answered ${res.status} without a serial`);
    await api.expectOk("read the recorded certificate", "GET", `/v1/bench-ed/cert/${serial}`, { token: api.root });
    return {
      requests: [{ method: "POST", path: "/v1/bench-ed/sign/storing", headers: vaultJson(token), body: signBody }],
    };
  }

  // S23: a KRL with 200 revoked serials and 50 key ids (about 2 KB), read without a token.
  // Each revoke rebuilds the KRL, so a larger one makes the setup slow, not the read.
  const krlMount = once(async () => {
    await api.expectOk("import the KRL mount's CA", "POST", "/v1/bench-krl/config/ca", {
      token: api.root,
      body: { private_key: KEYS.ed25519.privateKey, public_key: KEYS.ed25519.publicKey },
    });
    for (let i = 0; i < 250; i++) {
      const body = i < 200 ? { serial_number: (0x1000 + i * 7919).toString(16) } : { key_id: `bench-user-${i}` };
      await api.expectOk("revoke", "POST", "/v1/bench-krl/revoke", { token: api.root, body });
    }
  });

  // S20: a second, named Ed25519 issuer on bench-ed (not the default) and a role bound to it.
  const namedIssuer = once(async () => {
    await edCa();
    const res = await api.expectOk("generate the named issuer", "POST", "/v1/bench-ed/issuers/import/bench-next", {
      token: api.root,
      body: { key_type: "ed25519" },
    });
    if (!res.json?.data?.issuer_id)
      throw new Unavailable(`issuers/import answered without issuer_id: ${res.text.slice(0, 160)}`);
    await api.expectOk("create the named-issuer role", "POST", "/v1/bench-ed/roles/signer-next", {
      token: api.root,
      body: { ...SIGNER_ROLE, issuer_ref: "bench-next" },
    });
  });

  async function issueSetup(body, { burst = 0 } = {}) {
    await edCa();
    const token = await opsToken();
    const res = await api.expectOk("issue once", "POST", "/v1/bench-ed/issue/signer", { token, body });
    if (!res.json?.data?.private_key) throw new Unavailable(`issue answered ${res.status} without a private key`);
    let note;
    if (burst > 0) {
      // How long a burst of `burst` concurrent issues takes after a quiet 3 s
      // (time for the per-isolate key pool to refill), the case the pool is for; the
      // timed run below is steady load, where the pool cannot help.
      const times = [];
      for (let round = 0; round < 3; round++) {
        await new Promise((r) => setTimeout(r, 3000));
        const t0 = performance.now();
        await Promise.all(
          Array.from({ length: burst }, () =>
            api.expectOk("issue (burst)", "POST", "/v1/bench-ed/issue/signer", { token, body }),
          ),
        );
        times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      note = `a burst of ${burst} after 3 s idle: ${times.map((t) => Math.round(t)).join(", ")} ms (median ${Math.round(times[1])})`;
    }
    const issueOnce = () => api.expectOk("issue (drain)", "POST", "/v1/bench-ed/issue/signer", { token, body });
    return {
      note,
      // The per-isolate key pool refills in quiet moments (0.5 s without a key asked for),
      // which the floor and raw slices between issue slices are. So after each slice the
      // script waits for that refill (it would otherwise slow the next floor or raw
      // slice), and right before each slice it takes the pool's keys untimed: the timed
      // rate is the steady one, where the pool never refills and every request generates
      // its key inline.
      afterSlice: burst > 0 ? () => state.idle(0.6) : undefined,
      beforeSlice: burst > 0 ? () => Promise.all(Array.from({ length: burst }, issueOnce)) : undefined,
      requests: [
        { method: "POST", path: "/v1/bench-ed/issue/signer", headers: vaultJson(token), body: JSON.stringify(body) },
      ],
    };
  }

  return { edCa, rsaCa, signBody, signSetup, storingSignSetup, krlMount, namedIssuer, issueSetup };
}

/** The policy token the SSH benchmarks call with (made once, on first use). */
function opsTokenOnce(api) {
  // Every authenticated SSH benchmark but sign-ed25519-root runs with this token,
  // the kind people use: made by auth/token/create, holding one ordinary ACL policy (S5a)
  // that grants the benchmarks' paths and nothing else. Setup calls (CA import, roles) use root.
  return once(async () => {
    const write = ["create", "update"];
    const policy = {
      path: {
        "bench-ed/sign/*": { capabilities: write },
        "bench-ed/issue/*": { capabilities: write },
        "bench-rsa/sign/*": { capabilities: write },
        "bench-otp/creds/*": { capabilities: write },
        "lookup-small/lookup": { capabilities: ["update"] },
        "lookup-big/lookup": { capabilities: ["update"] },
      },
    };
    await api.expectOk("write the bench-ops policy", "PUT", "/v1/sys/policies/acl/bench-ops", {
      token: api.root,
      body: { policy: JSON.stringify(policy) },
    });
    const res = await api.expectOk("create a policy token", "POST", "/v1/auth/token/create", {
      token: api.root,
      body: { policies: ["bench-ops"], display_name: "bench-ops" },
    });
    const token = res.json?.auth?.client_token;
    if (!token) throw new Unavailable("auth/token/create answered without auth.client_token");
    return token;
  });
}

/** The OTP benchmarks' setups: the OTP role, creds, and verify with pre-minted OTPs. */
function otpSetups(api, state) {
  const otpRoles = new Map();
  const otpRole = (mount) => {
    if (!otpRoles.has(mount)) {
      otpRoles.set(
        mount,
        api.expectOk("create the OTP role", "POST", `/v1/${mount}/roles/otp`, {
          token: api.root,
          body: { key_type: "otp", default_user: "bench", cidr_list: "10.0.0.0/8" },
        }),
      );
    }
    return otpRoles.get(mount);
  };
  const credsBody = JSON.stringify({ ip: "10.1.2.3" });
  /** OTPs minted by creds (timed run and top-up), consumed by verify. */
  const otpPool = [];
  const collectOtp = (status, body) => {
    if (status !== 200) return;
    try {
      const key = JSON.parse(body)?.data?.key;
      if (typeof key === "string") otpPool.push(key);
    } catch {
      // counted as a bad answer by the status, nothing to collect
    }
  };
  const credsRequests = (token) => [
    {
      method: "POST",
      path: "/v1/bench-otp/creds/otp",
      headers: vaultJson(token),
      body: credsBody,
      onResponse: collectOtp,
    },
  ];

  /** verify with distinct OTPs from `pool`, topped up by the probe worker to `needed`. */
  async function verifySetup({ mount, pool, needed, outstanding = 0 }) {
    await otpRole(mount);
    const mint = (count) => state.mintOtps({ mount, roleName: "otp", username: "bench", ip: "10.1.2.3", count });
    const t0 = Date.now();
    // OTPs that stay outstanding (never verified) beside the ones verify consumes.
    for (let left = outstanding; left > 0; left -= 2000) await mint(Math.min(2000, left));
    const before = pool.length;
    // Top up (untimed) so each verify request consumes its own OTP: stored by the probe
    // worker the way creds stores them (same shard, hash and OtpStore put).
    while (pool.length < needed && Date.now() - t0 < state.bulkBudgetS * 1000) {
      pool.push(...(await mint(Math.min(2000, needed - pool.length))));
    }
    const seconds = (Date.now() - t0) / 1000;
    const otp = pool.pop();
    if (!otp) throw new Unavailable("no OTP could be minted (creds unavailable)");
    const res = await api.expectOk("verify once", "POST", `/v1/${mount}/verify`, { body: { otp } });
    if (res.json?.data?.username !== "bench") throw new Unavailable(`verify answered ${res.text.slice(0, 160)}`);
    let next = 0;
    return {
      note:
        `${pool.length + 1} OTPs: ${before} from the creds run, ${pool.length + 1 - before} minted by the probe worker` +
        (outstanding > 0
          ? `, with ${outstanding} more left outstanding (${seconds.toFixed(1)} s)`
          : ` (${seconds.toFixed(1)} s)`),
      pool,
      requests: [
        {
          method: "POST",
          path: `/v1/${mount}/verify`,
          headers: { "Content-Type": "application/json" },
          setupRequest: (req) => ({ ...req, body: JSON.stringify({ otp: pool[next++] }) }),
        },
      ],
    };
  }

  return { otpRole, credsRequests, otpPool, verifySetup };
}

/** The lookup benchmarks' setups: a mount of `count` roles, filled through HTTP then D1. */
function lookupSetups(api, state, opsToken) {
  // Lookup: role r0 is 10.0.0.0/8 in both mounts; r<i> (i ≥ 1) is 10.<i/256>.<i%256>.0/24.
  // The queried addresses 10.0.<1..9>.7 match r0 and one /24 role in both mounts, so both
  // answers hold two roles and only the number of roles in the mount differs.
  const lookupRole = (i) => ({
    key_type: "otp",
    default_user: "bench",
    cidr_list: i === 0 ? "10.0.0.0/8" : `10.${(i >> 8) & 255}.${i & 255}.0/24`,
  });
  const lookupRequests = (mount, token) => {
    let n = 0;
    return [
      {
        method: "POST",
        path: `/v1/${mount}/lookup`,
        headers: vaultJson(token),
        setupRequest: (req) => ({ ...req, body: JSON.stringify({ ip: `10.0.${(n++ % 9) + 1}.7` }) }),
      },
    ];
  };
  async function lookupSetup(mount, count) {
    if (count <= LOOKUP_SMALL_ROLES) {
      for (let i = 0; i < count; i++) {
        await api.expectOk(`create role r${i}`, "POST", `/v1/${mount}/roles/r${i}`, {
          token: api.root,
          body: lookupRole(i),
        });
      }
    } else {
      // Through the HTTP API, 16 at a time, for up to the bulk budget (the rate is reported
      // as role-write); whatever is left then goes straight into D1 (fillRoles).
      await api.expectOk("create role r0", "POST", `/v1/${mount}/roles/r0`, { token: api.root, body: lookupRole(0) });
      await api.expectOk("create role r1", "POST", `/v1/${mount}/roles/r1`, { token: api.root, body: lookupRole(1) });
      let i = 2;
      const loaded = await state.bulkLoad("role-write", {
        amount: count - 2,
        budgetS: state.bulkBudgetS,
        connections: 16,
        requests: [
          {
            method: "POST",
            headers: vaultJson(api.root),
            setupRequest: (req) => {
              const n = i++;
              return { ...req, path: `/v1/${mount}/roles/r${n}`, body: JSON.stringify(lookupRole(n)) };
            },
          },
        ],
      });
      if (loaded.non2xx > 0 || loaded.errors > 0) {
        throw new Unavailable(
          `bulk role create: ${loaded.non2xx} non-2xx answers (first ${loaded.firstBad}), ${loaded.errors} errors`,
        );
      }
      const t0 = Date.now();
      state.lookupFill = await fillRoles(mount, count);
      state.lookupFill.seconds = (Date.now() - t0) / 1000;
    }
    const list = await api.expectOk("list roles", "GET", `/v1/${mount}/roles?list=true`, { token: api.root });
    const keys = list.json?.data?.keys ?? [];
    if (keys.length !== count) throw new Unavailable(`expected ${count} roles in ${mount}, found ${keys.length}`);
    // The first and the last role answer as the API wrote them (the last one may come from
    // the D1 fill: this checks its rows work like putRole's).
    const token = await opsToken();
    for (const n of [1, count - 1]) {
      const ip = `10.${(n >> 8) & 255}.${n & 255}.7`;
      const probe = await api.expectOk("lookup once", "POST", `/v1/${mount}/lookup`, { token, body: { ip } });
      const roles = probe.json?.data?.roles;
      if (!Array.isArray(roles) || roles.join(",") !== `r0,r${n}`) {
        throw new Unavailable(`lookup of ${ip} answered ${JSON.stringify(roles)}, expected ["r0","r${n}"]`);
      }
    }
    const fill = count > LOOKUP_SMALL_ROLES ? state.lookupFill : null;
    const note = fill
      ? `roles: ${fill.viaHttp} via HTTP, ${fill.viaPutRole} in D1 batches by the probe worker (${fill.seconds.toFixed(1)} s)`
      : undefined;
    return { requests: lookupRequests(mount, token), note };
  }

  /**
   * Write the roles r0..r<count-1> that the HTTP phase did not create, through the probe
   * Worker: the same buildRole + putRole the `roles/:name` handler runs, without HTTP.
   */
  async function fillRoles(mount, count) {
    const list = await api.expectOk("list roles", "GET", `/v1/${mount}/roles?list=true`, { token: api.root });
    const existing = new Set(list.json?.data?.keys ?? []);
    const missing = [];
    for (let n = 0; n < count; n++) if (!existing.has(`r${n}`)) missing.push({ name: `r${n}`, body: lookupRole(n) });
    for (let k = 0; k < missing.length; k += 1000) await state.putRoles(mount, missing.slice(k, k + 1000));
    return { viaHttp: existing.size, viaPutRole: missing.length };
  }

  return { lookupSetup };
}

/** The JWT login benchmarks' setups: a signing key, a JWKS server, one auth mount per key source. */
function jwtLoginSetups(api) {
  // S25: JWT auth mounts. One ES256 key made here; a JWT valid for an hour whose subject and
  // claims never change, so every login finds the same entity with an unchanged alias (no
  // D1 write but the token's). `jwks` serves the key from a loopback HTTP server in this
  // process, which the Worker fetches once and then keeps for 10 minutes.
  const jwtKey = once(async () => {
    const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
    const jwk = { ...(await exportJWK(publicKey)), kid: "bench", use: "sig" };
    const now = Math.floor(Date.now() / 1000);
    const jwt = await new SignJWT({
      sub: "bench-ci",
      aud: "keyway-bench",
      repository: "acme/web",
      iat: now,
      exp: now + 3600,
    })
      .setProtectedHeader({ alg: "ES256", kid: "bench" })
      .sign(privateKey);
    return { jwk, pem: await exportSPKI(publicKey), jwt };
  });
  const jwksServer = once(async () => {
    const { jwk } = await jwtKey();
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(undefined)));
    server.unref();
    return `http://127.0.0.1:${/** @type {import("node:net").AddressInfo} */ (server.address()).port}/keys`;
  });
  const jwtMounts = new Map();
  /**
   * S28 admits 60 sign-in requests a minute per client address and mount: a login benchmark
   * from one address would measure 429s. Each login comes from its own address instead
   * (wrangler dev passes `CF-Connecting-IP` through), so the rate limiter's counting is
   * measured without refusing anything.
   */
  let clientNumber = 0;
  function manyClients(req) {
    const n = clientNumber++;
    const address = `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
    return { ...req, headers: { ...req.headers, "CF-Connecting-IP": address } };
  }

  function jwtLoginSetup(mount, source) {
    if (!jwtMounts.has(mount)) {
      jwtMounts.set(
        mount,
        (async () => {
          const { pem, jwt } = await jwtKey();
          await api.expectOk("enable the JWT mount", "POST", `/v1/sys/auth/${mount}`, {
            token: api.root,
            body: { type: "jwt" },
          });
          const config = source === "jwks" ? { jwks_url: await jwksServer() } : { jwt_validation_pubkeys: [pem] };
          await api.expectOk("configure the JWT mount", "POST", `/v1/auth/${mount}/config`, {
            token: api.root,
            body: config,
          });
          await api.expectOk("write the JWT role", "POST", `/v1/auth/${mount}/role/ci`, {
            token: api.root,
            body: {
              role_type: "jwt",
              bound_audiences: ["keyway-bench"],
              bound_claims: { repository: "acme/web" },
              user_claim: "sub",
              claim_mappings: { repository: "repo" },
              token_policies: ["bench-login"],
              token_ttl: "5m",
            },
          });
          await api.expectOk("write the bench-login policy", "PUT", "/v1/sys/policies/acl/bench-login", {
            token: api.root,
            body: {
              policy: JSON.stringify({ path: { "bench-ed/sign/signer": { capabilities: ["create", "update"] } } }),
            },
          });
          const body = JSON.stringify({ role: "ci", jwt });
          const res = await api.expectOk("log in once", "POST", `/v1/auth/${mount}/login`, { body: JSON.parse(body) });
          if (!res.json?.auth?.client_token) throw new Unavailable("login answered without auth.client_token");
          return { body };
        })(),
      );
    }
    return jwtMounts.get(mount);
  }

  /** The timed login request of a JWT mount (set up on first use), each from its own client address. */
  async function jwtLoginRequest(mount, source) {
    const { body } = await jwtLoginSetup(mount, source);
    return { method: "POST", path: `/v1/auth/${mount}/login`, headers: JSON_HEADERS, body, setupRequest: manyClients };
  }

  return { jwtLoginRequest };
}

/** The no-code benchmarks' setups: organizations with their module, team token and workspaces. */
function noCodeSetups(api, state) {
  // No-code: an organization, a user in owners with a token, a registry module whose
  // version 1.0.0 is uploaded and ingested (Queue), and E1 enabling it. The benchmarks call
  // with the token of an ordinary team (docs/performance.md): `bench-devs`, organization access
  // manage-workspaces only (N10: member, read-workspaces, run-workspaces), its token minted
  // by ADMIN_TOKEN (N9). The owner's token only sets things up.
  const benchUser = once(async () => {
    const tokenRes = await api.createUserToken("bench-user");
    const token = tokenRes.json?.data?.attributes?.token;
    if (!token) throw new Unavailable("user token answer lacks data.attributes.token");
    return token;
  });

  async function noCodeOrg(org) {
    const orgRes = await api.expectOk("create the organization", "POST", "/api/v2/organizations", {
      bearer: api.admin,
      body: { data: { type: "organizations", attributes: { name: org, email: "bench@example.test" } } },
    });
    const ownersTeam = orgRes.json?.data?.relationships?.["owners-team"]?.data?.id;
    const project = orgRes.json?.data?.relationships?.["default-project"]?.data?.id;
    if (!ownersTeam || !project) throw new Unavailable("organization answer lacks owners-team or default-project");
    const token = await benchUser();
    await api.expectOk("add the user to owners", "POST", `/api/v2/teams/${ownersTeam}/relationships/users`, {
      bearer: api.admin,
      body: { data: [{ type: "users", id: "bench-user" }] },
    });
    const teamRes = await api.expectOk("create the bench-devs team", "POST", `/api/v2/organizations/${org}/teams`, {
      bearer: api.admin,
      body: {
        data: {
          type: "teams",
          attributes: { name: "bench-devs", "organization-access": { "manage-workspaces": true } },
        },
      },
    });
    const teamTokenRes = await api.expectOk(
      "create the team token",
      "POST",
      `/api/v2/teams/${teamRes.json?.data?.id}/authentication-token`,
      {
        bearer: api.admin,
        body: { data: { type: "authentication-tokens" } },
      },
    );
    const teamToken = teamTokenRes.json?.data?.attributes?.token;
    if (!teamToken) throw new Unavailable("team token answer lacks data.attributes.token");
    const moduleRes = await api.createRegistryModule("create a registry module", org, token, "bench");
    const moduleId = moduleRes.json?.data?.id;
    const base = `/api/v2/organizations/${org}/registry-modules/private/${org}/bench/null`;
    const versionRes = await api.expectOk("create version 1.0.0", "POST", `${base}/versions`, {
      bearer: token,
      body: { data: { type: "registry-module-versions", attributes: { version: "1.0.0" } } },
    });
    const upload = versionRes.json?.data?.links?.upload;
    if (!upload) throw new Unavailable("version answer lacks links.upload");
    await api.expectOk("upload the tarball", "PUT", new URL(upload).pathname, {
      raw: BENCH_MODULE,
      contentType: "application/gzip",
    });
    const deadline = Date.now() + 30_000;
    for (;;) {
      const v = await api.expectOk("read the version", "GET", `${base}/version?module_version=1.0.0`, {
        bearer: token,
      });
      const status = v.json?.data?.attributes?.status;
      if (status === "ok") break;
      if (status !== "pending" && status !== "reg_ingressing") {
        throw new Unavailable(`module version 1.0.0 is ${status}: ${v.json?.data?.attributes?.error ?? ""}`.trim());
      }
      if (Date.now() > deadline) throw new Unavailable(`module version 1.0.0 still ${status} after 30 s`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const e1 = await api.expectOk("E1 enable no-code", "POST", `/api/v2/organizations/${org}/no-code-modules`, {
      bearer: token,
      body: {
        data: {
          type: "no-code-modules",
          attributes: { "version-pin": "1.0.0", enabled: true },
          relationships: { "registry-module": { data: { id: moduleId, type: "registry-modules" } } },
        },
      },
    });
    const id = e1.json?.data?.id;
    if (!id) throw new Unavailable("E1 answer lacks data.id");
    return { org, token: teamToken, id, project };
  }

  /**
   * An organization holding `count` workspaces of its no-code module: one made by E4 (with
   * the team token: it queues one first run), the rest copies of it written by the probe
   * worker in D1 batches, without runs (docs/performance.md).
   */
  async function noCodeOrgWithWorkspaces(org, count) {
    const nc = await noCodeOrg(org);
    const res = await api.expectOk("E4 once", "POST", `/api/v2/no-code-modules/${nc.id}/workspaces`, {
      bearer: nc.token,
      raw: workspaceBody("bench-ws-probe", nc.project),
      contentType: JSONAPI,
    });
    const templateId = res.json?.data?.id;
    if (!templateId) throw new Unavailable("E4 answer lacks data.id");
    const t0 = Date.now();
    await state.seedWorkspaces({ templateId, prefix: "bench-seed-", count: count - 1 });
    const seconds = (Date.now() - t0) / 1000;
    const last = `bench-seed-${count - 2}`;
    const check = await api.call("GET", `/api/v2/organizations/${org}/workspaces/${last}`, { bearer: nc.token });
    if (check.status !== 200 || check.json?.data?.attributes?.name !== last) {
      throw new Unavailable(`seeded workspace ${last} reads as ${check.status} ${check.text.slice(0, 160)}`);
    }
    return {
      ...nc,
      workspaces: count,
      seedNote: `${count} workspaces: 1 by E4, ${count - 1} copies by the probe worker in ${seconds.toFixed(1)} s`,
    };
  }
  const noCode = once(() => noCodeOrgWithWorkspaces("bench-org", SMALL_ORG_WORKSPACES));
  const noCodeBig = once(() => noCodeOrgWithWorkspaces("bench-org-big", BIG_ORG_WORKSPACES));

  const workspaceBody = (name, project) =>
    JSON.stringify({
      data: {
        type: "workspaces",
        attributes: { name },
        relationships: { project: { data: { id: project, type: "projects" } } },
      },
    });

  async function e3Setup(ready) {
    const nc = await ready();
    await api.expectOk("E3 once", "GET", `/api/v2/no-code-modules/${nc.id}`, { bearer: nc.token });
    return {
      note: nc.seedNote,
      requests: [
        { method: "GET", path: `/api/v2/no-code-modules/${nc.id}`, headers: { Authorization: `Bearer ${nc.token}` } },
      ],
    };
  }

  async function e4Setup(ready) {
    const nc = await ready();
    let n = 0;
    return {
      note: nc.seedNote,
      requests: [
        {
          method: "POST",
          path: `/api/v2/no-code-modules/${nc.id}/workspaces`,
          headers: { Authorization: `Bearer ${nc.token}`, "Content-Type": JSONAPI },
          setupRequest: (req) => ({ ...req, body: workspaceBody(`bench-ws-${n++}`, nc.project) }),
        },
      ],
    };
  }

  return { noCode, noCodeBig, e3Setup, e4Setup };
}

/** The module the no-code benchmarks publish: one variable, one resource, its provider (N4, N12). */
const BENCH_MODULE = moduleTarball({ "main.tf": nullResourceModuleMainTf("bench", { output: true }) });
