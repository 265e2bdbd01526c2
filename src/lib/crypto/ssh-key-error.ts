/**
 * The typed error of the SSH key adapters (private key reading, key generation, signing).
 * Every failure caused by the caller's input is an `SshKeyError`; the CA service maps them
 * to 400 responses (decisions B3, S4) using `code` and `message`.
 */

/** Machine-readable reason for an {@link SshKeyError}. */
export type SshKeyErrorCode =
  /** The private key text could not be read (bad PEM, DER or openssh-key-v1 data). */
  | "INVALID_KEY"
  /** A passphrase-protected key (openssh-key-v1 with a cipher, `ENCRYPTED PRIVATE KEY`, `Proc-Type: 4,ENCRYPTED`). */
  | "ENCRYPTED_KEY"
  /** A key type we cannot sign with (DSA, security keys, unknown algorithms or curves). */
  | "UNSUPPORTED_KEY_TYPE"
  /** Key generation asked for a size we do not generate (decision S10). */
  | "INVALID_KEY_SIZE"
  /** A signature algorithm that does not fit the key (e.g. `rsa-sha2-256` with an Ed25519 CA, decision S4). */
  | "ALGORITHM_MISMATCH"
  /** The private key is inconsistent with its own public half. */
  | "KEY_MISMATCH";

/** Error thrown by `src/lib/crypto` SSH key functions for bad input. */
export class SshKeyError extends Error {
  /** Machine-readable reason. */
  readonly code: SshKeyErrorCode;

  constructor(code: SshKeyErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "SshKeyError";
    this.code = code;
  }
}
