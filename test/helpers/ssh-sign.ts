/**
 * Helpers of the `POST sign/:name` tests (test/worker/ssh/sign*.test.ts): the two CAs each
 * file imports, a role under a fresh name, and the sign call.
 */
import { CA_KEYS } from "../worker/ssh/ca-fixtures";
import { uniqueName, vault } from "./vault";

/** Mount `ssh` gets an RSA-2048 CA and `ssh-two` an Ed25519 CA (call from `beforeAll`). */
export async function importSignCas(): Promise<void> {
  for (const [mount, pair] of [
    ["ssh", CA_KEYS.rsa2048],
    ["ssh-two", CA_KEYS.ed25519],
  ] as const) {
    const res = await vault("POST", `${mount}/config/ca`, {
      body: { private_key: pair.privateKey, public_key: pair.publicKey },
    });
    if (res.status !== 204) throw new Error(`CA import failed: ${res.status} ${res.text}`);
  }
}

/** Write a role under a fresh name and return the name. */
export async function role(body: Record<string, unknown>, mount = "ssh", name = uniqueName("role")): Promise<string> {
  const res = await vault("POST", `${mount}/roles/${name}`, { body });
  // 200 only with Keyway's warning about default critical options a caller may replace.
  const warnedOnly =
    res.status === 200 &&
    res.json.warnings?.length === 1 &&
    res.json.warnings[0].startsWith("default_critical_options are not enforced");
  if (res.status !== 204 && !warnedOnly) throw new Error(`role write failed: ${res.status} ${res.text}`);
  return name;
}

/** `POST <mount>/sign/<name>`, with `token` instead of the root token when given. */
export async function sign(name: string, body: Record<string, unknown>, mount = "ssh", token?: string) {
  return vault("POST", `${mount}/sign/${name}`, { body, ...(token ? { token } : {}) });
}

/** A CA role that signs user certificates for any principal. */
export const USER_ROLE = { key_type: "ca", allow_user_certificates: true, allowed_users: "*" };
