/**
 * Facade for the SSH CA service: import or generate CA keys, sign and verify certificates,
 * read subject public keys. Layering: `src/lib/sshwire` (bytes) → `ssh-webcrypto` /
 * `private-key-formats` (adapters) → this file.
 *
 * @example
 * const ca = await importSigningKey(storedPem);           // once per isolate; cache it
 * const subject = parseSubjectPublicKey(body.public_key); // S17 refusals
 * const { text } = await signCertificate(ca, {
 *   subjectKeyBlob: subject.blob, serial, certType: 1, keyId, principals: ["alice"],
 *   validAfter, validBefore, criticalOptions: {}, extensions: { "permit-pty": "" },
 * });
 */

import { bytesEqual, fromBase64, randomBytes, toBase64, toHex } from "../bytes";
import {
  appendCertificateSignature,
  type CertificateBody,
  type CertOptionsInput,
  decodeCertificate,
  encodeCertificateToBeSigned,
  type SshCertificate,
} from "../sshwire/certificate";
import { WireError } from "../sshwire/errors";
import {
  CERT_TYPE_FOR_KEY,
  curveByBits,
  type RsaSignatureAlgorithm,
  type SshSignatureAlgorithm,
} from "../sshwire/key-types";
import { decodePublicKey, parsePublicKeyText, publicKeyBits, type SshPublicKey } from "../sshwire/public-key";
import { padMagnitude } from "../sshwire/writer";
import { decodePkcs8, type PrivateKeyMaterial, readPrivateKeyPem, writePrivateKeyPem } from "./private-key-formats";
import { SshKeyError } from "./ssh-key-error";
import { createSigningKey, type SshSigningKey } from "./ssh-signing-key";
import { toArrayBuffer, verifySignature, type WebCryptoParams } from "./ssh-webcrypto";

export { WireError } from "../sshwire/errors";
export { SshKeyError } from "./ssh-key-error";
export type { SshSigningKey } from "./ssh-signing-key";

/**
 * Imports a CA private key from PEM text: PKCS#1 `RSA PRIVATE KEY`, SEC1 `EC PRIVATE KEY`
 * (optionally after `EC PARAMETERS`), PKCS#8 `PRIVATE KEY` (RSA, EC, Ed25519) or unencrypted
 * `OPENSSH PRIVATE KEY` (RSA, ECDSA, Ed25519). Imports into WebCrypto once and checks that the
 * key signs verifiably with its own public half. The result is reusable: cache it per isolate.
 * @throws SshKeyError `ENCRYPTED_KEY`, `INVALID_KEY`, `UNSUPPORTED_KEY_TYPE`, `KEY_MISMATCH`
 */
export async function importSigningKey(privateKeyPem: string): Promise<SshSigningKey> {
  const material = readPrivateKeyPem(privateKeyPem);
  return createSigningKey(material, { check: true });
}

/** Key kinds `generateSshKeyPair` accepts (the `issue` endpoint's `key_type`). */
export type SshKeyKind = "rsa" | "ec" | "ed25519";

/** RSA sizes of decision S10. */
export const RSA_KEY_BITS = [2048, 3072, 4096] as const;

/** Options of {@link generateSshKeyPair}. */
export interface GenerateOptions {
  /**
   * Accept any RSA size from 2048 to 16384 bits in steps of 128 instead of only 2048/3072/4096
   * (Vault's `config/ca` accepts any size of at least 2048, Vault's path_config_ca.go; workerd's
   * BoringSSL generates only multiples of 128, so other sizes are refused up front).
   */
  readonly anyRsaSize?: boolean;
}

/** A freshly generated key pair. */
export interface GeneratedSshKeyPair {
  /** Ready to sign (for a generated CA). */
  readonly signingKey: SshSigningKey;
  /** Decision S10 format, trailing newline included: `RSA PRIVATE KEY`, `EC PRIVATE KEY` or `OPENSSH PRIVATE KEY`. */
  readonly privateKeyPem: string;
  /** authorized_keys line `"<type> <base64>\n"` (no comment, trailing newline). */
  readonly publicKeyText: string;
}

/**
 * Generates a key pair with WebCrypto. `bits`: RSA 2048, 3072 or 4096; EC 256, 384 or 521;
 * ignored for Ed25519 (decision S10). Callers map 0 to their default before calling.
 * @throws SshKeyError `INVALID_KEY_SIZE` for any other size (validated before generating)
 */
export async function generateSshKeyPair(
  kind: SshKeyKind,
  bits: number,
  options: GenerateOptions = {},
): Promise<GeneratedSshKeyPair> {
  let params: WebCryptoParams;
  switch (kind) {
    case "rsa": {
      const ok = options.anyRsaSize
        ? Number.isInteger(bits) && bits >= 2048 && bits <= 16384 && bits % 128 === 0
        : (RSA_KEY_BITS as readonly number[]).includes(bits);
      if (!ok) {
        const allowed = options.anyRsaSize ? "a multiple of 128 from 2048 to 16384" : "one of 2048, 3072, 4096";
        throw new SshKeyError("INVALID_KEY_SIZE", `invalid RSA key size ${bits}: must be ${allowed}`);
      }
      params = {
        name: "RSASSA-PKCS1-v1_5",
        modulusLength: bits,
        publicExponent: Uint8Array.of(1, 0, 1),
        hash: "SHA-256",
      };
      break;
    }
    case "ec": {
      const curve = curveByBits(bits);
      if (!curve)
        throw new SshKeyError("INVALID_KEY_SIZE", `invalid EC key size ${bits}: must be one of 256, 384, 521`);
      params = { name: "ECDSA", namedCurve: curve.webCryptoName };
      break;
    }
    case "ed25519":
      params = { name: "Ed25519" };
      break;
    default:
      throw new SshKeyError("UNSUPPORTED_KEY_TYPE", `unknown key type ${String(kind)}`);
  }
  const pair = (await crypto.subtle.generateKey(params, true, ["sign", "verify"])) as CryptoKeyPair;
  const material = decodePkcs8(
    new Uint8Array((await crypto.subtle.exportKey("pkcs8", pair.privateKey)) as ArrayBuffer),
  );
  const publicKey = await publicKeyFromCryptoKey(material, pair.publicKey);
  const signingKey = await createSigningKey(material, {
    publicKey,
    preloaded: { hash: "SHA-256", key: pair.privateKey },
  });
  const publicHalf =
    publicKey.type === "ssh-ed25519" ? publicKey.key : "point" in publicKey ? publicKey.point : undefined;
  return {
    signingKey,
    privateKeyPem: writePrivateKeyPem(material, publicHalf),
    publicKeyText: signingKey.publicKeyText(),
  };
}

async function publicKeyFromCryptoKey(material: PrivateKeyMaterial, key: CryptoKey): Promise<SshPublicKey> {
  if (material.kind === "rsa") return { type: "ssh-rsa", e: material.e, n: material.n };
  const jwk = (await crypto.subtle.exportKey("jwk", key)) as JsonWebKey;
  if (material.kind === "ed25519") return { type: "ssh-ed25519", key: fromBase64(jwk.x ?? "") };
  const size = material.curve.size;
  const point = new Uint8Array(1 + 2 * size);
  point[0] = 0x04;
  point.set(padMagnitude(fromBase64(jwk.x ?? ""), size, "x"), 1);
  point.set(padMagnitude(fromBase64(jwk.y ?? ""), size, "y"), 1 + size);
  return { type: `ecdsa-sha2-${material.curve.name}`, curve: material.curve.name, point };
}

/** What the CA service decides for a certificate; everything else is filled in here. */
export interface CertificateTemplate {
  /** Subject public key blob (e.g. {@link SubjectPublicKey.blob}). */
  readonly subjectKeyBlob: Uint8Array;
  /** uint64 serial number. */
  readonly serial: bigint;
  /** 1 = user, 2 = host. */
  readonly certType: 1 | 2;
  /** Key ID. */
  readonly keyId: string;
  /** Principals, written in the order given (Vault sorts them first, decision S8). */
  readonly principals: readonly string[];
  /** Seconds since the epoch (uint64). */
  readonly validAfter: bigint;
  /** Seconds since the epoch (uint64). */
  readonly validBefore: bigint;
  /** Name → value; "" for flags. Sorted by name bytes when encoded. */
  readonly criticalOptions: Readonly<Record<string, string>>;
  /** Name → value; "" for flags such as `permit-pty`. */
  readonly extensions: Readonly<Record<string, string>>;
  /** 32 random bytes when omitted. */
  readonly nonce?: Uint8Array;
}

/** A signed certificate. */
export interface SignedCertificate {
  /** The certificate blob. */
  readonly blob: Uint8Array;
  /**
   * `"<cert-type> <base64>\n"`: no comment, trailing newline, exactly Vault's `signed_key`
   * (Vault's path_issue_sign.go).
   */
  readonly text: string;
  /** The certificate type name, e.g. `ssh-ed25519-cert-v01@openssh.com`. */
  readonly typeName: string;
  /** The signature algorithm used. */
  readonly algorithm: SshSignatureAlgorithm;
}

/**
 * Builds and signs a certificate (PROTOCOL.certkeys) for `template.subjectKeyBlob` with `ca`.
 * @param algorithm RSA CAs only: `rsa-sha2-256` (default, decision S11), `rsa-sha2-512`, or
 *   `ssh-rsa` (SHA-1; only when a role asks, with a warning, S11). Omit for other CAs.
 * @throws SshKeyError `ALGORITHM_MISMATCH` (RSA algorithm with a non-RSA CA),
 *   `UNSUPPORTED_KEY_TYPE` (DSA subject); WireError for a bad subject blob, duplicate options
 *   or out-of-range integers
 */
export async function signCertificate(
  ca: SshSigningKey,
  template: CertificateTemplate,
  algorithm?: RsaSignatureAlgorithm,
): Promise<SignedCertificate> {
  const alg: SshSignatureAlgorithm = algorithm ?? ca.defaultAlgorithm;
  if (algorithm !== undefined && ca.keyType !== "ssh-rsa") {
    throw new SshKeyError(
      "ALGORITHM_MISMATCH",
      `unsupported signature algorithm ${algorithm} for key format ${ca.keyType}`,
    );
  }
  const publicKey = decodePublicKey(template.subjectKeyBlob);
  if (publicKey.type === "ssh-dss") {
    // Decision S17.
    throw new SshKeyError("UNSUPPORTED_KEY_TYPE", "ssh-dss keys are not supported");
  }
  const body: CertificateBody = {
    nonce: template.nonce ?? randomBytes(32),
    publicKey,
    serial: template.serial,
    certType: template.certType,
    keyId: template.keyId,
    principals: template.principals,
    validAfter: template.validAfter,
    validBefore: template.validBefore,
    criticalOptions: template.criticalOptions as CertOptionsInput,
    extensions: template.extensions as CertOptionsInput,
    signatureKey: ca.publicKeyBlob,
  };
  // PROTOCOL.certkeys: the signature covers every field before it.
  const toBeSigned = encodeCertificateToBeSigned(body);
  const signature = await ca.sign(toBeSigned, alg);
  const blob = appendCertificateSignature(toBeSigned, signature);
  const typeName = CERT_TYPE_FOR_KEY[publicKey.type];
  return { blob, text: `${typeName} ${toBase64(blob)}\n`, typeName, algorithm: alg };
}

/**
 * Checks a certificate's CA signature (not its validity period or principals). A blob is
 * decoded strictly first, so malformed input throws `WireError`; a well-formed certificate
 * with a wrong signature gives false.
 * @throws WireError for a malformed blob; SshKeyError for CA key types we cannot verify (DSA, sk-*)
 */
export async function verifyCertificate(certificate: Uint8Array | SshCertificate): Promise<boolean> {
  const cert = certificate instanceof Uint8Array ? decodeCertificate(certificate) : certificate;
  return verifySignature(cert.signatureKeyParsed, cert.signatureBytes, cert.signedBytes);
}

/** Why a subject public key was refused; `message` is the full 400 text. */
export type SubjectKeyErrorCode = "INVALID" | "CERTIFICATE" | "DSA_NOT_SUPPORTED";

/** Refusal of a `public_key` sent to sign, with Vault's / decision S17's message text. */
export class SubjectKeyError extends Error {
  readonly code: SubjectKeyErrorCode;

  constructor(code: SubjectKeyErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "SubjectKeyError";
    this.code = code;
  }
}

/** A subject public key accepted for signing. */
export interface SubjectPublicKey {
  /** The decoded key. */
  readonly key: SshPublicKey;
  /** Its wire-format blob (hash it for `{{public_key_hash}}`, decision S7). */
  readonly blob: Uint8Array;
  /** Key type name, e.g. `ssh-ed25519`. */
  readonly type: SshPublicKey["type"];
  /** Bits as `allowed_user_key_lengths` compares them (RSA modulus, curve size, 256 for Ed25519). */
  readonly bits: number;
}

/**
 * Reads the `public_key` of a sign request (Vault's path_issue_sign.go: `type base64 [comment]`
 * or bare base64) and refuses what decision S17 refuses.
 * @throws SubjectKeyError with message `failed to parse public_key as SSH key: <cause>`,
 *   `failed to parse public_key as SSH key: certificates cannot be signed`, or
 *   `public_key failed to meet the key requirements: ssh-dss keys are not supported`
 */
export function parseSubjectPublicKey(text: string): SubjectPublicKey {
  let parsed: ReturnType<typeof parsePublicKeyText>;
  try {
    parsed = parsePublicKeyText(text);
  } catch (e) {
    if (!(e instanceof WireError)) throw e;
    if (e.code === "CERTIFICATE") {
      throw new SubjectKeyError("CERTIFICATE", "failed to parse public_key as SSH key: certificates cannot be signed", {
        cause: e,
      });
    }
    throw new SubjectKeyError("INVALID", `failed to parse public_key as SSH key: ${e.message}`, { cause: e });
  }
  if (parsed.key.type === "ssh-dss") {
    throw new SubjectKeyError(
      "DSA_NOT_SUPPORTED",
      "public_key failed to meet the key requirements: ssh-dss keys are not supported",
    );
  }
  return { key: parsed.key, blob: parsed.blob, type: parsed.key.type, bits: publicKeyBits(parsed.key) };
}

/** Decision S7 `{{public_key_hash}}`: lowercase hex SHA-256 of a public key's wire-format blob. */
export async function publicKeyHash(blob: Uint8Array): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", toArrayBuffer(blob))));
}

/**
 * Decision S9: true when `publicKeyText` (authorized_keys line or bare base64) is the public
 * half of `key`.
 * @throws WireError when the text is not a public key
 */
export function publicKeyMatches(publicKeyText: string, key: SshSigningKey): boolean {
  const { blob } = parsePublicKeyText(publicKeyText);
  return bytesEqual(blob, key.publicKeyBlob);
}
