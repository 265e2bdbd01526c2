/**
 * Private key containers, pure bytes ↔ a normalised {@link PrivateKeyMaterial}:
 *
 * - PKCS#1 `RSA PRIVATE KEY` (RFC 8017 A.1.2 RSAPrivateKey),
 * - SEC1 `EC PRIVATE KEY` (RFC 5915 §3 ECPrivateKey), optionally preceded by the
 *   `EC PARAMETERS` block `openssl ecparam -genkey` writes,
 * - PKCS#8 `PRIVATE KEY` (RFC 5208 §5 PrivateKeyInfo / RFC 5958 §2 OneAsymmetricKey) holding
 *   RSA, EC (RFC 5480) or Ed25519 (RFC 8410 §7) keys,
 * - OpenSSH `OPENSSH PRIVATE KEY` (PROTOCOL.key, unencrypted; see `sshwire`).
 *
 * Encrypted containers are recognised and refused with `ENCRYPTED_KEY`. Everything else that
 * cannot be read is `INVALID_KEY` or `UNSUPPORTED_KEY_TYPE`. No WebCrypto here.
 */

import { assertValidEcPoint } from "../sshwire/ec-point";
import { WireError } from "../sshwire/errors";
import { curveByOid, EC_CURVES, type EcCurve } from "../sshwire/key-types";
import { decodeOpensshPrivateKey, encodeOpensshPrivateKey } from "../sshwire/openssh-private-key";
import { bigIntToBytes, bytesToBigInt, padMagnitude } from "../sshwire/writer";
import {
  DerReader,
  derBitString,
  derExplicit,
  derInteger,
  derNull,
  derOctetString,
  derOid,
  derSequence,
  derSmallInteger,
} from "./der";
import { formatPem, type PemBlock, parsePem } from "./pem";
import { SshKeyError } from "./ssh-key-error";

/** RFC 8017 A.1: rsaEncryption. */
export const OID_RSA_ENCRYPTION = "1.2.840.113549.1.1.1";
/** RFC 5480 §2.1.1: id-ecPublicKey. */
export const OID_EC_PUBLIC_KEY = "1.2.840.10045.2.1";
/** RFC 8410 §3: id-Ed25519. */
export const OID_ED25519 = "1.3.101.112";

/** An RSA private key (big-endian magnitudes, RFC 8017 §3.2 CRT form). */
export interface RsaPrivateKeyMaterial {
  readonly kind: "rsa";
  readonly n: Uint8Array;
  readonly e: Uint8Array;
  readonly d: Uint8Array;
  readonly p: Uint8Array;
  readonly q: Uint8Array;
  /** d mod (p − 1). */
  readonly dp: Uint8Array;
  /** d mod (q − 1). */
  readonly dq: Uint8Array;
  /** q⁻¹ mod p. */
  readonly qi: Uint8Array;
}

/** A NIST-curve EC private key. */
export interface EcPrivateKeyMaterial {
  readonly kind: "ec";
  readonly curve: EcCurve;
  /** Private scalar, left-padded to the curve size. */
  readonly d: Uint8Array;
  /** Uncompressed public point when the container carried one. */
  readonly point?: Uint8Array;
}

/** An Ed25519 private key. */
export interface Ed25519PrivateKeyMaterial {
  readonly kind: "ed25519";
  /** RFC 8032 32-byte private key. */
  readonly seed: Uint8Array;
  /** 32-byte public key when the container carried one. */
  readonly publicKey?: Uint8Array;
}

/** A private key independent of the container it came in. */
export type PrivateKeyMaterial = RsaPrivateKeyMaterial | EcPrivateKeyMaterial | Ed25519PrivateKeyMaterial;

function invalid(message: string, cause?: unknown): SshKeyError {
  return new SshKeyError("INVALID_KEY", message, cause === undefined ? undefined : { cause });
}

/** Completes RSA CRT parameters from n, e, d, p, q (and q⁻¹ mod p when known). */
function rsaFromParts(
  n: Uint8Array,
  e: Uint8Array,
  d: Uint8Array,
  p: Uint8Array,
  q: Uint8Array,
  qi?: Uint8Array,
): RsaPrivateKeyMaterial {
  const N = bytesToBigInt(n);
  const D = bytesToBigInt(d);
  const P = bytesToBigInt(p);
  const Q = bytesToBigInt(q);
  if (P <= 1n || Q <= 1n || P * Q !== N)
    throw new SshKeyError("KEY_MISMATCH", "RSA private key: p × q does not equal the modulus");
  if (D === 0n) throw invalid("RSA private key: d is zero");
  const QI = qi ? bytesToBigInt(qi) : modInverse(Q, P);
  return {
    kind: "rsa",
    n,
    e,
    d,
    p,
    q,
    dp: bigIntToBytes(D % (P - 1n)),
    dq: bigIntToBytes(D % (Q - 1n)),
    qi: bigIntToBytes(QI),
  };
}

/** Modular inverse by the extended Euclidean algorithm. */
function modInverse(a: bigint, m: bigint): bigint {
  let [oldR, r] = [a % m, m];
  let [oldS, s] = [1n, 0n];
  while (r !== 0n) {
    const q = oldR / r;
    [oldR, r] = [r, oldR - q * r];
    [oldS, s] = [s, oldS - q * s];
  }
  if (oldR !== 1n) throw new SshKeyError("KEY_MISMATCH", "RSA private key: q is not invertible mod p");
  return ((oldS % m) + m) % m;
}

/** RFC 8017 A.1.2 RSAPrivateKey (two-prime, version 0). */
function readPkcs1(der: Uint8Array): RsaPrivateKeyMaterial {
  const outer = new DerReader(der, "RSAPrivateKey");
  const s = outer.sequence("RSAPrivateKey");
  outer.expectEnd();
  const version = s.smallInteger("version");
  if (version !== 0) throw new SshKeyError("UNSUPPORTED_KEY_TYPE", "multi-prime RSA keys are not supported");
  const n = s.integer("modulus");
  const e = s.integer("publicExponent");
  const d = s.integer("privateExponent");
  const p = s.integer("prime1");
  const q = s.integer("prime2");
  s.integer("exponent1");
  s.integer("exponent2");
  const qi = s.integer("coefficient");
  s.expectEnd();
  return rsaFromParts(n, e, d, p, q, qi);
}

/** RFC 5915 §3 ECPrivateKey; `curveHint` comes from PKCS#8 or an `EC PARAMETERS` block. */
function readSec1(der: Uint8Array, curveHint: EcCurve | undefined): EcPrivateKeyMaterial {
  const outer = new DerReader(der, "ECPrivateKey");
  const s = outer.sequence("ECPrivateKey");
  outer.expectEnd();
  if (s.smallInteger("version") !== 1) throw invalid("EC private key: unsupported version");
  const d = s.octetString("privateKey");
  let curve = curveHint;
  const params = s.optionalExplicit(0, "parameters");
  if (params) {
    const named = readCurveOid(params);
    params.expectEnd();
    if (curve && curve !== named) throw invalid("EC private key: curve parameters disagree");
    curve = named;
  }
  let point: Uint8Array | undefined;
  const pub = s.optionalExplicit(1, "publicKey");
  if (pub) {
    point = pub.bitString("publicKey");
    pub.expectEnd();
  }
  s.expectEnd();
  if (!curve) throw invalid("EC private key: no named curve");
  return ecMaterial(curve, d, point);
}

function readCurveOid(r: DerReader): EcCurve {
  if (r.peekTag() !== 0x06)
    throw new SshKeyError("UNSUPPORTED_KEY_TYPE", "EC keys with explicit curve parameters are not supported");
  const oid = r.oid("namedCurve");
  const curve = curveByOid(oid);
  if (!curve) throw new SshKeyError("UNSUPPORTED_KEY_TYPE", `unsupported EC curve ${oid}`);
  return curve;
}

function ecMaterial(curve: EcCurve, d: Uint8Array, point: Uint8Array | undefined): EcPrivateKeyMaterial {
  const D = bytesToBigInt(d);
  if (D === 0n || D >= curve.n) throw invalid("EC private key: scalar out of range");
  if (point) assertValidEcPoint(curve, point);
  return { kind: "ec", curve, d: padMagnitude(d, curve.size, "EC private key"), ...(point ? { point } : {}) };
}

/** RFC 5208 §5 PrivateKeyInfo / RFC 5958 §2 OneAsymmetricKey. */
function readPkcs8(der: Uint8Array): PrivateKeyMaterial {
  const outer = new DerReader(der, "PrivateKeyInfo");
  const s = outer.sequence("PrivateKeyInfo");
  outer.expectEnd();
  const version = s.smallInteger("version");
  if (version !== 0 && version !== 1) throw invalid("PKCS#8: unsupported version");
  const alg = s.sequence("privateKeyAlgorithm");
  const oid = alg.oid("algorithm");
  const privateKey = s.octetString("privateKey");
  s.optionalExplicit(0, "attributes");
  const publicKey = version === 1 ? s.optionalImplicit(1, "publicKey") : undefined;
  s.expectEnd();
  switch (oid) {
    case OID_RSA_ENCRYPTION:
      if (!alg.atEnd) alg.null("parameters");
      alg.expectEnd();
      return readPkcs1(privateKey);
    case OID_EC_PUBLIC_KEY: {
      const curve = readCurveOid(alg);
      alg.expectEnd();
      return readSec1(privateKey, curve);
    }
    case OID_ED25519: {
      // RFC 8410 §3: parameters absent. §7: privateKey holds CurvePrivateKey ::= OCTET STRING.
      alg.expectEnd();
      const inner = new DerReader(privateKey, "CurvePrivateKey");
      const seed = inner.octetString("CurvePrivateKey");
      inner.expectEnd();
      if (seed.length !== 32) throw invalid("Ed25519 private key must be 32 bytes");
      let pub: Uint8Array | undefined;
      if (publicKey) {
        // RFC 5958 §2: [1] IMPLICIT BIT STRING; first byte = unused bits.
        if (publicKey.length !== 33 || publicKey[0] !== 0) throw invalid("Ed25519 public key in PKCS#8 is malformed");
        pub = publicKey.slice(1);
      }
      return { kind: "ed25519", seed, ...(pub ? { publicKey: pub } : {}) };
    }
    default:
      throw new SshKeyError("UNSUPPORTED_KEY_TYPE", `unsupported private key algorithm ${oid}`);
  }
}

function readOpenssh(bin: Uint8Array): PrivateKeyMaterial {
  const { key } = decodeOpensshPrivateKey(bin);
  switch (key.type) {
    case "ssh-rsa":
      return rsaFromParts(key.n, key.e, key.d, key.p, key.q, key.iqmp);
    case "ssh-ed25519":
      return { kind: "ed25519", seed: key.seed, publicKey: key.publicKey };
    default:
      return ecMaterial(EC_CURVES[key.curve], key.d, key.point);
  }
}

function fromBlock(block: PemBlock, ecParams: EcCurve | undefined): PrivateKeyMaterial {
  switch (block.label) {
    case "RSA PRIVATE KEY":
      return readPkcs1(block.body);
    case "EC PRIVATE KEY":
      return readSec1(block.body, ecParams);
    case "PRIVATE KEY":
      return readPkcs8(block.body);
    case "OPENSSH PRIVATE KEY":
      return readOpenssh(block.body);
    default:
      throw new SshKeyError("UNSUPPORTED_KEY_TYPE", `unsupported private key type "${block.label}"`);
  }
}

const PRIVATE_LABELS = new Set([
  "RSA PRIVATE KEY",
  "EC PRIVATE KEY",
  "PRIVATE KEY",
  "OPENSSH PRIVATE KEY",
  "ENCRYPTED PRIVATE KEY",
  "DSA PRIVATE KEY",
]);

/**
 * Reads a PEM private key in any supported container.
 * @throws SshKeyError `ENCRYPTED_KEY`, `INVALID_KEY`, `UNSUPPORTED_KEY_TYPE`, `KEY_MISMATCH`
 */
export function readPrivateKeyPem(text: string): PrivateKeyMaterial {
  let blocks: PemBlock[];
  try {
    blocks = parsePem(text);
  } catch (e) {
    if (e instanceof WireError) throw invalid(`not a PEM private key: ${e.message}`, e);
    throw e;
  }
  let ecParams: EcCurve | undefined;
  for (const block of blocks) {
    if (block.label === "EC PARAMETERS") {
      // openssl ecparam -genkey writes `EC PARAMETERS` (an ECParameters OID) before the key.
      try {
        const r = new DerReader(block.body, "EC PARAMETERS");
        ecParams = readCurveOid(r);
        r.expectEnd();
      } catch (e) {
        if (e instanceof WireError) throw invalid(`EC PARAMETERS: ${e.message}`, e);
        throw e;
      }
      continue;
    }
    if (!PRIVATE_LABELS.has(block.label)) continue;
    if (block.label === "ENCRYPTED PRIVATE KEY" || /ENCRYPTED/i.test(block.headers["Proc-Type"] ?? "")) {
      throw new SshKeyError("ENCRYPTED_KEY", "this private key is passphrase protected");
    }
    if (block.label === "DSA PRIVATE KEY") throw new SshKeyError("UNSUPPORTED_KEY_TYPE", "DSA keys are not supported");
    try {
      return fromBlock(block, ecParams);
    } catch (e) {
      if (e instanceof WireError) {
        if (e.code === "ENCRYPTED")
          throw new SshKeyError("ENCRYPTED_KEY", "this private key is passphrase protected", { cause: e });
        if (e.code === "UNSUPPORTED" || e.code === "UNKNOWN_KEY_TYPE")
          throw new SshKeyError("UNSUPPORTED_KEY_TYPE", e.message, { cause: e });
        if (e.code === "KEY_TYPE_MISMATCH") throw new SshKeyError("KEY_MISMATCH", e.message, { cause: e });
        throw invalid(`${block.label}: ${e.message}`, e);
      }
      throw e;
    }
  }
  throw invalid("no PEM private key block found");
}

/** RFC 8017 A.1.2 RSAPrivateKey DER (version 0). */
export function encodePkcs1(key: RsaPrivateKeyMaterial): Uint8Array {
  return derSequence(
    derSmallInteger(0),
    derInteger(key.n),
    derInteger(key.e),
    derInteger(key.d),
    derInteger(key.p),
    derInteger(key.q),
    derInteger(key.dp),
    derInteger(key.dq),
    derInteger(key.qi),
  );
}

/**
 * RFC 5915 §3 ECPrivateKey DER. With `withParameters` the named curve ([0]) is included, as
 * in a standalone `EC PRIVATE KEY`; inside PKCS#8 it is left out (it is in the algorithm id).
 */
export function encodeSec1(
  key: EcPrivateKeyMaterial,
  point: Uint8Array | undefined,
  withParameters: boolean,
): Uint8Array {
  const parts = [derSmallInteger(1), derOctetString(padMagnitude(key.d, key.curve.size, "EC private key"))];
  if (withParameters) parts.push(derExplicit(0, derOid(key.curve.oid)));
  if (point) parts.push(derExplicit(1, derBitString(point)));
  return derSequence(...parts);
}

/** RFC 5208 §5 PrivateKeyInfo DER, the form WebCrypto's `importKey("pkcs8")` takes. */
export function encodePkcs8(key: PrivateKeyMaterial): Uint8Array {
  switch (key.kind) {
    case "rsa":
      return derSequence(
        derSmallInteger(0),
        derSequence(derOid(OID_RSA_ENCRYPTION), derNull()),
        derOctetString(encodePkcs1(key)),
      );
    case "ec":
      return derSequence(
        derSmallInteger(0),
        derSequence(derOid(OID_EC_PUBLIC_KEY), derOid(key.curve.oid)),
        derOctetString(encodeSec1(key, key.point, false)),
      );
    case "ed25519":
      // RFC 8410 §7.
      return derSequence(
        derSmallInteger(0),
        derSequence(derOid(OID_ED25519)),
        derOctetString(derOctetString(key.seed)),
      );
  }
}

/** Parses WebCrypto's `exportKey("pkcs8")` output. */
export function decodePkcs8(der: Uint8Array): PrivateKeyMaterial {
  try {
    return readPkcs8(der);
  } catch (e) {
    if (e instanceof WireError) throw invalid(`PKCS#8: ${e.message}`, e);
    throw e;
  }
}

/**
 * Writes a private key the way Vault returns it (decision S10): RSA as PKCS#1
 * `RSA PRIVATE KEY`, EC as SEC1 `EC PRIVATE KEY` with the named curve and public point,
 * Ed25519 as unencrypted `OPENSSH PRIVATE KEY` with an empty comment. Trailing newline included.
 * @param publicKey EC point or Ed25519 public key (required for those kinds)
 */
export function writePrivateKeyPem(key: PrivateKeyMaterial, publicKey?: Uint8Array): string {
  switch (key.kind) {
    case "rsa":
      return formatPem("RSA PRIVATE KEY", encodePkcs1(key));
    case "ec": {
      const point = publicKey ?? key.point;
      if (!point) throw invalid("EC public point required to write an EC PRIVATE KEY");
      return formatPem("EC PRIVATE KEY", encodeSec1(key, point, true));
    }
    case "ed25519": {
      const pub = publicKey ?? key.publicKey;
      if (!pub) throw invalid("Ed25519 public key required to write an OPENSSH PRIVATE KEY");
      // PROTOCOL.key; OpenSSH wraps the base64 at 70 columns.
      return formatPem(
        "OPENSSH PRIVATE KEY",
        encodeOpensshPrivateKey({ type: "ssh-ed25519", publicKey: pub, seed: key.seed }, ""),
        70,
      );
    }
  }
}
