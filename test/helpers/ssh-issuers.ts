/**
 * Issuer helpers of the /v1 issuer tests (test/worker/ssh/issuers*.test.ts, decision S20):
 * the mount they use, import, roles and sign through it, and the reset each test starts from.
 */
import { expect } from "vitest";
import { decodeSignedKey, SUBJECT_KEYS } from "../worker/ssh/ca-fixtures";
import { uniqueName, vault } from "./vault";

/** The mount the issuer tests use (`ssh` keeps the CA other test files rely on). */
export const MOUNT = "ssh-two";
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const USER_ROLE = { key_type: "ca", allow_user_certificates: true, allowed_users: "*", ttl: "10m" };

export type Pair = { privateKey: string; publicKey: string };

/** `POST issuers/import[/:name]` of a key pair. */
export function importIssuer(pair: Pair, options: { name?: string; body?: Record<string, unknown> } = {}) {
  const path = options.name === undefined ? `${MOUNT}/issuers/import` : `${MOUNT}/issuers/import/${options.name}`;
  return vault("POST", path, { body: { private_key: pair.privateKey, public_key: pair.publicKey, ...options.body } });
}

/** Import a key pair and return the new issuer id (throws unless 200). */
export async function importOk(
  pair: Pair,
  options: { name?: string; body?: Record<string, unknown> } = {},
): Promise<string> {
  const res = await importIssuer(pair, options);
  if (res.status !== 200) throw new Error(`import failed: ${res.status} ${res.text}`);
  return res.json.data.issuer_id as string;
}

/** Write a role with a fresh name and return the name (throws unless 204). */
export async function role(body: Record<string, unknown>): Promise<string> {
  const name = uniqueName("role");
  const res = await vault("POST", `${MOUNT}/roles/${name}`, { body });
  if (res.status !== 204) throw new Error(`role write failed: ${res.status} ${res.text}`);
  return name;
}

/** Sign the Ed25519 subject key for `alice` with the role. */
export function sign(roleName: string) {
  return vault("POST", `${MOUNT}/sign/${roleName}`, {
    body: { public_key: SUBJECT_KEYS.ed25519, valid_principals: "alice" },
  });
}

/** The CA key blob a signed certificate names. */
export function signerOf(signedKey: string): Uint8Array {
  return decodeSignedKey(signedKey).signatureKey;
}

/** Each test starts from a mount without issuers (`DELETE config/ca` removes them all) nor roles. */
export async function resetIssuerMount(): Promise<void> {
  const res = await vault("DELETE", `${MOUNT}/config/ca`);
  expect(res.status).toBe(204);
  // Roles of earlier tests would count in OpenBao's "roles reference" warnings.
  const roles = await vault("GET", `${MOUNT}/roles?list=true`);
  for (const name of (roles.json?.data?.keys ?? []) as string[]) await vault("DELETE", `${MOUNT}/roles/${name}`);
}
