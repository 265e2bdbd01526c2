/**
 * Revocation of OTP leases `<mount>/creds/<role>/<id>` (decision S13).
 * Implemented by the OTP service.
 */

/** Revoke one OTP lease; returns true when an OTP was deleted. */
export async function revokeOtpLease(_env: Env, _mount: string, _role: string, _leaseKey: string): Promise<boolean> {
  return false;
}
