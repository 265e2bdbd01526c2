/**
 * SSH key, certificate and signature algorithm names, and the NIST curves they use.
 *
 * Sources: RFC 4253 §6.6 (ssh-rsa, ssh-dss), RFC 5656 §3.1/§6.1 (ecdsa-sha2-*), RFC 8709
 * (ssh-ed25519), RFC 8332 (rsa-sha2-256/512), OpenSSH PROTOCOL.u2f (sk-*), OpenSSH
 * PROTOCOL.certkeys (*-cert-v01@openssh.com).
 */

/** Plain (non-certificate) public key algorithm names this layer can parse. */
export type SshKeyType =
  | "ssh-rsa"
  | "ssh-dss"
  | "ecdsa-sha2-nistp256"
  | "ecdsa-sha2-nistp384"
  | "ecdsa-sha2-nistp521"
  | "ssh-ed25519"
  | "sk-ecdsa-sha2-nistp256@openssh.com"
  | "sk-ssh-ed25519@openssh.com";

/** Key types that can sign (a CA key): no DSA, no security-key types. */
export type SshSigningKeyType =
  | "ssh-rsa"
  | "ecdsa-sha2-nistp256"
  | "ecdsa-sha2-nistp384"
  | "ecdsa-sha2-nistp521"
  | "ssh-ed25519";

/** Signature algorithm names (RFC 8332 adds the two SHA-2 RSA names). */
export type SshSignatureAlgorithm =
  | "ssh-rsa"
  | "rsa-sha2-256"
  | "rsa-sha2-512"
  | "ecdsa-sha2-nistp256"
  | "ecdsa-sha2-nistp384"
  | "ecdsa-sha2-nistp521"
  | "ssh-ed25519";

/** RSA signature algorithm names (decision S11). */
export type RsaSignatureAlgorithm = "ssh-rsa" | "rsa-sha2-256" | "rsa-sha2-512";

/** Every plain key type, in a stable order. */
export const SSH_KEY_TYPES: readonly SshKeyType[] = [
  "ssh-rsa",
  "ssh-dss",
  "ecdsa-sha2-nistp256",
  "ecdsa-sha2-nistp384",
  "ecdsa-sha2-nistp521",
  "ssh-ed25519",
  "sk-ecdsa-sha2-nistp256@openssh.com",
  "sk-ssh-ed25519@openssh.com",
];

/** RFC 5656 §6.1 curve identifiers and the matching WebCrypto curve names. */
export type EcCurveName = "nistp256" | "nistp384" | "nistp521";

/** Parameters of a NIST prime curve y² = x³ − 3x + b over GF(p) (FIPS 186-4 D.1.2). */
export interface EcCurve {
  /** RFC 5656 §6.1 identifier. */
  readonly name: EcCurveName;
  /** WebCrypto `namedCurve`. */
  readonly webCryptoName: "P-256" | "P-384" | "P-521";
  /** Key size in bits (what `allowed_user_key_lengths` compares). */
  readonly bits: 256 | 384 | 521;
  /** Field element / scalar size in bytes. */
  readonly size: number;
  /** RFC 5656 §6.2.1 hash for ecdsa-sha2-*. */
  readonly hash: "SHA-256" | "SHA-384" | "SHA-512";
  /** Field prime. */
  readonly p: bigint;
  /** Curve coefficient b. */
  readonly b: bigint;
  /** Group order. */
  readonly n: bigint;
  /** DER OID of the named curve (RFC 5480 §2.1.1.1), dotted. */
  readonly oid: string;
}

/** FIPS 186-4 D.1.2.3–5 curve constants. */
export const EC_CURVES: Readonly<Record<EcCurveName, EcCurve>> = {
  nistp256: {
    name: "nistp256",
    webCryptoName: "P-256",
    bits: 256,
    size: 32,
    hash: "SHA-256",
    p: 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffffn,
    b: 0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604bn,
    n: 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n,
    oid: "1.2.840.10045.3.1.7",
  },
  nistp384: {
    name: "nistp384",
    webCryptoName: "P-384",
    bits: 384,
    size: 48,
    hash: "SHA-384",
    p: 0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffeffffffff0000000000000000ffffffffn,
    b: 0xb3312fa7e23ee7e4988e056be3f82d19181d9c6efe8141120314088f5013875ac656398d8a2ed19d2a85c8edd3ec2aefn,
    n: 0xffffffffffffffffffffffffffffffffffffffffffffffffc7634d81f4372ddf581a0db248b0a77aecec196accc52973n,
    oid: "1.3.132.0.34",
  },
  nistp521: {
    name: "nistp521",
    webCryptoName: "P-521",
    bits: 521,
    size: 66,
    hash: "SHA-512",
    p: (1n << 521n) - 1n,
    b: 0x0051953eb9618e1c9a1f929a21a0b68540eea2da725b99b315f3b8b489918ef109e156193951ec7e937b1652c0bd3bb1bf073573df883d2c34f1ef451fd46b503f00n,
    n: 0x01fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffa51868783bf2f966b7fcc0148f709a5d03bb5c9b8899c47aebb6fb71e91386409n,
    oid: "1.3.132.0.35",
  },
};

/** Curve by RFC 5656 identifier, or undefined. */
export function curveByName(name: string): EcCurve | undefined {
  return name === "nistp256" || name === "nistp384" || name === "nistp521" ? EC_CURVES[name] : undefined;
}

/** Curve by bit size (256/384/521), or undefined. */
export function curveByBits(bits: number): EcCurve | undefined {
  return Object.values(EC_CURVES).find((c) => c.bits === bits);
}

/** Curve by dotted OID, or undefined. */
export function curveByOid(oid: string): EcCurve | undefined {
  return Object.values(EC_CURVES).find((c) => c.oid === oid);
}

/** PROTOCOL.certkeys: certificate type name for a plain key type. */
export const CERT_TYPE_FOR_KEY: Readonly<Record<SshKeyType, string>> = {
  "ssh-rsa": "ssh-rsa-cert-v01@openssh.com",
  "ssh-dss": "ssh-dss-cert-v01@openssh.com",
  "ecdsa-sha2-nistp256": "ecdsa-sha2-nistp256-cert-v01@openssh.com",
  "ecdsa-sha2-nistp384": "ecdsa-sha2-nistp384-cert-v01@openssh.com",
  "ecdsa-sha2-nistp521": "ecdsa-sha2-nistp521-cert-v01@openssh.com",
  "ssh-ed25519": "ssh-ed25519-cert-v01@openssh.com",
  "sk-ecdsa-sha2-nistp256@openssh.com": "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com",
  "sk-ssh-ed25519@openssh.com": "sk-ssh-ed25519-cert-v01@openssh.com",
};

/** PROTOCOL.certkeys: plain key type for a certificate type name, or undefined. */
export function keyTypeForCertType(certType: string): SshKeyType | undefined {
  for (const k of SSH_KEY_TYPES) if (CERT_TYPE_FOR_KEY[k] === certType) return k;
  return undefined;
}

/** True for a name ending in `-cert-v01@openssh.com` (known or not). */
export function isCertificateTypeName(name: string): boolean {
  return name.endsWith("-cert-v01@openssh.com") || name.endsWith("-cert-v00@openssh.com");
}

/** Type guard for {@link SshKeyType}. */
export function isSshKeyType(name: string): name is SshKeyType {
  return (SSH_KEY_TYPES as readonly string[]).includes(name);
}
