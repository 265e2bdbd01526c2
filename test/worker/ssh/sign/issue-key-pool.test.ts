/**
 * `issue` with RSA-2048 takes keys from the per-isolate pool of pre-generated keys
 * (src/ssh/sign/key-pool.ts) and refills it after answering. Through HTTP against the real
 * Worker: the pool fills only after an RSA-2048 issue, stays within its bound, and every
 * answer carries its own key, certified, never one handed out before.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { importSigningKey, verifyCertificate } from "../../../../src/lib/crypto/ssh-keys-and-certificates";
import { encodePublicKey } from "../../../../src/lib/sshwire/public-key";
import { RSA_2048_POOL_CAPACITY, rsa2048Pool } from "../../../../src/ssh/sign/key-pool";
import { uniqueName, vault } from "../../../helpers/vault";
import { CA_KEYS, decodeSignedKey } from "../ca-fixtures";

let roleName = "";

beforeAll(async () => {
  const ca = await vault("POST", "ssh/config/ca", {
    body: { private_key: CA_KEYS.ed25519.privateKey, public_key: CA_KEYS.ed25519.publicKey },
  });
  if (ca.status !== 204) throw new Error(`CA import failed: ${ca.status} ${ca.text}`);
  roleName = uniqueName("pool");
  const role = await vault("POST", `ssh/roles/${roleName}`, {
    body: { key_type: "ca", allow_user_certificates: true, allowed_users: "*", ttl: "10m" },
  });
  if (role.status !== 204) throw new Error(`role write failed: ${role.status} ${role.text}`);
});

const issue = (body: Record<string, unknown>) =>
  vault("POST", `ssh/issue/${roleName}`, { body: { valid_principals: "u", ...body } });

/** The answer's private key, after checking its certificate certifies that key's public half. */
async function certifiedKey(res: Awaited<ReturnType<typeof issue>>): Promise<string> {
  expect(res.status).toBe(200);
  const { private_key: privateKey, signed_key: signedKey } = res.json.data;
  const key = await importSigningKey(privateKey);
  expect(key.bits).toBe(2048);
  const cert = decodeSignedKey(signedKey);
  expect(encodePublicKey(cert.publicKey)).toEqual(key.publicKeyBlob);
  expect(await verifyCertificate(cert)).toBe(true);
  return privateKey;
}

describe("issue's pool of pre-generated RSA-2048 keys", () => {
  it("fills only after an RSA-2048 issue, up to its bound", async () => {
    // Other kinds and sizes never generate ahead.
    expect((await issue({ key_type: "ed25519" })).status).toBe(200);
    expect((await issue({ key_type: "ec", key_bits: 256 })).status).toBe(200);
    expect(rsa2048Pool.size).toBe(0);
    // The test helper waits for the request's waitUntil work: the refill has run.
    await certifiedKey(await issue({ key_type: "rsa", key_bits: 2048 }));
    expect(rsa2048Pool.size).toBe(RSA_2048_POOL_CAPACITY);
  });

  it("hands every key out once: a burst larger than the pool gets distinct, certified keys", async () => {
    await certifiedKey(await issue({ key_type: "rsa" }));
    expect(rsa2048Pool.size).toBe(RSA_2048_POOL_CAPACITY);
    const burst = await Promise.all(
      Array.from({ length: RSA_2048_POOL_CAPACITY + 2 }, () => issue({ key_type: "rsa", key_bits: 2048 })),
    );
    const keys: string[] = [];
    for (const res of burst) keys.push(await certifiedKey(res));
    // And the ones after it.
    for (let i = 0; i < 2; i++) keys.push(await certifiedKey(await issue({ key_type: "rsa" })));
    expect(new Set(keys).size).toBe(keys.length);
    expect(rsa2048Pool.size).toBeLessThanOrEqual(RSA_2048_POOL_CAPACITY);
  });
});
