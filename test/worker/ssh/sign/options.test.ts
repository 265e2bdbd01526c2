/**
 * `POST sign/:name`: what a certificate carries besides its principals —
 * the cases of Vault's backend_test.go on caller options, key ids (S7) and extensions
 * and 40 (critical options), and the text the certificate encoder refuses (B3). Mount `ssh`
 * has an RSA-2048 CA and `ssh-two` an Ed25519 CA for the whole file.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { importSignCas, role, sign, USER_ROLE } from "../../../helpers/ssh-sign";
import { tokenWithPolicy, vault } from "../../../helpers/vault";
import { blobOf, decodeSignedKey, optionsOf, SUBJECT_KEYS, sha256Hex } from "../ca-fixtures";

beforeAll(importSignCas);

describe("caller options replace the defaults (TestBackend_OptionsOverrideDefaults)", () => {
  it("keeps only the requested critical options and extensions", async () => {
    const name = await role({
      key_type: "ca",
      allowed_users: "tuber",
      default_user: "tuber",
      allow_user_certificates: true,
      allowed_critical_options: "option,secondary",
      allowed_extensions: "extension,additional",
      default_critical_options: { option: "value" },
      default_extensions: { extension: "extended" },
    });
    const res = await sign(name, {
      public_key: SUBJECT_KEYS.rsa2048,
      ttl: "2h",
      critical_options: { secondary: "value" },
      extensions: { additional: "value" },
    });
    expect(res.status).toBe(200);
    const cert = decodeSignedKey(res.json.data.signed_key);
    expect(optionsOf(cert.criticalOptions)).toEqual({ secondary: "value" });
    expect(optionsOf(cert.extensions)).toEqual({ additional: "value" });
    expect(cert.principals).toEqual(["tuber"]);
    expect(cert.certType).toBe(1);
    expect(cert.validBefore - cert.validAfter).toBe(BigInt(2 * 3600 + 30));
  });
});

describe("key_id_format (TestBackend_CustomKeyIDFormat, S7)", () => {
  it("substitutes role name, token display name and the SHA-256 of the key blob", async () => {
    const name = await role(
      { ...USER_ROLE, key_id_format: "{{role_name}}-{{token_display_name}}-{{public_key_hash}}" },
      "ssh",
      "customrole",
    );
    const res = await sign(name, { public_key: SUBJECT_KEYS.rsa2048, valid_principals: "tuber" });
    expect(res.status).toBe(200);
    const hash = await sha256Hex(blobOf(SUBJECT_KEYS.rsa2048));
    expect(decodeSignedKey(res.json.data.signed_key).keyId).toBe(`customrole-root-${hash}`);
  });

  it("uses the caller's token display name and leaves unknown variables literal", async () => {
    const name = await role({ ...USER_ROLE, key_id_format: "{{token_display_name}}/{{other}}" });
    const token = await tokenWithPolicy({ "ssh/sign/*": ["create"] }, { display_name: "ci bot" });
    const res = await sign(name, { public_key: SUBJECT_KEYS.ed25519, valid_principals: "a" }, "ssh", token);
    expect(decodeSignedKey(res.json.data.signed_key).keyId).toBe("token-ci-bot/{{other}}");
  });

  it("defaults to the caller's display name (S7)", async () => {
    const name = await role(USER_ROLE);
    const token = await tokenWithPolicy({ "ssh/sign/*": ["create"] }, { display_name: "deploy" });
    const res = await sign(name, { public_key: SUBJECT_KEYS.ed25519, valid_principals: "a" }, "ssh", token);
    expect(decodeSignedKey(res.json.data.signed_key).keyId).toBe("token-deploy");
  });
});

describe("caller key IDs (TestBackend_DisallowUserProvidedKeyIDs)", () => {
  it("refuses key_id unless allow_user_key_ids, then uses it verbatim over key_id_format", async () => {
    const denied = await role(USER_ROLE);
    const res = await sign(denied, { public_key: SUBJECT_KEYS.rsa2048, valid_principals: "a", key_id: "override" });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ errors: ["setting key_id is not allowed by role"] });

    const allowed = await role({ ...USER_ROLE, allow_user_key_ids: true, key_id_format: "{{role_name}}" });
    const ok = await sign(allowed, { public_key: SUBJECT_KEYS.rsa2048, valid_principals: "a", key_id: "override" });
    expect(decodeSignedKey(ok.json.data.signed_key).keyId).toBe("override");
  });
});

describe("empty allowed_extensions fails closed (TestBackend_EmptyAllowedExtensionFailsClosed)", () => {
  it("refuses any caller extension", async () => {
    const name = await role({ ...USER_ROLE, allowed_extensions: "" });
    const res = await sign(name, {
      public_key: SUBJECT_KEYS.ed25519,
      valid_principals: "a",
      extensions: { "login@foobar.com": "x" },
    });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ errors: ["extensions [login@foobar.com] are not on allowed list"] });
  });

  it("`*` allows any; a list allows its entries; defaults are not restricted", async () => {
    const any = await role({ ...USER_ROLE, allowed_extensions: "*" });
    const a = await sign(any, {
      public_key: SUBJECT_KEYS.ed25519,
      valid_principals: "a",
      extensions: { "permit-pty": "", "login@x": "y" },
    });
    expect(optionsOf(decodeSignedKey(a.json.data.signed_key).extensions)).toEqual({ "permit-pty": "", "login@x": "y" });

    const listed = await role({
      ...USER_ROLE,
      allowed_extensions: "permit-pty,permit-X11-forwarding",
      default_extensions: { "permit-user-rc": "" },
    });
    const refused = await sign(listed, {
      public_key: SUBJECT_KEYS.ed25519,
      valid_principals: "a",
      extensions: { "permit-pty": "", zz: "", aa: "" },
    });
    expect(refused.json.errors).toEqual(["extensions [aa zz] are not on allowed list"]);
    const defaults = await sign(listed, { public_key: SUBJECT_KEYS.ed25519, valid_principals: "a" });
    expect(optionsOf(decodeSignedKey(defaults.json.data.signed_key).extensions)).toEqual({ "permit-user-rc": "" });
  });

  it("no built-in permit-* defaults: a role without default_extensions signs none", async () => {
    const name = await role(USER_ROLE);
    const res = await sign(name, { public_key: SUBJECT_KEYS.ed25519, valid_principals: "a" });
    const cert = decodeSignedKey(res.json.data.signed_key);
    expect(cert.extensions).toEqual([]);
    expect(cert.criticalOptions).toEqual([]);
  });
});

describe("critical options", () => {
  it("refuses options outside allowed_critical_options; an empty list allows any", async () => {
    const restricted = await role({ ...USER_ROLE, allowed_critical_options: "force-command" });
    const res = await sign(restricted, {
      public_key: SUBJECT_KEYS.ed25519,
      valid_principals: "a",
      critical_options: { "source-address": "10.0.0.0/8" },
    });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ errors: ["critical options not on allowed list: [source-address]"] });
    const ok = await sign(restricted, {
      public_key: SUBJECT_KEYS.ed25519,
      valid_principals: "a",
      critical_options: { "force-command": "/bin/true" },
    });
    expect(optionsOf(decodeSignedKey(ok.json.data.signed_key).criticalOptions)).toEqual({
      "force-command": "/bin/true",
    });

    const open = await role(USER_ROLE);
    const any = await sign(open, {
      public_key: SUBJECT_KEYS.ed25519,
      valid_principals: "a",
      critical_options: { "source-address": "10.0.0.0/8", "force-command": "/bin/date" },
    });
    expect(optionsOf(decodeSignedKey(any.json.data.signed_key).criticalOptions)).toEqual({
      "force-command": "/bin/date",
      "source-address": "10.0.0.0/8",
    });
  });

  it("accepts the historical array-of-maps form and stringifies values like Go", async () => {
    const name = await role(USER_ROLE);
    const res = await sign(name, {
      public_key: SUBJECT_KEYS.ed25519,
      valid_principals: "a",
      critical_options: [{ a: true }, { b: 1 }],
    });
    expect(optionsOf(decodeSignedKey(res.json.data.signed_key).criticalOptions)).toEqual({ a: "true", b: "1" });
  });
});

describe("text the certificate encoder refuses is a 400 (B3)", () => {
  it("two extension names that are the same once encoded as UTF-8", async () => {
    const name = await role({ ...USER_ROLE, allowed_extensions: "*" });
    const res = await vault("POST", `ssh/sign/${name}`, {
      rawBody: `{"public_key":${JSON.stringify(SUBJECT_KEYS.ed25519)},"valid_principals":"a","extensions":{"\\ud800":"","\\udc00":""}}`,
      headers: { "Content-Type": "application/json" },
    });
    expect(res.status).toBe(400);
    expect(res.json.errors[0]).toMatch(/^failed to generate signed SSH key: /);
  });
});
