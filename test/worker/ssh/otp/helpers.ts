/**
 * Shared set-up of the OTP worker tests: roles written through the HTTP API,
 * OTP creds, and direct access to the OtpStore shard of an OTP.
 */
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { keyedHash } from "../../../../src/lib/crypto/hmac";
import type { OtpStore } from "../../../../src/ssh/otp/otp-store";
import { SHARD_HEX_DIGITS } from "../../../../src/ssh/otp/shard";
import type { Role } from "../../../../src/ssh/roles/model";
import { defaultRole } from "../../../../src/ssh/roles/model";
import { vault } from "../../../helpers/vault";

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
    ...defaultRole(name, (f.key_type as "otp" | "ca") ?? "otp"),
    defaultUser: String(f.default_user ?? ""),
    allowedUsers: String(f.allowed_users ?? ""),
    cidrList: list(f.cidr_list),
    excludeCidrList: list(f.exclude_cidr_list),
    port: Number(f.port ?? 22) || 22,
    allowUserCertificates: Boolean(f.allow_user_certificates),
  };
}

/** `vault()`: it already goes through the app directly (see test/helpers/worker-request.ts). */
export const direct = vault;

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

/** An OTP role (Vault's path_roles.go) with a default user and CIDR list. */
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
export async function shardStubFor(
  otp: string,
  mount = "ssh",
): Promise<{ stub: DurableObjectStub<OtpStore>; hash: string }> {
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
