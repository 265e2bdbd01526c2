/**
 * Which key pair a `key_type`/`key_bits` pair asks for, decided before anything is generated
 * (decision S9 "validate every parameter before generating"). `config/ca` follows Vault's
 * generator table (Vault's path_config_ca.go, RSA default 4096); `issue` follows decision S10
 * (RSA default 2048, only 2048/3072/4096; EC only 256/384/521). Messages are Vault's where it
 * has one; S4/S10 make them 400s. Pure (no bindings).
 */

/** A parameter error; `message` is the text of the 400. */
export class KeySpecError extends Error {}

/** The generator input: key kind and size in bits (ignored for Ed25519). */
export interface KeySpec {
  kind: "rsa" | "ec" | "ed25519";
  bits: number;
}

/** Largest RSA CA we generate: bigger keys take minutes in WebCrypto (Vault has no cap). */
export const MAX_CA_RSA_BITS = 8192;

const NAMED_CURVES: Record<string, number> = {
  "ecdsa-sha2-nistp256": 256,
  "ecdsa-sha2-nistp384": 384,
  "ecdsa-sha2-nistp521": 521,
};

function ecSpec(keyType: string, bits: number): KeySpec {
  const named = NAMED_CURVES[keyType];
  // An OpenSSH curve name fixes the size; key_bits is ignored (Vault).
  if (named !== undefined) return { kind: "ec", bits: named };
  const size = bits === 0 ? 256 : bits;
  if (size !== 256 && size !== 384 && size !== 521) {
    throw new KeySpecError(`unknown ECDSA key pair algorithm and bits: ${keyType} / ${bits}`);
  }
  return { kind: "ec", bits: size };
}

function weak(keyType: string, bits: number): KeySpecError {
  return new KeySpecError(`refusing to generate weak ${keyType} key: ${bits} bits < 2048 bits`);
}

/**
 * The spec of a key type name (case-sensitive), RSA's size decided by `rsa`: the two
 * generators differ only there.
 */
function keySpec(keyType: string, keyBits: number, rsa: (bits: number) => KeySpec): KeySpec {
  switch (keyType) {
    case "ssh-rsa":
    case "rsa":
      return rsa(keyBits);
    case "ec":
    case "ecdsa-sha2-nistp256":
    case "ecdsa-sha2-nistp384":
    case "ecdsa-sha2-nistp521":
      return ecSpec(keyType, keyBits);
    case "ssh-ed25519":
    case "ed25519":
      return { kind: "ed25519", bits: 0 };
    default:
      throw new KeySpecError(`unknown ssh key pair algorithm: ${keyType}`);
  }
}

/** `POST config/ca` generation (Vault's path_config_ca.go). Key types are case-sensitive. */
export function caKeySpec(keyType: string, keyBits: number): KeySpec {
  return keySpec(keyType, keyBits, (requested) => {
    const bits = requested === 0 ? 4096 : requested;
    if (bits < 2048) throw weak(keyType, bits);
    // workerd's BoringSSL generates RSA keys only in multiples of 128 bits.
    if (bits > MAX_CA_RSA_BITS || bits % 128 !== 0) {
      throw new KeySpecError(
        `refusing to generate ${keyType} key of ${bits} bits: the size must be a multiple of 128 from 2048 to ${MAX_CA_RSA_BITS}`,
      );
    }
    return { kind: "rsa", bits };
  });
}

/** `POST issue/:name` generation (decision S10; Vault's path_issue.go for the accepted names). */
export function issueKeySpec(keyType: string, keyBits: number): KeySpec {
  return keySpec(keyType, keyBits, (requested) => {
    const bits = requested === 0 ? 2048 : requested;
    if (bits < 2048) throw weak(keyType, bits);
    if (bits !== 2048 && bits !== 3072 && bits !== 4096) {
      throw new KeySpecError(`invalid key_bits ${bits} for key_type ${keyType}: must be 2048, 3072 or 4096`);
    }
    return { kind: "rsa", bits };
  });
}

/** SSH key type name of a spec (for key-length checks and the stored CA row). */
export function sshKeyTypeOf(spec: KeySpec): string {
  if (spec.kind === "rsa") return "ssh-rsa";
  if (spec.kind === "ed25519") return "ssh-ed25519";
  return `ecdsa-sha2-nistp${spec.bits}`;
}
