/**
 * OTPs, their keyed hashes, lease keys and the Durable Object shard each lives in
 * (decision S13).
 *
 * - An OTP is UUID-shaped text from 16 random bytes with no version or variant bits
 *   (hashicorp/go-uuid's shape, Vault's path_creds_create.go; vault-ssh-helper checks the shape).
 * - It is stored only as `keyedHash(KEYWAY_HASH_KEY, "ssh-otp:<mount>", otp)` (B2).
 * - The shard is the first SHARD_HEX_DIGITS hex digits of that hash: instance
 *   `idFromName("otp:<mount>:<digits>")`, one of 16^SHARD_HEX_DIGITS per mount. The count is
 *   fixed: changing it would strand every OTP issued before the change.
 * - A lease key is those shard digits followed by 22 random base62 characters (24 in
 *   all, the length of Vault's lease suffix), so `sys/leases/revoke` finds the shard
 *   from the lease id alone and the shard finds the row by its lease-key index.
 */

import { toHex } from "../../lib/bytes";
import { keyedHash } from "../../lib/crypto/hmac";
import { IsolateCache } from "../../lib/isolate-cache";
import type { OtpStore } from "./otp-store";

/** Hex digits of the hash that select the shard: 16^2 = 256 shards per mount. */
export const SHARD_HEX_DIGITS = 2;

/** UUID shape of an OTP: lowercase hex 8-4-4-4-12. */
export const OTP_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const LEASE_KEY_PATTERN = new RegExp(`^[0-9a-f]{${SHARD_HEX_DIGITS}}[0-9A-Za-z]{${24 - SHARD_HEX_DIGITS}}$`);
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** A fresh OTP: 16 random bytes as 8-4-4-4-12 lowercase hex. */
export function newOtp(): string {
  const hex = toHex(crypto.getRandomValues(new Uint8Array(16)));
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The keyed hash an OTP is stored under, domain-separated per mount. */
export function otpHash(env: Env, mount: string, otp: string): Promise<string> {
  return keyedHash(env.KEYWAY_HASH_KEY, `ssh-otp:${mount}`, otp);
}

/** Shard digits of a hash. */
export function shardOf(hash: string): string {
  return hash.slice(0, SHARD_HEX_DIGITS);
}

/** The OtpStore instance of a mount's shard. */
export function otpStore(env: Env, mount: string, shard: string): DurableObjectStub<OtpStore> {
  // worker-configuration.d.ts types the binding without its class; the class is OtpStore.
  const namespace = env.OTP_STORE as unknown as DurableObjectNamespace<OtpStore>;
  const name = `otp:${mount}:${shard}`;
  // idFromName hashes the name on every call; an id is plain data, safe to keep per
  // isolate (stubs are not kept: they belong to the request that made them).
  let id = shardIds.peek(name);
  if (!id) {
    id = namespace.idFromName(name);
    shardIds.set(name, id);
  }
  return namespace.get(id);
}

/** Ids of the OTP_STORE binding by name (B18: mounts × 256 shards at most, bounded anyway). */
const shardIds = new IsolateCache<DurableObjectId>({ name: "ssh-otp-shard-ids", maxEntries: 4096 });

/** A new lease key for an OTP stored in `shard`. */
export function newLeaseKey(shard: string): string {
  let out = shard;
  while (out.length < 24) {
    for (const byte of crypto.getRandomValues(new Uint8Array(32))) {
      // Rejection sampling keeps the characters uniform: 248 = 4 × 62.
      if (byte < 248 && out.length < 24) out += BASE62[byte % 62];
    }
  }
  return out;
}

/** The shard a lease key names; null when the key is not one of ours. */
export function shardOfLeaseKey(leaseKey: string): string | null {
  return LEASE_KEY_PATTERN.test(leaseKey) ? leaseKey.slice(0, SHARD_HEX_DIGITS) : null;
}
