/**
 * SSH signature blobs.
 *
 * RFC 4253 §6.6: a signature is `string format-identifier, string signature-blob`.
 * RFC 8332 §3: rsa-sha2-256/512 blobs are the raw RSASSA-PKCS1-v1_5 signature, as for ssh-rsa.
 * RFC 5656 §3.1.2: ecdsa-sha2-* blobs are `mpint r, mpint s`.
 * RFC 8709 §6: ssh-ed25519 blobs are the 64-byte RFC 8032 signature.
 */

import { WireError } from "./errors";
import type { EcCurve } from "./key-types";
import { SshReader } from "./reader";
import { bytesToBigInt, padMagnitude, SshWriter } from "./writer";

/** A decoded signature: algorithm name and the algorithm-specific blob. */
export interface SshSignature {
  /** Signature format identifier, e.g. `rsa-sha2-256`. */
  readonly algorithm: string;
  /** Algorithm-specific signature blob. */
  readonly blob: Uint8Array;
}

/** RFC 4253 §6.6 signature encoding: string algorithm, string blob. */
export function encodeSignature(algorithm: string, blob: Uint8Array): Uint8Array {
  return new SshWriter().writeText(algorithm).writeString(blob).finish();
}

/**
 * Decodes RFC 4253 §6.6 signature bytes strictly (no trailing data).
 * @throws WireError
 */
export function decodeSignature(bytes: Uint8Array): SshSignature {
  const r = new SshReader(bytes, "signature");
  const algorithm = r.readText("signature algorithm");
  const blob = r.readString("signature blob");
  r.expectEnd();
  return { algorithm, blob };
}

/**
 * Converts WebCrypto's IEEE P1363 ECDSA signature (r || s, each `curve.size` bytes) into the
 * RFC 5656 §3.1.2 blob `mpint r, mpint s` (minimal mpints, RFC 4251 §5).
 * @throws WireError `INVALID_VALUE` when the input has the wrong length
 */
export function ecdsaSignatureFromP1363(curve: EcCurve, rs: Uint8Array): Uint8Array {
  if (rs.length !== 2 * curve.size) {
    throw new WireError(
      "INVALID_VALUE",
      `${curve.name} P1363 signature must be ${2 * curve.size} bytes, got ${rs.length}`,
    );
  }
  // RFC 5656 §3.1.2: string(mpint r || mpint s) — the outer string is added by encodeSignature.
  return new SshWriter().writeMpint(rs.subarray(0, curve.size)).writeMpint(rs.subarray(curve.size)).finish();
}

/**
 * Converts an RFC 5656 §3.1.2 blob (`mpint r, mpint s`) into IEEE P1363 r || s for WebCrypto.
 * Strict: minimal non-negative mpints, 1 ≤ r, s < n, nothing after s.
 * @throws WireError
 */
export function ecdsaSignatureToP1363(curve: EcCurve, blob: Uint8Array): Uint8Array {
  const r = new SshReader(blob, `${curve.name} signature`);
  const rMag = r.readMpint("r");
  const sMag = r.readMpint("s");
  r.expectEnd();
  for (const [name, v] of [
    ["r", rMag],
    ["s", sMag],
  ] as const) {
    const value = bytesToBigInt(v);
    if (value === 0n || value >= curve.n)
      throw new WireError("INVALID_VALUE", `${curve.name} signature ${name} out of range`);
  }
  const out = new Uint8Array(2 * curve.size);
  out.set(padMagnitude(rMag, curve.size, "r"), 0);
  out.set(padMagnitude(sMag, curve.size, "s"), curve.size);
  return out;
}
