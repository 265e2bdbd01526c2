/**
 * Revocation of OTP leases `<mount>/creds/<role>/<lease key>` (decision S13). The lease
 * key names the OTP's shard (shard.ts), and the shard keeps an index from lease key to
 * the OTP's hash, so no plaintext OTP is needed. Revoking an OTP that was already
 * verified, expired or revoked is a silent no-op (Vault's secret_otp.go).
 */
import { otpStore, shardOfLeaseKey } from "./shard";

/** Revoke one OTP lease; returns true when an OTP was deleted. */
export async function revokeOtpLease(env: Env, mount: string, role: string, leaseKey: string): Promise<boolean> {
  const shard = shardOfLeaseKey(leaseKey);
  if (shard === null) return false;
  const result = await otpStore(env, mount, shard).revoke(leaseKey, role);
  return result.ok;
}
