/**
 * Roles bound to an issuer (`issuer_ref`, decision S20): sign and issue through named
 * issuers; retirement and the trust bundle (S21): `trusted_keys` and `known_hosts`. Each
 * test starts from a mount without issuers nor roles.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { bytesEqual } from "../../../../src/lib/bytes";
import {
  importIssuer,
  importOk,
  MOUNT,
  resetIssuerMount,
  role,
  sign,
  signerOf,
  USER_ROLE,
} from "../../../helpers/ssh-issuers";
import { uniqueName, vault } from "../../../helpers/vault";
import { blobOf, CA_KEYS } from "../ca-fixtures";

beforeEach(resetIssuerMount);

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
    const issued = await vault("POST", `${MOUNT}/issue/${viaNamed}`, {
      body: { key_type: "ed25519", valid_principals: "alice" },
    });
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
    expect(retireDefault.json).toEqual({
      errors: ["the default issuer cannot be retired; make another issuer the default first"],
    });
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
