/**
 * WebCrypto adapters for SSH keys: import, export, sign and verify, converting between
 * WebCrypto's formats and SSH's. Uses only `crypto.subtle` calls available in both Node 20
 * and workerd (pkcs8 and jwk import/export, raw Ed25519 public import, RSASSA-PKCS1-v1_5,
 * ECDSA, Ed25519).
 */

import { fromBase64, toBase64Url } from "../bytes";
import { WireError } from "../sshwire/errors";
import { EC_CURVES, type EcCurve, type SshSignatureAlgorithm, type SshSigningKeyType } from "../sshwire/key-types";
import type { SshPublicKey } from "../sshwire/public-key";
import { decodeSignature, ecdsaSignatureFromP1363, ecdsaSignatureToP1363, encodeSignature } from "../sshwire/signature";
import { bitLength, padMagnitude, stripLeadingZeros } from "../sshwire/writer";
import { encodePkcs8, type PrivateKeyMaterial } from "./private-key-formats";
import { SshKeyError } from "./ssh-key-error";

/** WebCrypto hash names used by SSH signature algorithms. */
export type HashName = "SHA-1" | "SHA-256" | "SHA-384" | "SHA-512";

/** RFC 4253 §6.6 (ssh-rsa: SHA-1) and RFC 8332 §3 (rsa-sha2-256/512). */
export const RSA_SIGNATURE_HASH = {
  "ssh-rsa": "SHA-1",
  "rsa-sha2-256": "SHA-256",
  "rsa-sha2-512": "SHA-512",
} as const satisfies Record<string, HashName>;

/** Copies bytes into a fresh ArrayBuffer (what `BufferSource` wants in both runtimes' typings). */
export function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  return copy.buffer;
}

/**
 * WebCrypto algorithm parameters, typed structurally so the code compiles against both the
 * DOM and the Workers type libraries.
 */
export interface WebCryptoParams {
  name: string;
  hash?: HashName;
  namedCurve?: string;
  modulusLength?: number;
  publicExponent?: Uint8Array;
}

/** WebCrypto import algorithm for a private key; `hash` matters only for RSA. */
export function importAlgorithm(material: PrivateKeyMaterial, hash: HashName = "SHA-256"): WebCryptoParams {
  switch (material.kind) {
    case "rsa":
      return { name: "RSASSA-PKCS1-v1_5", hash };
    case "ec":
      return { name: "ECDSA", namedCurve: material.curve.webCryptoName };
    case "ed25519":
      return { name: "Ed25519" };
  }
}

/** Imports a private key for signing (non-extractable). */
export function importPrivateKey(material: PrivateKeyMaterial, hash: HashName = "SHA-256"): Promise<CryptoKey> {
  return importPkcs8(material, hash, false);
}

/** A private key as WebCrypto's signing key; WebCrypto's refusal becomes `INVALID_KEY`. */
async function importPkcs8(material: PrivateKeyMaterial, hash: HashName, extractable: boolean): Promise<CryptoKey> {
  try {
    return await crypto.subtle.importKey(
      "pkcs8",
      toArrayBuffer(encodePkcs8(material)),
      importAlgorithm(material, hash),
      extractable,
      ["sign"],
    );
  } catch (e) {
    throw new SshKeyError(
      "INVALID_KEY",
      `the private key was rejected by WebCrypto: ${e instanceof Error ? e.message : String(e)}`,
      { cause: e },
    );
  }
}

function jwkField(jwk: JsonWebKey, name: "x" | "y"): Uint8Array {
  const v = jwk[name];
  if (typeof v !== "string") throw new SshKeyError("INVALID_KEY", `WebCrypto did not export ${name}`);
  return fromBase64(v);
}

/**
 * The SSH public key of a private key. Uses the public half stored with the key when the
 * container had one, otherwise asks WebCrypto (import extractable, export as JWK).
 */
export async function publicKeyOf(material: PrivateKeyMaterial): Promise<SshPublicKey> {
  switch (material.kind) {
    case "rsa":
      return { type: "ssh-rsa", e: stripLeadingZeros(material.e), n: stripLeadingZeros(material.n) };
    case "ec": {
      const curve = material.curve;
      const type = `ecdsa-sha2-${curve.name}` as const;
      if (material.point) return { type, curve: curve.name, point: material.point };
      const jwk = await exportJwk(material);
      const point = new Uint8Array(1 + 2 * curve.size);
      point[0] = 0x04;
      point.set(padMagnitude(jwkField(jwk, "x"), curve.size, "x"), 1);
      point.set(padMagnitude(jwkField(jwk, "y"), curve.size, "y"), 1 + curve.size);
      return { type, curve: curve.name, point };
    }
    case "ed25519": {
      if (material.publicKey) return { type: "ssh-ed25519", key: material.publicKey };
      const jwk = await exportJwk(material);
      return { type: "ssh-ed25519", key: jwkField(jwk, "x") };
    }
  }
}

async function exportJwk(material: PrivateKeyMaterial): Promise<JsonWebKey> {
  const key = await importPkcs8(material, "SHA-256", true);
  return (await crypto.subtle.exportKey("jwk", key)) as JsonWebKey;
}

/** The SSH key type of a private key. */
export function keyTypeOf(material: PrivateKeyMaterial): SshSigningKeyType {
  switch (material.kind) {
    case "rsa":
      return "ssh-rsa";
    case "ec":
      return `ecdsa-sha2-${material.curve.name}`;
    case "ed25519":
      return "ssh-ed25519";
  }
}

/** Key size in bits: RSA modulus length, curve size, 256 for Ed25519. */
export function bitsOf(material: PrivateKeyMaterial): number {
  switch (material.kind) {
    case "rsa":
      return bitLength(material.n);
    case "ec":
      return material.curve.bits;
    case "ed25519":
      return 256;
  }
}

/**
 * Signs `data` and returns the algorithm-specific signature blob (not yet wrapped in the
 * RFC 4253 §6.6 `string algorithm, string blob` envelope).
 */
export async function signBlob(key: CryptoKey, material: PrivateKeyMaterial, data: Uint8Array): Promise<Uint8Array> {
  switch (material.kind) {
    case "rsa": {
      // RFC 8332 §3 / RFC 4253 §6.6: the raw RSASSA-PKCS1-v1_5 signature, modulus-length.
      const sig = new Uint8Array(await crypto.subtle.sign({ name: "RSASSA-PKCS1-v1_5" }, key, toArrayBuffer(data)));
      return sig;
    }
    case "ec": {
      // RFC 5656 §6.2.1: the hash follows the curve size. WebCrypto returns IEEE P1363 r || s.
      const rs = new Uint8Array(
        await crypto.subtle.sign({ name: "ECDSA", hash: material.curve.hash }, key, toArrayBuffer(data)),
      );
      return ecdsaSignatureFromP1363(material.curve, rs);
    }
    case "ed25519":
      // RFC 8709 §6: the 64-byte RFC 8032 signature.
      return new Uint8Array(await crypto.subtle.sign({ name: "Ed25519" }, key, toArrayBuffer(data)));
  }
}

/** Imports an SSH public key for verification with the given signature algorithm. */
export async function importPublicKey(pub: SshPublicKey, algorithm: string): Promise<CryptoKey> {
  switch (pub.type) {
    case "ssh-rsa": {
      const hash = RSA_SIGNATURE_HASH[algorithm as keyof typeof RSA_SIGNATURE_HASH];
      if (!hash)
        throw new SshKeyError(
          "ALGORITHM_MISMATCH",
          `unsupported signature algorithm ${algorithm} for key format ssh-rsa`,
        );
      const jwk: JsonWebKey = { kty: "RSA", n: toBase64Url(pub.n), e: toBase64Url(pub.e), ext: true };
      return crypto.subtle.importKey("jwk", jwk, { name: "RSASSA-PKCS1-v1_5", hash }, true, ["verify"]);
    }
    case "ecdsa-sha2-nistp256":
    case "ecdsa-sha2-nistp384":
    case "ecdsa-sha2-nistp521": {
      const curve = EC_CURVES[pub.curve];
      const jwk: JsonWebKey = {
        kty: "EC",
        crv: curve.webCryptoName,
        x: toBase64Url(pub.point.subarray(1, 1 + curve.size)),
        y: toBase64Url(pub.point.subarray(1 + curve.size)),
        ext: true,
      };
      return crypto.subtle.importKey("jwk", jwk, { name: "ECDSA", namedCurve: curve.webCryptoName }, true, ["verify"]);
    }
    case "ssh-ed25519":
      return crypto.subtle.importKey("raw", toArrayBuffer(pub.key), { name: "Ed25519" }, true, ["verify"]);
    default:
      throw new SshKeyError("UNSUPPORTED_KEY_TYPE", `cannot verify signatures made by ${pub.type} keys`);
  }
}

/** True when `algorithm` is one a key of this type can use (RSA: the three of decision S11). */
export function algorithmFitsKey(keyType: string, algorithm: string): algorithm is SshSignatureAlgorithm {
  if (keyType === "ssh-rsa") return algorithm in RSA_SIGNATURE_HASH;
  return algorithm === keyType;
}

/**
 * Verifies an RFC 4253 §6.6 signature (`string algorithm, string blob`) over `data` with an
 * SSH public key. Returns false for any malformed signature or algorithm that does not fit
 * the key; throws `SshKeyError` only for key types that cannot be verified here (DSA, sk-*).
 */
export async function verifySignature(pub: SshPublicKey, signature: Uint8Array, data: Uint8Array): Promise<boolean> {
  if (pub.type === "ssh-dss" || pub.type.startsWith("sk-")) {
    throw new SshKeyError("UNSUPPORTED_KEY_TYPE", `cannot verify signatures made by ${pub.type} keys`);
  }
  let algorithm: string;
  let blob: Uint8Array;
  try {
    ({ algorithm, blob } = decodeSignature(signature));
  } catch (e) {
    if (e instanceof WireError) return false;
    throw e;
  }
  if (!algorithmFitsKey(pub.type, algorithm)) return false;
  try {
    return await verifyWithWebCrypto(pub, algorithm, blob, data);
  } catch (e) {
    // Fail closed: a key or signature WebCrypto will not even load verifies nothing.
    if (e instanceof SshKeyError) throw e;
    return false;
  }
}

async function verifyWithWebCrypto(
  pub: SshPublicKey,
  algorithm: string,
  blob: Uint8Array,
  data: Uint8Array,
): Promise<boolean> {
  const key = await importPublicKey(pub, algorithm);
  switch (pub.type) {
    case "ssh-rsa": {
      // OpenSSH accepts RSA signatures shorter than the modulus (left-padded); longer ones never verify.
      const size = Math.ceil(bitLength(pub.n) / 8);
      if (blob.length > size) return false;
      const sig = blob.length < size ? padMagnitude(blob, size, "signature") : blob;
      return crypto.subtle.verify({ name: "RSASSA-PKCS1-v1_5" }, key, toArrayBuffer(sig), toArrayBuffer(data));
    }
    case "ssh-ed25519":
      if (blob.length !== 64) return false;
      return crypto.subtle.verify({ name: "Ed25519" }, key, toArrayBuffer(blob), toArrayBuffer(data));
    default: {
      const curve: EcCurve = EC_CURVES[(pub as { curve: keyof typeof EC_CURVES }).curve];
      // Strict: minimal mpints, 1 <= r, s < n (throws WireError, caught by the caller).
      const rs = ecdsaSignatureToP1363(curve, blob);
      return crypto.subtle.verify({ name: "ECDSA", hash: curve.hash }, key, toArrayBuffer(rs), toArrayBuffer(data));
    }
  }
}

/** Wraps a signature blob in the RFC 4253 §6.6 envelope. */
export function wrapSignature(algorithm: SshSignatureAlgorithm, blob: Uint8Array): Uint8Array {
  return encodeSignature(algorithm, blob);
}
