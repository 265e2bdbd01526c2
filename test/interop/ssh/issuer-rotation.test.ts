/**
 * End to end (decisions S20, S21): a zero-downtime CA rotation against a real OpenSSH, as
 * the README's recipe does it. User certificates: sshd's `TrustedUserCAKeys` is refreshed
 * from `trusted_keys` after every step; certificates of the old and the new issuer both
 * log in while both are trusted; once the old issuer is retired and the bundle refreshed,
 * the old certificate is refused and the new ones still log in. Host certificates: the
 * same through `known_hosts?domain=` and `ssh -o UserKnownHostsFile`. No step refuses a
 * valid certificate of the new issuer.
 *
 * Needs /usr/sbin/sshd (Debian openssh-server, installed by .ci/run); fails with an install
 * hint otherwise, never skips.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { vault, vaultOk } from "../../support/client";
import { OpensshSandbox } from "../../support/openssh";
import { loginUser, type RunningSshd, sshLogin, startSshd } from "../../support/sshd";
import { type RunningKeyway, startKeyway } from "../../support/worker";

const USER = loginUser();
const OK = "keyway-login-ok";
/** `users` rotates its user CA; `hosts` rotates its host CA; `people` signs the users that log in to the hosts. */
const MOUNTS = { users: "ssh", hosts: "ssh-hosts", people: "ssh-people" } as const;
const DOMAIN = "keyway.test";

let keyway: RunningKeyway;
let client: OpensshSandbox;
const servers: RunningSshd[] = [];

/** An unauthenticated text/plain trust file (S21). */
async function trustFile(p: string): Promise<string> {
  const res = await vault(keyway, "GET", p, undefined, null);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/plain");
  expect(res.headers.get("cache-control")).toBe("public, max-age=60");
  return res.text;
}

/** The key fields of an issuer's public key, as trust files list them. */
function keyOf(publicKey: string): string {
  return publicKey.trim().split(/\s+/).slice(0, 2).join(" ");
}

let counter = 0;

async function newKey(): Promise<{ keyPath: string; publicKey: string }> {
  const keyPath = client.path(`key-${++counter}`);
  const res = await client.sshKeygen(["-q", "-t", "ed25519", "-N", "", "-C", "e2e", "-f", keyPath]);
  if (res.code !== 0) throw new Error(res.stderr);
  return { keyPath, publicKey: await readFile(`${keyPath}.pub`, "utf8") };
}

/** A key and a certificate for it from `mount`'s role; checks the issuer that signed. */
async function certified(
  mount: string,
  role: string,
  issuerId: string,
): Promise<{ keyPath: string; certPath: string }> {
  const { keyPath, publicKey } = await newKey();
  const signed = await vaultOk(keyway, "POST", `${mount}/sign/${role}`, { public_key: publicKey });
  expect(signed.json.data.issuer_id).toBe(issuerId);
  const certPath = await client.write(`${path.basename(keyPath)}-cert.pub`, signed.json.data.signed_key, 0o644);
  return { keyPath, certPath };
}

async function userRole(mount: string, extra: Record<string, unknown> = {}): Promise<string> {
  const name = `login-${++counter}`;
  await vaultOk(keyway, "POST", `${mount}/roles/${name}`, {
    key_type: "ca",
    allow_user_certificates: true,
    allowed_users: USER,
    default_user: USER,
    ttl: "30m",
    ...extra,
  });
  return name;
}

async function generateIssuer(mount: string, name: string): Promise<{ id: string; publicKey: string }> {
  const res = await vaultOk(keyway, "POST", `${mount}/issuers/import/${name}`, { key_type: "ed25519" });
  return { id: res.json.data.issuer_id, publicKey: res.json.data.public_key };
}

beforeAll(async () => {
  keyway = await startKeyway({ SSH_MOUNTS: Object.values(MOUNTS).join(",") });
  client = await OpensshSandbox.create("keyway-rotation-client-");
});

afterAll(async () => {
  for (const server of servers) await server.stop();
  await client?.dispose();
  await keyway?.stop();
});

describe("user CA rotation through trusted_keys", () => {
  it("old and new certificates log in while both are trusted; after retirement only the new ones do", async () => {
    const mount = MOUNTS.users;
    // Step 0: the CA in service (config/ca makes it the default issuer).
    const initial = await vaultOk(keyway, "POST", `${mount}/config/ca`, { key_type: "ed25519" });
    const old = (await vaultOk(keyway, "GET", `${mount}/issuer/default`)).json.data as {
      issuer_id: string;
      public_key: string;
    };
    expect(old.public_key).toBe(initial.json.data.public_key);
    const role = await userRole(mount);
    const sshd = await startSshd({ trustedUserCaKeys: await trustFile(`${mount}/trusted_keys`) });
    servers.push(sshd);
    const refresh = async () => {
      const bundle = await trustFile(`${mount}/trusted_keys`);
      await sshd.setTrustedUserCaKeys(bundle);
      return bundle;
    };
    const login = (c: { keyPath: string; certPath: string }) =>
      sshLogin(client, { port: sshd.port, identityFile: c.keyPath, certificateFile: c.certPath });
    const expectLogin = async (c: { keyPath: string; certPath: string }, label: string) => {
      const res = await login(c);
      expect(res.code, `${label}: ${res.stderr}`).toBe(0);
      expect(res.stdout.trim()).toBe(OK);
    };

    const oldCert = await certified(mount, role, old.issuer_id);
    await expectLogin(oldCert, "old certificate before rotation");

    // Step 1: a new issuer, not yet the default; hosts fetch the bundle with both keys.
    const next = await generateIssuer(mount, "next");
    expect(await refresh()).toBe(`${keyOf(old.public_key)}\n${keyOf(next.publicKey)}\n`);
    await expectLogin(oldCert, "old certificate, both trusted");
    const early = await certified(mount, await userRole(mount, { issuer_ref: "next" }), next.id);
    await expectLogin(early, "new issuer's certificate, both trusted");

    // Step 2: the new issuer becomes the default; the default role now signs with it.
    await vaultOk(keyway, "POST", `${mount}/config/issuers`, { default: "next" });
    expect(await refresh()).toBe(`${keyOf(next.publicKey)}\n${keyOf(old.public_key)}\n`);
    const newCert = await certified(mount, role, next.id);
    await expectLogin(newCert, "new default's certificate");
    await expectLogin(oldCert, "old certificate still trusted");

    // Step 3: the old issuer is retired; once hosts refresh, its certificates are refused.
    await vaultOk(keyway, "POST", `${mount}/issuer/${old.issuer_id}`, { trusted: false });
    expect(await refresh()).toBe(`${keyOf(next.publicKey)}\n`);
    const mark = sshd.log().length;
    expect((await login(oldCert)).code, "old certificate after retirement").toBe(255);
    expect(sshd.logSince(mark)).toMatch(new RegExp(`Failed publickey for ${USER} |CA .* is not trusted|not listed`));
    await expectLogin(newCert, "new certificate after retirement");
    await expectLogin(early, "early new certificate after retirement");
    const refused = await vault(
      keyway,
      "POST",
      `${mount}/sign/${await userRole(mount, { issuer_ref: old.issuer_id })}`,
      {
        public_key: (await newKey()).publicKey,
      },
    );
    expect(refused.status).toBe(400);
    expect(refused.json).toEqual({ errors: [`issuer "${old.issuer_id}" is retired`] });

    // Step 4: the old issuer is deleted; nothing changes for the hosts.
    await vaultOk(keyway, "DELETE", `${mount}/issuer/${old.issuer_id}`);
    expect(await refresh()).toBe(`${keyOf(next.publicKey)}\n`);
    await expectLogin(newCert, "new certificate after deletion");
  });
});

describe("host CA rotation through known_hosts", () => {
  const HOST = `host.${DOMAIN}`;
  let userCert: { keyPath: string; certPath: string };
  let peopleBundle: string;

  beforeAll(async () => {
    // The people who log in to the hosts carry certificates of a CA that does not rotate here.
    await vaultOk(keyway, "POST", `${MOUNTS.people}/config/ca`, { key_type: "ed25519" });
    const peopleIssuer = (await vaultOk(keyway, "GET", `${MOUNTS.people}/config/issuers`)).json.data.default as string;
    userCert = await certified(MOUNTS.people, await userRole(MOUNTS.people), peopleIssuer);
    peopleBundle = await trustFile(`${MOUNTS.people}/trusted_keys`);
    await vaultOk(keyway, "POST", `${MOUNTS.hosts}/config/ca`, { key_type: "ed25519" });
    await vaultOk(keyway, "POST", `${MOUNTS.hosts}/roles/hosts`, {
      key_type: "ca",
      allow_host_certificates: true,
      allowed_domains: DOMAIN,
      allow_subdomains: true,
      ttl: "1h",
    });
  });

  /** A host whose certificate is signed now by the hosts mount's default issuer. */
  async function startHost(expectedIssuer: string): Promise<RunningSshd> {
    const host = await startSshd({
      trustedUserCaKeys: peopleBundle,
      hostCertificate: async (hostPublicKey) => {
        const signed = await vaultOk(keyway, "POST", `${MOUNTS.hosts}/sign/hosts`, {
          public_key: hostPublicKey,
          cert_type: "host",
          valid_principals: HOST,
        });
        expect(signed.json.data.issuer_id).toBe(expectedIssuer);
        return signed.json.data.signed_key;
      },
    });
    servers.push(host);
    return host;
  }

  /** ssh to a host with `-o UserKnownHostsFile=` the known_hosts the mount serves now. */
  async function connect(host: RunningSshd) {
    const knownHosts = await trustFile(`${MOUNTS.hosts}/known_hosts?domain=${DOMAIN}`);
    const knownHostsFile = await client.write(`known_hosts-${++counter}`, knownHosts, 0o644);
    return sshLogin(client, {
      port: host.port,
      identityFile: userCert.keyPath,
      certificateFile: userCert.certPath,
      knownHostsFile,
      hostKeyAlias: HOST,
    });
  }

  async function expectConnects(host: RunningSshd, label: string) {
    const res = await connect(host);
    expect(res.code, `${label}: ${res.stderr}`).toBe(0);
    expect(res.stdout.trim()).toBe(OK);
  }

  it("hosts certified by the old and the new issuer are both accepted until the old one is retired", async () => {
    const old = (await vaultOk(keyway, "GET", `${MOUNTS.hosts}/issuer/default`)).json.data as {
      issuer_id: string;
      public_key: string;
    };
    const oldHost = await startHost(old.issuer_id);
    expect(await trustFile(`${MOUNTS.hosts}/known_hosts?domain=${DOMAIN}`)).toBe(
      `@cert-authority *.${DOMAIN},${DOMAIN} ${keyOf(old.public_key)}\n`,
    );
    await expectConnects(oldHost, "old host before rotation");

    const next = await generateIssuer(MOUNTS.hosts, "next-hosts");
    await expectConnects(oldHost, "old host, both trusted");

    await vaultOk(keyway, "POST", `${MOUNTS.hosts}/config/issuers`, { default: "next-hosts" });
    const newHost = await startHost(next.id);
    expect(await trustFile(`${MOUNTS.hosts}/known_hosts?domain=${DOMAIN}`)).toBe(
      `@cert-authority *.${DOMAIN},${DOMAIN} ${keyOf(next.publicKey)}\n@cert-authority *.${DOMAIN},${DOMAIN} ${keyOf(old.public_key)}\n`,
    );
    await expectConnects(newHost, "new host, both trusted");
    await expectConnects(oldHost, "old host, both trusted, new default");

    await vaultOk(keyway, "PATCH", `${MOUNTS.hosts}/issuer/${old.issuer_id}`, { trusted: false });
    const refused = await connect(oldHost);
    expect(refused.code).toBe(255);
    expect(refused.stderr).toMatch(/Host key verification failed/);
    await expectConnects(newHost, "new host after retirement");
  });
});
