/**
 * Shared set-up of the OTP worker tests: roles written through the HTTP API (seed row 1),
 * OTP creds, and direct access to the OtpStore shard of an OTP.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { keyedHash } from "../../../src/lib/crypto/hmac";
import type { OtpStore } from "../../../src/ssh/otp/otp-store";
import { SHARD_HEX_DIGITS } from "../../../src/ssh/otp/shard";
import { app } from "../../../src/index";
import { ROOT, type VaultAnswer, type VaultCall, vault } from "../../helpers/vault";
import type { Role } from "../../../src/ssh/roles/model";

/**
 * A stored OTP role (the roles repository's `Role` shape) built from Vault's field names,
 * for tests that insert thousands of roles straight into D1.
 */
export function otpRoleObject(name: string, f: Record<string, unknown>): Role {
  const list = (v: unknown) =>
    String(v ?? "")
      .split(",")
      .map((x) => x.trim())
      .filter((x) => x !== "");
  return {
    name,
    keyType: (f.key_type as "otp" | "ca") ?? "otp",
    defaultUser: String(f.default_user ?? ""),
    allowedUsers: String(f.allowed_users ?? ""),
    cidrList: list(f.cidr_list),
    excludeCidrList: list(f.exclude_cidr_list),
    port: Number(f.port ?? 22) || 22,
    defaultUserTemplate: false,
    allowedUsersTemplate: false,
    allowedDomains: "",
    allowedDomainsTemplate: false,
    ttl: 0,
    maxTtl: 0,
    allowedCriticalOptions: "",
    allowedExtensions: "",
    defaultCriticalOptions: {},
    defaultExtensions: {},
    defaultExtensionsTemplate: false,
    allowUserCertificates: Boolean(f.allow_user_certificates),
    allowHostCertificates: false,
    allowBareDomains: false,
    allowSubdomains: false,
    allowUserKeyIds: false,
    keyIdFormat: "",
    allowedUserKeyLengths: {},
    algorithmSigner: "default",
    notBeforeDuration: 30,
    allowEmptyPrincipals: false,
  };
}

/**
 * Like `vault()`, but through the Worker's Hono app in this isolate (`app.request` with
 * the real bindings) instead of `exports.default.fetch`. For tests that send thousands of
 * requests: under vitest-pool-workers every `exports.default.fetch` gets slower as the
 * file's request count grows, superlinearly once requests overlap
 * (cloudflare/workers-sdk#15446; measured here: 50 parallel echoes 1.6 s → 20 s by the
 * fifth batch), while `app.request` stays flat. Same handlers, bindings and Durable
 * Objects; only the harness's dispatch is skipped.
 */
export async function direct(method: string, path: string, call: VaultCall = {}): Promise<VaultAnswer> {
  const headers: Record<string, string> = { ...call.headers };
  const token = call.token === undefined ? ROOT : call.token;
  if (token !== null) headers["X-Secrets-Token"] = token;
  let body: string | undefined;
  if (call.body !== undefined) {
    body = JSON.stringify(call.body);
    headers["Content-Type"] = "application/json";
  }
  const ctx = createExecutionContext();
  const res = await app.request(`http://keyway.test/v1/${path.replace(/^\//, "")}`, { method, headers, body }, env, ctx);
  const text = await res.text();
  await waitOnExecutionContext(ctx);
  return { status: res.status, json: text ? JSON.parse(text) : null, text, headers: res.headers };
}

/** Write a role with `POST <mount>/roles/<name>`; expects 204 (or 200 with warnings). */
export async function writeRole(name: string, fields: Record<string, unknown>, mount = "ssh"): Promise<void> {
  const res = await vault("POST", `${mount}/roles/${name}`, { body: fields });
  if (res.status !== 204 && res.status !== 200) throw new Error(`role write failed: ${res.status} ${res.text}`);
}

/** Delete a role with `DELETE <mount>/roles/<name>`; expects 204. */
export async function removeRole(name: string, mount = "ssh"): Promise<void> {
  const res = await vault("DELETE", `${mount}/roles/${name}`);
  if (res.status !== 204) throw new Error(`role delete failed: ${res.status} ${res.text}`);
}

/** An OTP role (reference §3.1) with a default user and CIDR list. */
export function writeOtpRole(name: string, fields: Record<string, unknown> = {}, mount = "ssh"): Promise<void> {
  return writeRole(name, { key_type: "otp", default_user: "ubuntu", cidr_list: "10.0.0.0/8", ...fields }, mount);
}

/** Issue an OTP; asserts 200 and returns the answer's JSON. */
// biome-ignore lint/suspicious/noExplicitAny: test assertions walk arbitrary JSON
export async function issueOtp(role: string, body: Record<string, unknown>, mount = "ssh"): Promise<any> {
  const res = await vault("POST", `${mount}/creds/${role}`, { body });
  expect(res.status, res.text).toBe(200);
  return res.json;
}

/** The OtpStore instance an OTP lives in, found from its keyed hash as the Worker does (S13). */
export async function shardStubFor(otp: string, mount = "ssh"): Promise<{ stub: DurableObjectStub<OtpStore>; hash: string }> {
  const hash = await keyedHash(env.KEYWAY_HASH_KEY, `ssh-otp:${mount}`, otp);
  const namespace = env.OTP_STORE as unknown as DurableObjectNamespace<OtpStore>;
  const stub = namespace.get(namespace.idFromName(`otp:${mount}:${hash.slice(0, SHARD_HEX_DIGITS)}`));
  return { stub, hash };
}

/** Every row of a shard's `otps` table. */
export type StoredOtpRow = {
  hash: string;
  lease_key: string;
  role_name: string;
  username: string;
  ip: string;
  expires_at: number;
};
