/**
 * SSH issuers (decision S20, OpenBao's API: https://openbao.org/api-docs/secret/ssh/): every issuer
 * endpoint and OpenBao's error texts: import and list, issuer/:issuer_ref, config/issuers,
 * and config/ca and public_key acting on the default issuer. Roles bound to issuers and
 * the trust bundle (S21): roles-and-trust.test.ts. Each test starts from a mount
 * without issuers nor roles.
 */
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { createDb } from "../../../../src/db/client";
import { insertIssuer } from "../../../../src/ssh/issuers/repo";
import { isNameConflict } from "../../../../src/ssh/issuers/service";
import {
  importIssuer,
  importOk,
  MOUNT,
  resetIssuerMount,
  role,
  sign,
  USER_ROLE,
  UUID,
} from "../../../helpers/ssh-issuers";
import { tokenWithPolicy, vault } from "../../../helpers/vault";
import { CA_KEYS } from "../ca-fixtures";

beforeEach(resetIssuerMount);

describe("import and list (S20)", () => {
  it("the first issuer becomes the default; later ones only with set_default", async () => {
    const first = await importIssuer(CA_KEYS.ed25519);
    expect(first.status).toBe(200);
    expect(first.json.data).toEqual({
      issuer_id: expect.stringMatching(UUID),
      issuer_name: "",
      public_key: CA_KEYS.ed25519.publicKey.trim(),
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
      public_key: CA_KEYS.ed25519.publicKey.trim(),
      trusted: true,
    });
    expect(list.json.data.key_info[secondId]).toEqual({
      issuer_name: "second",
      is_default: false,
      public_key: CA_KEYS.ecdsa256.publicKey.trim(),
      trusted: true,
    });

    const third = await importOk(CA_KEYS.ecdsa384, { body: { issuer_name: "third", set_default: true } });
    expect((await vault("GET", `${MOUNT}/config/issuers`)).json.data).toEqual({ default: third });
    expect((await vault("GET", `${MOUNT}/issuer/default`)).json.data.issuer_name).toBe("third");
  });

  it("lists page with after and limit (OpenBao), and an empty list is 404", async () => {
    expect((await vault("GET", `${MOUNT}/issuers?list=true`)).status).toBe(404);
    const ids = [
      await importOk(CA_KEYS.ed25519),
      await importOk(CA_KEYS.ecdsa256),
      await importOk(CA_KEYS.ecdsa384),
    ].sort();
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
    expect(again.json.warnings).toEqual([
      "An issuer with the provided public key already exists, returning the existing issuer",
    ]);
    expect((await vault("GET", `${MOUNT}/issuers?list=true`)).json.data.keys).toEqual([id]);
  });

  it("refuses duplicate, reserved and malformed names with OpenBao's texts, storing nothing", async () => {
    await importOk(CA_KEYS.ed25519, { name: "taken" });
    const cases: [Promise<Awaited<ReturnType<typeof vault>>>, string][] = [
      [importIssuer(CA_KEYS.ecdsa256, { name: "taken" }), "issuer name already in use"],
      [
        importIssuer(CA_KEYS.ecdsa256, { name: "default" }),
        "reserved keyword 'default' can not be used as issuer name",
      ],
      [
        importIssuer(CA_KEYS.ecdsa256, { body: { issuer_name: "DeFault" } }),
        "reserved keyword 'default' can not be used as issuer name",
      ],
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
    const issuer = {
      name: "racy",
      publicKeyText: CA_KEYS.ed25519.publicKey,
      privateKeyPem: CA_KEYS.ed25519.privateKey,
      keyType: "ssh-ed25519",
    };
    await insertIssuer(env, db, MOUNT, issuer, false);
    const second = await insertIssuer(
      env,
      db,
      MOUNT,
      { ...issuer, publicKeyText: CA_KEYS.ecdsa256.publicKey },
      false,
    ).catch((e: unknown) => e);
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
      expect(res.json.data).toEqual({
        issuer_id: id,
        issuer_name: "main",
        public_key: CA_KEYS.ed25519.publicKey.trim(),
        trusted: true,
      });
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
    // S20a: reading the configuration is 200 with an empty default (OpenBao's source);
    // resolving `default` (issuer/default, sign, config/ca) keeps the 400.
    const config = await vault("GET", `${MOUNT}/config/issuers`);
    expect(config.status).toBe(200);
    expect(config.json.data).toEqual({ default: "" });
    expect((await vault("GET", `${MOUNT}/issuer/default`)).json).toEqual({
      errors: ["no default issuer currently configured"],
    });
    const signed = await sign(roleName);
    expect(signed.status).toBe(400);
    expect(signed.json).toEqual({ errors: ["no default issuer currently configured"] });
    expect((await vault("GET", `${MOUNT}/config/ca`)).json).toEqual({
      errors: ["no default issuer currently configured"],
    });
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
      ["default", CA_KEYS.ed25519.publicKey.trim()],
      ["named", CA_KEYS.ecdsa256.publicKey.trim()],
      [named, CA_KEYS.ecdsa256.publicKey.trim()],
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
    expect(set.json.warnings).toEqual([
      `Previous default (${a}) has been updated with the issuer 'b' (resolved to ${b})`,
    ]);
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
    const first = await vault("POST", `${MOUNT}/config/ca`, {
      body: { private_key: CA_KEYS.ed25519.privateKey, public_key: CA_KEYS.ed25519.publicKey },
    });
    expect(first.status).toBe(204);
    const generated = await vault("POST", `${MOUNT}/config/ca`, { body: { key_type: "ed25519" } });
    expect(generated.status).toBe(200);
    expect(Object.keys(generated.json.data)).toEqual(["public_key"]);
    const list = await vault("GET", `${MOUNT}/issuers?list=true`);
    expect(list.json.data.keys).toHaveLength(2);
    const defaults = Object.values(
      list.json.data.key_info as Record<string, { is_default: boolean; public_key: string }>,
    ).filter((i) => i.is_default);
    expect(defaults.map((i) => i.public_key)).toEqual([generated.json.data.public_key]);
    expect((await vault("GET", `${MOUNT}/config/ca`)).json.data).toEqual({
      public_key: generated.json.data.public_key,
    });
    expect((await vault("GET", `${MOUNT}/public_key`, { token: null })).text).toBe(generated.json.data.public_key);

    // Supplying the first pair again makes that issuer the default again (no new issuer).
    const back = await vault("POST", `${MOUNT}/config/ca`, {
      body: { private_key: CA_KEYS.ed25519.privateKey, public_key: CA_KEYS.ed25519.publicKey },
    });
    expect(back.status).toBe(200);
    expect(back.json.warnings).toEqual([
      "An issuer with the provided public key already exists, returning the existing issuer",
    ]);
    expect((await vault("GET", `${MOUNT}/public_key`, { token: null })).text).toBe(CA_KEYS.ed25519.publicKey.trim());
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
