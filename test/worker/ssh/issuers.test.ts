/**
 * SSH issuers (decision S20, OpenBao's API; vault-ssh-behaviour §10) and the trust bundle
 * (S21): every issuer endpoint, OpenBao's error texts, role `issuer_ref`, sign and issue
 * through named issuers, retirement, `trusted_keys` and `known_hosts`. Each test starts
 * from a mount without issuers (`DELETE config/ca` removes them all) nor roles.
 */
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { createDb } from "../../../src/db/client";
import { bytesEqual } from "../../../src/lib/bytes";
import { insertIssuer } from "../../../src/ssh/issuers/repo";
import { isNameConflict } from "../../../src/ssh/issuers/service";
import { tokenWithPolicy, uniqueName, vault } from "../../helpers/vault";
import { blobOf, CA_KEYS, decodeSignedKey, SUBJECT_KEYS } from "./ca-fixtures";

const MOUNT = "ssh-two";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const USER_ROLE = { key_type: "ca", allow_user_certificates: true, allowed_users: "*", ttl: "10m" };

type Pair = { privateKey: string; publicKey: string };

function importIssuer(pair: Pair, options: { name?: string; body?: Record<string, unknown> } = {}) {
  const path = options.name === undefined ? `${MOUNT}/issuers/import` : `${MOUNT}/issuers/import/${options.name}`;
  return vault("POST", path, { body: { private_key: pair.privateKey, public_key: pair.publicKey, ...options.body } });
}

async function importOk(pair: Pair, options: { name?: string; body?: Record<string, unknown> } = {}): Promise<string> {
  const res = await importIssuer(pair, options);
  if (res.status !== 200) throw new Error(`import failed: ${res.status} ${res.text}`);
  return res.json.data.issuer_id as string;
}

async function role(body: Record<string, unknown>): Promise<string> {
  const name = uniqueName("role");
  const res = await vault("POST", `${MOUNT}/roles/${name}`, { body });
  if (res.status !== 204) throw new Error(`role write failed: ${res.status} ${res.text}`);
  return name;
}

function sign(roleName: string) {
  return vault("POST", `${MOUNT}/sign/${roleName}`, { body: { public_key: SUBJECT_KEYS.ed25519, valid_principals: "alice" } });
}

/** The CA key blob a signed certificate names. */
function signerOf(signedKey: string): Uint8Array {
  return decodeSignedKey(signedKey).signatureKey;
}

beforeEach(async () => {
  const res = await vault("DELETE", `${MOUNT}/config/ca`);
  expect(res.status).toBe(204);
  // Roles of earlier tests would count in OpenBao's "roles reference" warnings.
  const roles = await vault("GET", `${MOUNT}/roles?list=true`);
  for (const name of (roles.json?.data?.keys ?? []) as string[]) await vault("DELETE", `${MOUNT}/roles/${name}`);
});

describe("import and list (S20)", () => {
  it("the first issuer becomes the default; later ones only with set_default", async () => {
    const first = await importIssuer(CA_KEYS.ed25519);
    expect(first.status).toBe(200);
    expect(first.json.data).toEqual({
      issuer_id: expect.stringMatching(UUID),
      issuer_name: "",
      public_key: CA_KEYS.ed25519.publicKey,
      trusted: true,
    });
    const firstId = first.json.data.issuer_id;
    const second = await importIssuer(CA_KEYS.ecdsa256, { name: "second" });
    expect(second.status).toBe(200);
    expect(second.json.data.issuer_name).toBe("second");
    const secondId = second.json.data.issuer_id;

    const list = await vault("GET", `${MOUNT}/issuers?list=true`);
    expect(list.status).toBe(200);
    expect(list.json.data.keys).toEqual([firstId, secondId].sort());
    expect(list.json.data.key_info[firstId]).toEqual({
      issuer_name: "",
      is_default: true,
      public_key: CA_KEYS.ed25519.publicKey,
      trusted: true,
    });
    expect(list.json.data.key_info[secondId]).toEqual({
      issuer_name: "second",
      is_default: false,
      public_key: CA_KEYS.ecdsa256.publicKey,
      trusted: true,
    });

    const third = await importOk(CA_KEYS.ecdsa384, { body: { issuer_name: "third", set_default: true } });
    expect((await vault("GET", `${MOUNT}/config/issuers`)).json.data).toEqual({ default: third });
    expect((await vault("GET", `${MOUNT}/issuer/default`)).json.data.issuer_name).toBe("third");
  });

  it("lists page with after and limit (OpenBao), and an empty list is 404", async () => {
    expect((await vault("GET", `${MOUNT}/issuers?list=true`)).status).toBe(404);
    const ids = [await importOk(CA_KEYS.ed25519), await importOk(CA_KEYS.ecdsa256), await importOk(CA_KEYS.ecdsa384)].sort();
    expect((await vault("GET", `${MOUNT}/issuers?list=true&limit=2`)).json.data.keys).toEqual(ids.slice(0, 2));
    expect((await vault("GET", `${MOUNT}/issuers?list=true&after=${ids[0]}`)).json.data.keys).toEqual(ids.slice(1));
    expect((await vault("GET", `${MOUNT}/issuers/?list=true`)).json.data.keys).toEqual(ids);
    expect((await vault("GET", `${MOUNT}/issuers?list=true&limit=x`)).status).toBe(400);
  });

  it("generates a key pair when none is supplied", async () => {
    const res = await vault("POST", `${MOUNT}/issuers/import/gen`, { body: { key_type: "ed25519" } });
    expect(res.status).toBe(200);
    expect(res.json.data.public_key).toMatch(/^ssh-ed25519 AAAA/);
    expect(res.json.data.issuer_name).toBe("gen");
    const bad = await vault("POST", `${MOUNT}/issuers/import`, { body: { key_type: "rsa", key_bits: 1024 } });
    expect(bad.status).toBe(400);
    expect(bad.json.errors).toEqual(["refusing to generate weak rsa key: 1024 bits < 2048 bits"]);
  });

  it("importing a key pair already held answers that issuer with OpenBao's warning", async () => {
    const id = await importOk(CA_KEYS.ed25519, { name: "held" });
    const again = await importIssuer(CA_KEYS.ed25519, { name: "other" });
    expect(again.status).toBe(200);
    expect(again.json.data.issuer_id).toBe(id);
    expect(again.json.data.issuer_name).toBe("held");
    expect(again.json.warnings).toEqual(["An issuer with the provided public key already exists, returning the existing issuer"]);
    expect((await vault("GET", `${MOUNT}/issuers?list=true`)).json.data.keys).toEqual([id]);
  });

  it("refuses duplicate, reserved and malformed names with OpenBao's texts, storing nothing", async () => {
    await importOk(CA_KEYS.ed25519, { name: "taken" });
    const cases: [Promise<Awaited<ReturnType<typeof vault>>>, string][] = [
      [importIssuer(CA_KEYS.ecdsa256, { name: "taken" }), "issuer name already in use"],
      [importIssuer(CA_KEYS.ecdsa256, { name: "default" }), "reserved keyword 'default' can not be used as issuer name"],
      [importIssuer(CA_KEYS.ecdsa256, { body: { issuer_name: "DeFault" } }), "reserved keyword 'default' can not be used as issuer name"],
      [importIssuer(CA_KEYS.ecdsa256, { body: { issuer_name: "a b" } }), "issuer name contained invalid characters"],
      [importIssuer(CA_KEYS.ecdsa256, { body: { issuer_name: "-lead" } }), "issuer name contained invalid characters"],
    ];
    for (const [pending, message] of cases) {
      const res = await pending;
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ errors: [message] });
    }
    expect((await vault("GET", `${MOUNT}/issuers?list=true`)).json.data.keys).toHaveLength(1);
  });

  it("the unique index refuses a duplicate name that slips past the check (a race), recognised as such", async () => {
    const db = createDb(env.DB);
    const issuer = { name: "racy", publicKeyText: CA_KEYS.ed25519.publicKey, privateKeyPem: CA_KEYS.ed25519.privateKey, keyType: "ssh-ed25519" };
    await insertIssuer(env, db, MOUNT, issuer, false);
    const second = await insertIssuer(env, db, MOUNT, { ...issuer, publicKeyText: CA_KEYS.ecdsa256.publicKey }, false).catch((e: unknown) => e);
    expect(isNameConflict(second)).toBe(true);
    expect(isNameConflict(new Error("something else"))).toBe(false);
  });

  it("a supplied pair that does not match is refused (S9)", async () => {
    const res = await vault("POST", `${MOUNT}/issuers/import`, {
      body: { private_key: CA_KEYS.ed25519.privateKey, public_key: CA_KEYS.ecdsa256.publicKey },
    });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ errors: ["public_key does not match private_key"] });
  });
});

describe("issuer/:issuer_ref (S20)", () => {
  it("reads by id, by name and as default; an unknown reference is OpenBao's 400", async () => {
    const id = await importOk(CA_KEYS.ed25519, { name: "main" });
    for (const ref of [id, "main", "default"]) {
      const res = await vault("GET", `${MOUNT}/issuer/${ref}`);
      expect(res.status).toBe(200);
      expect(res.json.data).toEqual({ issuer_id: id, issuer_name: "main", public_key: CA_KEYS.ed25519.publicKey, trusted: true });
    }
    const unknown = await vault("GET", `${MOUNT}/issuer/nope`);
    expect(unknown.status).toBe(400);
    expect(unknown.json).toEqual({ errors: ["unable to find issuer for reference: nope"] });
    // S2b: a spelling the handler would have to normalise is refused, not rewritten.
    expect((await vault("GET", `${MOUNT}/issuer/DEFAULT`)).status).toBe(400);
  });

  it("renames (POST and PATCH), warning about roles that used the old name", async () => {
    const id = await importOk(CA_KEYS.ed25519, { name: "old" });
    await importOk(CA_KEYS.ecdsa256, { name: "other" });
    const bound = await role({ ...USER_ROLE, issuer_ref: "old" });
    const renamed = await vault("POST", `${MOUNT}/issuer/old`, { body: { issuer_name: "new" } });
    expect(renamed.status).toBe(200);
    expect(renamed.json.data).toMatchObject({ issuer_id: id, issuer_name: "new" });
    expect(renamed.json.warnings).toEqual(["1 roles reference 'old'"]);
    expect((await vault("GET", `${MOUNT}/issuer/old`)).status).toBe(400);
    // The role still names "old", which no longer resolves.
    expect((await sign(bound)).json).toEqual({ errors: ["unable to find issuer for reference: old"] });

    const patched = await vault("PATCH", `${MOUNT}/issuer/${id}`, { body: { issuer_name: "newer" } });
    expect(patched.status).toBe(200);
    expect(patched.json.data.issuer_name).toBe("newer");
    const same = await vault("POST", `${MOUNT}/issuer/newer`, { body: { issuer_name: "newer" } });
    expect(same.status).toBe(200);
    expect(same.json.data.issuer_name).toBe("newer");

    for (const [name, message] of [
      ["other", "issuer name already in use"],
      ["", "expected non-empty issuer name"],
      ["default", "reserved keyword 'default' can not be used as issuer name"],
      ["x y", "issuer name contained invalid characters"],
    ]) {
      const res = await vault("POST", `${MOUNT}/issuer/newer`, { body: { issuer_name: name } });
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ errors: [message] });
    }
    expect((await vault("GET", `${MOUNT}/issuer/${id}`)).json.data.issuer_name).toBe("newer");
    // A write that only changes trust keeps the name.
    const untouched = await vault("POST", `${MOUNT}/issuer/newer`, { body: { trusted: true } });
    expect(untouched.json.data.issuer_name).toBe("newer");
  });

  it("deleting the default is allowed and answers OpenBao's warning; then nothing signs through default", async () => {
    const id = await importOk(CA_KEYS.ed25519, { name: "only" });
    await importOk(CA_KEYS.ecdsa256, { name: "spare" });
    const roleName = await role(USER_ROLE);
    const del = await vault("DELETE", `${MOUNT}/issuer/only`);
    expect(del.status).toBe(200);
    expect(del.json.warnings).toEqual([
      `Deleted issuer ${id} (via issuer_ref only); this was configured as the default issuer. Operations without an explicit issuer will not work until a new default is configured.`,
      "1 roles reference 'default'",
    ]);
    expect((await vault("GET", `${MOUNT}/config/issuers`)).json).toEqual({ errors: ["no default issuer currently configured"] });
    expect((await vault("GET", `${MOUNT}/issuer/default`)).json).toEqual({ errors: ["no default issuer currently configured"] });
    const signed = await sign(roleName);
    expect(signed.status).toBe(400);
    expect(signed.json).toEqual({ errors: ["no default issuer currently configured"] });
    expect((await vault("GET", `${MOUNT}/config/ca`)).json).toEqual({ errors: ["no default issuer currently configured"] });
    // Deleting what is not there is 204 (OpenBao).
    expect((await vault("DELETE", `${MOUNT}/issuer/only`)).status).toBe(204);
    expect((await vault("DELETE", `${MOUNT}/issuer/default`)).status).toBe(204);
    // A non-default issuer goes without a warning.
    expect((await vault("DELETE", `${MOUNT}/issuer/spare`)).status).toBe(204);
  });

  it("serves each issuer's public key without a token, as text/plain; other methods need one", async () => {
    await importOk(CA_KEYS.ed25519);
    const named = await importOk(CA_KEYS.ecdsa256, { name: "named" });
    for (const [ref, key] of [
      ["default", CA_KEYS.ed25519.publicKey],
      ["named", CA_KEYS.ecdsa256.publicKey],
      [named, CA_KEYS.ecdsa256.publicKey],
    ]) {
      const res = await vault("GET", `${MOUNT}/issuer/${ref}/public_key`, { token: null });
      expect(res.status).toBe(200);
      expect(res.headers.get("Content-Type")).toBe("text/plain");
      expect(res.text).toBe(key);
    }
    const unknown = await vault("GET", `${MOUNT}/issuer/nope/public_key`, { token: null });
    expect(unknown.status).toBe(400);
    expect(unknown.json).toEqual({ errors: ["unable to find issuer for reference: nope"] });
    expect((await vault("POST", `${MOUNT}/issuer/named/public_key`, { token: null })).status).toBe(403);
    expect((await vault("GET", `${MOUNT}/issuer/named`, { token: null })).status).toBe(403);
    expect((await vault("GET", `${MOUNT}/issuers?list=true`, { token: null })).status).toBe(403);
  });

  it("is governed by the ACL like any path", async () => {
    await importOk(CA_KEYS.ed25519, { name: "acl" });
    const reader = await tokenWithPolicy({ [`${MOUNT}/issuer/*`]: ["read"] });
    expect((await vault("GET", `${MOUNT}/issuer/acl`, { token: reader })).status).toBe(200);
    expect((await vault("POST", `${MOUNT}/issuer/acl`, { token: reader, body: { trusted: false } })).status).toBe(403);
    expect((await vault("GET", `${MOUNT}/issuers?list=true`, { token: reader })).status).toBe(403);
  });
});

describe("config/issuers (S20)", () => {
  it("sets the default by name or id with OpenBao's warnings and errors", async () => {
    const a = await importOk(CA_KEYS.ed25519, { name: "a" });
    const b = await importOk(CA_KEYS.ecdsa256, { name: "b" });
    expect((await vault("GET", `${MOUNT}/config/issuers`)).json.data).toEqual({ default: a });
    const set = await vault("POST", `${MOUNT}/config/issuers`, { body: { default: "b" } });
    expect(set.status).toBe(200);
    expect(set.json.data).toEqual({ default: b });
    expect(set.json.warnings).toEqual([`Previous default (${a}) has been updated with the issuer 'b' (resolved to ${b})`]);
    const again = await vault("POST", `${MOUNT}/config/issuers`, { body: { default: b } });
    expect(again.json.warnings).toEqual(["The default issuer is already set to the specified issuer."]);
    for (const value of ["", "default", " Default "]) {
      const res = await vault("POST", `${MOUNT}/config/issuers`, { body: { default: value } });
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ errors: ["Invalid issuer specification; must be non-empty and can't be 'default'."] });
    }
    const unknown = await vault("POST", `${MOUNT}/config/issuers`, { body: { default: "zzz" } });
    expect(unknown.json).toEqual({ errors: ["unable to find issuer for reference: zzz"] });
    expect((await vault("GET", `${MOUNT}/config/issuers`)).json.data).toEqual({ default: b });
  });
});

describe("config/ca and public_key act on the default issuer (S20)", () => {
  it("POST config/ca adds a new default issuer and keeps the old; DELETE removes every issuer", async () => {
    const first = await vault("POST", `${MOUNT}/config/ca`, { body: { private_key: CA_KEYS.ed25519.privateKey, public_key: CA_KEYS.ed25519.publicKey } });
    expect(first.status).toBe(204);
    const generated = await vault("POST", `${MOUNT}/config/ca`, { body: { key_type: "ed25519" } });
    expect(generated.status).toBe(200);
    expect(Object.keys(generated.json.data)).toEqual(["public_key"]);
    const list = await vault("GET", `${MOUNT}/issuers?list=true`);
    expect(list.json.data.keys).toHaveLength(2);
    const defaults = Object.values(list.json.data.key_info as Record<string, { is_default: boolean; public_key: string }>).filter((i) => i.is_default);
    expect(defaults.map((i) => i.public_key)).toEqual([generated.json.data.public_key]);
    expect((await vault("GET", `${MOUNT}/config/ca`)).json.data).toEqual({ public_key: generated.json.data.public_key });
    expect((await vault("GET", `${MOUNT}/public_key`, { token: null })).text).toBe(generated.json.data.public_key);

    // Supplying the first pair again makes that issuer the default again (no new issuer).
    const back = await vault("POST", `${MOUNT}/config/ca`, { body: { private_key: CA_KEYS.ed25519.privateKey, public_key: CA_KEYS.ed25519.publicKey } });
    expect(back.status).toBe(200);
    expect(back.json.warnings).toEqual(["An issuer with the provided public key already exists, returning the existing issuer"]);
    expect((await vault("GET", `${MOUNT}/public_key`, { token: null })).text).toBe(CA_KEYS.ed25519.publicKey);
    expect((await vault("GET", `${MOUNT}/issuers?list=true`)).json.data.keys).toHaveLength(2);

    expect((await vault("DELETE", `${MOUNT}/config/ca`)).status).toBe(204);
    expect((await vault("GET", `${MOUNT}/issuers?list=true`)).status).toBe(404);
    expect((await vault("GET", `${MOUNT}/config/ca`)).json).toEqual({ errors: ["keys haven't been configured yet"] });
    expect((await vault("GET", `${MOUNT}/public_key`, { token: null })).status).toBe(404);
  });

  it("sign with no issuer at all keeps S4's text", async () => {
    const roleName = await role(USER_ROLE);
    const res = await sign(roleName);
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ errors: ["failed to read CA private key"] });
  });
});

describe("roles bind an issuer (S20)", () => {
  it("issuer_ref defaults to default, is validated on write, and reads back", async () => {
    const named = await importOk(CA_KEYS.ecdsa256, { name: "bound" });
    const plain = await role(USER_ROLE);
    expect((await vault("GET", `${MOUNT}/roles/${plain}`)).json.data.issuer_ref).toBe("default");
    const spelled = await role({ ...USER_ROLE, issuer_ref: " DEFAULT " });
    expect((await vault("GET", `${MOUNT}/roles/${spelled}`)).json.data.issuer_ref).toBe("default");
    const byName = await role({ ...USER_ROLE, issuer_ref: "bound" });
    const byId = await role({ ...USER_ROLE, issuer_ref: named });
    const list = await vault("GET", `${MOUNT}/roles?list=true`);
    expect(list.json.data.key_info[byName]).toEqual({ key_type: "ca", issuer_ref: "bound" });
    expect(list.json.data.key_info[byId]).toEqual({ key_type: "ca", issuer_ref: named });

    const name = uniqueName("role");
    const unknown = await vault("POST", `${MOUNT}/roles/${name}`, { body: { ...USER_ROLE, issuer_ref: "missing" } });
    expect(unknown.status).toBe(400);
    expect(unknown.json).toEqual({ errors: ["unable to find issuer for reference: missing"] });
    const malformed = await vault("POST", `${MOUNT}/roles/${name}`, { body: { ...USER_ROLE, issuer_ref: "a b" } });
    expect(malformed.status).toBe(400);
    expect(malformed.json.errors[0]).toMatch(/^invalid issuer_ref "a b"/);
    expect((await vault("GET", `${MOUNT}/roles/${name}`)).status).toBe(404);
    // PATCH is validated the same way.
    const patched = await vault("PATCH", `${MOUNT}/roles/${byName}`, { body: { issuer_ref: "missing" } });
    expect(patched.status).toBe(400);
    expect((await vault("GET", `${MOUNT}/roles/${byName}`)).json.data.issuer_ref).toBe("bound");
  });

  it("sign and issue use the role's issuer and answer its issuer_id", async () => {
    const def = await importOk(CA_KEYS.ed25519);
    const named = await importOk(CA_KEYS.ecdsa256, { name: "named" });
    const viaDefault = await role(USER_ROLE);
    const viaNamed = await role({ ...USER_ROLE, issuer_ref: "named" });

    const a = await sign(viaDefault);
    expect(a.status).toBe(200);
    expect(a.json.data.issuer_id).toBe(def);
    expect(bytesEqual(signerOf(a.json.data.signed_key), blobOf(CA_KEYS.ed25519.publicKey))).toBe(true);
    const b = await sign(viaNamed);
    expect(b.json.data.issuer_id).toBe(named);
    expect(bytesEqual(signerOf(b.json.data.signed_key), blobOf(CA_KEYS.ecdsa256.publicKey))).toBe(true);
    const issued = await vault("POST", `${MOUNT}/issue/${viaNamed}`, { body: { key_type: "ed25519", valid_principals: "alice" } });
    expect(issued.status).toBe(200);
    expect(issued.json.data.issuer_id).toBe(named);
    expect(bytesEqual(signerOf(issued.json.data.signed_key), blobOf(CA_KEYS.ecdsa256.publicKey))).toBe(true);

    // A change of default reaches the very next sign in this isolate (cache invalidated at once).
    await vault("POST", `${MOUNT}/config/issuers`, { body: { default: "named" } });
    expect((await sign(viaDefault)).json.data.issuer_id).toBe(named);
  });
});

describe("retirement and the trust bundle (S21)", () => {
  it("a retired issuer cannot sign nor be default, and leaves trusted_keys and known_hosts", async () => {
    const oldId = await importOk(CA_KEYS.ed25519, { name: "old" });
    const newId = await importOk(CA_KEYS.ecdsa256, { name: "new" });
    const viaOld = await role({ ...USER_ROLE, issuer_ref: "old" });

    const both = await vault("GET", `${MOUNT}/trusted_keys`, { token: null });
    expect(both.status).toBe(200);
    expect(both.headers.get("Content-Type")).toBe("text/plain");
    expect(both.headers.get("Cache-Control")).toBe("public, max-age=60");
    const lines = (k: string) => `${k.trim().split(" ").slice(0, 2).join(" ")}\n`;
    expect(both.text).toBe(lines(CA_KEYS.ed25519.publicKey) + lines(CA_KEYS.ecdsa256.publicKey));
    const etag = both.headers.get("ETag")!;
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    const cached = await vault("GET", `${MOUNT}/trusted_keys`, { token: null, headers: { "If-None-Match": etag } });
    expect(cached.status).toBe(304);

    // The default can be neither retired nor replaced by a retired issuer.
    const retireDefault = await vault("POST", `${MOUNT}/issuer/old`, { body: { trusted: false } });
    expect(retireDefault.status).toBe(400);
    expect(retireDefault.json).toEqual({ errors: ["the default issuer cannot be retired; make another issuer the default first"] });
    await vault("POST", `${MOUNT}/config/issuers`, { body: { default: "new" } });
    // Default first in the bundle.
    expect((await vault("GET", `${MOUNT}/trusted_keys`, { token: null })).text).toBe(
      lines(CA_KEYS.ecdsa256.publicKey) + lines(CA_KEYS.ed25519.publicKey),
    );
    const retired = await vault("PATCH", `${MOUNT}/issuer/old`, { body: { trusted: false } });
    expect(retired.status).toBe(200);
    expect(retired.json.data).toMatchObject({ issuer_id: oldId, trusted: false });

    const refused = await sign(viaOld);
    expect(refused.status).toBe(400);
    expect(refused.json).toEqual({ errors: ['issuer "old" is retired'] });
    const asDefault = await vault("POST", `${MOUNT}/config/issuers`, { body: { default: "old" } });
    expect(asDefault.status).toBe(400);
    expect(asDefault.json.errors[0]).toMatch(/^issuer "old" is retired/);
    const importRetiredDefault = await importIssuer(CA_KEYS.ecdsa384, { body: { trusted: false, set_default: true } });
    expect(importRetiredDefault.status).toBe(400);

    const after = await vault("GET", `${MOUNT}/trusted_keys`, { token: null, headers: { "If-None-Match": etag } });
    expect(after.status).toBe(200);
    expect(after.text).toBe(lines(CA_KEYS.ecdsa256.publicKey));
    expect(after.headers.get("ETag")).not.toBe(etag);
    const hosts = await vault("GET", `${MOUNT}/known_hosts?domain=example.com`, { token: null });
    expect(hosts.status).toBe(200);
    expect(hosts.headers.get("Cache-Control")).toBe("public, max-age=60");
    expect(hosts.headers.get("ETag")).toMatch(/^"[0-9a-f]{32}"$/);
    expect(hosts.text).toBe(`@cert-authority *.example.com,example.com ${lines(CA_KEYS.ecdsa256.publicKey)}`);
    const list = await vault("GET", `${MOUNT}/issuers?list=true`);
    expect(list.json.data.key_info[oldId].trusted).toBe(false);
    expect(list.json.data.key_info[newId]).toMatchObject({ trusted: true, is_default: true });

    // Restored, it signs again; deleted, it is gone.
    expect((await vault("POST", `${MOUNT}/issuer/old`, { body: { trusted: true } })).json.data.trusted).toBe(true);
    expect((await sign(viaOld)).status).toBe(200);
    expect((await vault("DELETE", `${MOUNT}/issuer/old`)).json.warnings).toEqual(["1 roles reference 'old'"]);
  });

  it("known_hosts validates its domain", async () => {
    await importOk(CA_KEYS.ed25519);
    const missing = await vault("GET", `${MOUNT}/known_hosts`, { token: null });
    expect(missing.status).toBe(400);
    expect(missing.json).toEqual({ errors: ["missing domain"] });
    for (const domain of ["a b", "*.example.com", "ex,ample", "x".repeat(254), "a\nb", "@cert-authority"]) {
      const res = await vault("GET", `${MOUNT}/known_hosts?domain=${encodeURIComponent(domain)}`, { token: null });
      expect(res.status).toBe(400);
      expect(res.json.errors[0]).toMatch(/^invalid domain/);
    }
    expect((await vault("GET", `${MOUNT}/known_hosts?domain=${"x".repeat(253)}`, { token: null })).status).toBe(200);
    expect((await vault("POST", `${MOUNT}/known_hosts?domain=a`, { token: null })).status).toBe(403);
    expect((await vault("POST", `${MOUNT}/trusted_keys`, { token: null })).status).toBe(403);
  });

  it("an empty bundle is an empty 200", async () => {
    const res = await vault("GET", `${MOUNT}/trusted_keys`, { token: null });
    expect(res.status).toBe(200);
    expect(res.text).toBe("");
  });
});
