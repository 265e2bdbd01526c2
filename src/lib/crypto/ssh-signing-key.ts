/**
 * A CA signing key: the private key imported into WebCrypto once, plus its SSH public key.
 * RSA keys are bound to one hash per WebCrypto key, so one CryptoKey per RSA signature
 * algorithm is imported on first use and cached.
 */

import { randomBytes } from "../bytes";
import type { SshSignatureAlgorithm, SshSigningKeyType } from "../sshwire/key-types";
import { encodePublicKey, formatPublicKeyText, type SshPublicKey } from "../sshwire/public-key";
import type { PrivateKeyMaterial } from "./private-key-formats";
import { SshKeyError } from "./ssh-key-error";
import {
  algorithmFitsKey,
  bitsOf,
  type HashName,
  importPrivateKey,
  keyTypeOf,
  publicKeyOf,
  RSA_SIGNATURE_HASH,
  signBlob,
  verifySignature,
  wrapSignature,
} from "./ssh-webcrypto";

/** A private key ready to sign SSH data, reusable for any number of signatures. */
export interface SshSigningKey {
  /** SSH key type of the CA key. */
  readonly keyType: SshSigningKeyType;
  /** Key size: RSA modulus bits, EC curve bits (256/384/521), 256 for Ed25519. */
  readonly bits: number;
  /** The public key, decoded. */
  readonly publicKey: SshPublicKey;
  /** The public key's wire-format blob (the certificate "signature key" field). */
  readonly publicKeyBlob: Uint8Array;
  /** Decision S11: `rsa-sha2-256` for RSA keys, the key's own algorithm otherwise. */
  readonly defaultAlgorithm: SshSignatureAlgorithm;
  /**
   * authorized_keys line `"<type> <base64>[ <comment>]\n"`, with a trailing newline as Vault
   * returns `public_key` (Vault's path_config_ca.go).
   */
  publicKeyText(comment?: string): string;
  /**
   * Signs `data` and returns the RFC 4253 §6.6 signature (`string algorithm, string blob`),
   * ready for a certificate's signature field.
   * @param algorithm RSA keys: `ssh-rsa` (SHA-1, only on request, decision S11), `rsa-sha2-256`
   *   (default) or `rsa-sha2-512`; other keys: omit it or pass their own algorithm.
   * @throws SshKeyError `ALGORITHM_MISMATCH` when the algorithm does not fit the key
   */
  sign(data: Uint8Array, algorithm?: SshSignatureAlgorithm): Promise<Uint8Array>;
}

class WebCryptoSigningKey implements SshSigningKey {
  readonly keyType: SshSigningKeyType;
  readonly bits: number;
  readonly publicKey: SshPublicKey;
  readonly publicKeyBlob: Uint8Array;
  readonly defaultAlgorithm: SshSignatureAlgorithm;
  readonly #material: PrivateKeyMaterial;
  readonly #keys = new Map<HashName, Promise<CryptoKey>>();

  constructor(material: PrivateKeyMaterial, publicKey: SshPublicKey, preloaded?: { hash: HashName; key: CryptoKey }) {
    this.#material = material;
    this.keyType = keyTypeOf(material);
    this.bits = bitsOf(material);
    this.publicKey = publicKey;
    this.publicKeyBlob = encodePublicKey(publicKey);
    this.defaultAlgorithm = this.keyType === "ssh-rsa" ? "rsa-sha2-256" : this.keyType;
    if (preloaded) this.#keys.set(preloaded.hash, Promise.resolve(preloaded.key));
  }

  publicKeyText(comment?: string): string {
    return `${formatPublicKeyText(this.publicKeyBlob, comment, this.keyType)}\n`;
  }

  #cryptoKey(hash: HashName): Promise<CryptoKey> {
    let key = this.#keys.get(hash);
    if (!key) {
      key = importPrivateKey(this.#material, hash);
      // A failed import must not poison the cache.
      key.catch(() => this.#keys.delete(hash));
      this.#keys.set(hash, key);
    }
    return key;
  }

  /** Loads the WebCrypto key(s) now rather than on first use. */
  async preload(): Promise<void> {
    // RSA: the default algorithm (rsa-sha2-256, decision S11); others ignore the hash.
    await this.#cryptoKey("SHA-256");
  }

  async sign(data: Uint8Array, algorithm?: SshSignatureAlgorithm): Promise<Uint8Array> {
    const alg = algorithm ?? this.defaultAlgorithm;
    if (!algorithmFitsKey(this.keyType, alg)) {
      throw new SshKeyError(
        "ALGORITHM_MISMATCH",
        `unsupported signature algorithm ${alg} for key format ${this.keyType}`,
      );
    }
    const hash: HashName =
      this.keyType === "ssh-rsa" ? RSA_SIGNATURE_HASH[alg as keyof typeof RSA_SIGNATURE_HASH] : "SHA-256";
    const blob = await signBlob(await this.#cryptoKey(hash), this.#material, data);
    return wrapSignature(alg, blob);
  }
}

/**
 * Builds a signing key from private key material.
 * @param options.check run a pairwise sign/verify check (for imported keys, so a private key
 *   that does not match its stored public half is caught before it signs anything)
 * @throws SshKeyError
 */
export async function createSigningKey(
  material: PrivateKeyMaterial,
  options: { check?: boolean; publicKey?: SshPublicKey; preloaded?: { hash: HashName; key: CryptoKey } } = {},
): Promise<SshSigningKey> {
  const publicKey = options.publicKey ?? (await publicKeyOf(material));
  const key = new WebCryptoSigningKey(material, publicKey, options.preloaded);
  await key.preload();
  if (options.check) {
    const probe = randomBytes(32);
    const sig = await key.sign(probe);
    if (!(await verifySignature(publicKey, sig, probe))) {
      throw new SshKeyError("KEY_MISMATCH", "the private key does not match its public key");
    }
  }
  return key;
}
