/**
 * Validation of uncompressed NIST curve points as SSH carries them.
 *
 * RFC 5656 §3.1: Q is encoded with SEC1 §2.3.3 (OpenSSH accepts only the uncompressed form,
 * 0x04 || X || Y). SEC1 §3.2.2.1 public key validation: coordinates in [0, p) and the point on
 * y² = x³ − 3x + b. The NIST curves have cofactor 1, so that is sufficient.
 */

import { WireError } from "./errors";
import type { EcCurve } from "./key-types";
import { bytesToBigInt } from "./writer";

/**
 * Checks that `point` is an uncompressed point on `curve`.
 * @throws WireError `INVALID_POINT`
 */
export function assertValidEcPoint(curve: EcCurve, point: Uint8Array): void {
  const size = curve.size;
  if (point.length !== 1 + 2 * size || point[0] !== 0x04) {
    throw new WireError(
      "INVALID_POINT",
      `${curve.name} public key is not an uncompressed point of ${1 + 2 * size} bytes`,
    );
  }
  const { p, b } = curve;
  const x = bytesToBigInt(point.subarray(1, 1 + size));
  const y = bytesToBigInt(point.subarray(1 + size));
  if (x >= p || y >= p) throw new WireError("INVALID_POINT", `${curve.name} point coordinate out of range`);
  const lhs = (y * y) % p;
  const rhs = (((x * x) % p) * x - 3n * x + b) % p;
  if (lhs !== (rhs + p) % p) throw new WireError("INVALID_POINT", `${curve.name} point is not on the curve`);
}
