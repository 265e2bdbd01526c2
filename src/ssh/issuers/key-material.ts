/**
 * The key pair of a new issuer, from `POST config/ca` or `POST issuers/import`
 * (Vault's path_config_ca.go, which decides between supplied and generated keys; decisions S9, S20): supplied
 * keys are parsed and must match; otherwise a pair is generated after every parameter has
 * been validated. Errors are Vault's texts as 400s (S4).
 */
import { bytesEqual } from "../../lib/bytes";
import {
  generateSshKeyPair,
  importSigningKey,
  SshKeyError,
  type SshSigningKey,
} from "../../lib/crypto/ssh-keys-and-certificates";
import { WireError } from "../../lib/sshwire/errors";
import { parseCanonicalPublicKey } from "../../lib/sshwire/public-key";
import { badRequest } from "../errors";
import { caKeySpec, KeySpecError, sshKeyTypeOf } from "./key-specs";

/** The key fields shared by config/ca and issuers/import (OpenBao's common issuer fields). */
export const KEY_MATERIAL_FIELDS = {
  private_key: { type: "string" },
  public_key: { type: "string" },
  generate_signing_key: { type: "bool", default: true },
  key_type: { type: "string", default: "ssh-rsa" },
  key_bits: { type: "int" },
} as const;

/** A validated key pair, ready to store. */
export interface KeyMaterial {
  /** As supplied or generated, in the canonical text form every stored key has (B17). */
  publicKeyText: string;
  privateKeyPem: string;
  keyType: string;
  signingKey: SshSigningKey;
  generated: boolean;
}

/**
 * Why a supplied key was refused: the cause after Vault's prefix. Whatever fails while
 * reading caller-supplied key text is the caller's input (B3), never a 500.
 */
function causeOf(e: unknown): string {
  if (e instanceof WireError && e.code === "CERTIFICATE") return "a certificate is not a CA public key";
  if (e instanceof SshKeyError || e instanceof WireError) return e.message;
  return "the key data could not be read";
}

/** Check a supplied pair (`generate_signing_key` explicitly false, as in Vault's path_config_ca.go), in Vault's order. */
async function importSuppliedPair(
  publicKeyText: string,
  privateKeyPem: string,
): Promise<{ signingKey: SshSigningKey; canonicalText: string }> {
  if (publicKeyText === "") throw badRequest("missing public_key");
  if (privateKeyPem === "") throw badRequest("missing private_key");
  let signingKey: SshSigningKey;
  try {
    signingKey = await importSigningKey(privateKeyPem);
  } catch (e) {
    throw badRequest(`Unable to parse private_key as an SSH private key: ${causeOf(e)}`);
  }
  let parsed: ReturnType<typeof parseCanonicalPublicKey>;
  try {
    parsed = parseCanonicalPublicKey(publicKeyText);
  } catch (e) {
    throw badRequest(`Unable to parse public_key as an SSH public key: ${causeOf(e)}`);
  }
  // S9: Vault stores a mismatched pair and then publishes the wrong CA; we refuse it.
  if (!bytesEqual(parsed.blob, signingKey.publicKeyBlob)) throw badRequest("public_key does not match private_key");
  return { signingKey, canonicalText: parsed.text };
}

/**
 * The key pair the fields ask for: `values`/`provided` as parseFields returns them for
 * KEY_MATERIAL_FIELDS. Supplied keys are checked; a generated pair is made only after
 * `key_type` and `key_bits` have been validated (S9).
 */
export async function keyMaterialFrom(values: Record<string, unknown>, provided: Set<string>): Promise<KeyMaterial> {
  const publicKey = values.public_key as string;
  const privateKey = values.private_key as string;
  const generateSet = provided.has("generate_signing_key");
  const generate = values.generate_signing_key as boolean;
  const anyKey = publicKey !== "" || privateKey !== "";

  // Vault's path_config_ca.go decides in this order.
  let useSupplied: boolean;
  if (generateSet && generate) {
    if (anyKey) throw badRequest("public_key and private_key must not be set when generate_signing_key is set to true");
    useSupplied = false;
  } else if (generateSet || (publicKey !== "" && privateKey !== "")) {
    useSupplied = true;
  } else if (!anyKey) {
    useSupplied = false;
  } else {
    throw badRequest(
      "only one of public_key and private_key set; both must be set to use, or both must be blank to auto-generate",
    );
  }

  if (useSupplied) {
    const { signingKey, canonicalText } = await importSuppliedPair(publicKey, privateKey);
    return {
      publicKeyText: canonicalText,
      privateKeyPem: privateKey,
      keyType: signingKey.keyType,
      signingKey,
      generated: false,
    };
  }

  let spec: ReturnType<typeof caKeySpec>;
  try {
    spec = caKeySpec(values.key_type as string, values.key_bits as number);
  } catch (e) {
    if (e instanceof KeySpecError) throw badRequest(e.message);
    throw e;
  }
  let pair: Awaited<ReturnType<typeof generateSshKeyPair>>;
  try {
    pair = await generateSshKeyPair(spec.kind, spec.bits, { anyRsaSize: true });
  } catch (e) {
    // A size the generator refuses is the caller's mistake (B3, S4), never a 500.
    if (e instanceof SshKeyError && e.code === "INVALID_KEY_SIZE") throw badRequest(e.message);
    throw e;
  }
  return {
    publicKeyText: parseCanonicalPublicKey(pair.publicKeyText).text,
    privateKeyPem: pair.privateKeyPem,
    keyType: sshKeyTypeOf(spec),
    signingKey: pair.signingKey,
    generated: true,
  };
}
