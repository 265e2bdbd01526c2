/**
 * Helpers of the certificate inventory (S22) and revocation (S23) tests
 * (test/worker/ssh/revocation/inventory.test.ts, revocations-and-krl.test.ts): mount `ssh-two` with two
 * issuers, `default` (Ed25519, through config/ca) and `second` (ECDSA-256, through
 * issuers/import), a CA role under a fresh name, and a sign that must succeed.
 */
import { expect } from "vitest";
import { CA_KEYS, SUBJECT_KEYS } from "../worker/ssh/ca-fixtures";
import { uniqueName, vault } from "./vault";

/** The mount both files work in. */
export const MOUNT = "ssh-two";

/** The ids of the mount's two issuers. */
export interface RevocationIssuers {
  defaultIssuerId: string;
  secondIssuerId: string;
}

/** Give {@link MOUNT} its two issuers (call from `beforeAll`). */
export async function importRevocationIssuers(): Promise<RevocationIssuers> {
  const ca = await vault("POST", `${MOUNT}/config/ca`, {
    body: { private_key: CA_KEYS.ed25519.privateKey, public_key: CA_KEYS.ed25519.publicKey },
  });
  if (ca.status !== 204) throw new Error(`CA import failed: ${ca.status} ${ca.text}`);
  const defaultIssuerId = (await vault("GET", `${MOUNT}/config/issuers`)).json.data.default;
  const second = await vault("POST", `${MOUNT}/issuers/import/second`, {
    body: { private_key: CA_KEYS.ecdsa256.privateKey, public_key: CA_KEYS.ecdsa256.publicKey },
  });
  if (second.status !== 200) throw new Error(`issuer import failed: ${second.status} ${second.text}`);
  return { defaultIssuerId, secondIssuerId: second.json.data.issuer_id };
}

/** A CA role for user certificates (any principal, default `ubuntu`) plus `body`, under a fresh name. */
export async function role(body: Record<string, unknown>): Promise<string> {
  const name = uniqueName("role");
  const res = await vault("POST", `${MOUNT}/roles/${name}`, {
    body: { key_type: "ca", allow_user_certificates: true, allowed_users: "*", default_user: "ubuntu", ...body },
  });
  if (res.status !== 204) throw new Error(`role write failed: ${res.status} ${res.text}`);
  return name;
}

/** `POST sign/<name>` of the Ed25519 subject key (unless `body` sends another); expects 200. */
export async function sign(
  name: string,
  body: Record<string, unknown>,
  call: { token?: string; headers?: Record<string, string> } = {},
) {
  const res = await vault("POST", `${MOUNT}/sign/${name}`, {
    body: { public_key: SUBJECT_KEYS.ed25519, ...body },
    ...call,
  });
  expect(res.status, res.text).toBe(200);
  return res;
}
