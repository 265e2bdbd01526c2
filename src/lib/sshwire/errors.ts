/**
 * The one error type of the SSH wire-format layer.
 *
 * Every decoder in `src/lib/sshwire` throws only `WireError` for bad input: callers map it
 * to a 400 without guessing, and fuzz tests assert that nothing else escapes. Encoders throw
 * it too when asked to write something the format cannot hold.
 */

/** Machine-readable reason for a {@link WireError}. */
export type WireErrorCode =
  /** Input ended before a field was complete. */
  | "EOF"
  /** Bytes left over after a structure that must end exactly. */
  | "TRAILING_DATA"
  /** RFC 4251 §5: an mpint with a superfluous leading 0x00 or 0xff byte. */
  | "NON_MINIMAL_MPINT"
  /** An mpint that is negative where only non-negative values make sense. */
  | "NEGATIVE_MPINT"
  /** PROTOCOL.certkeys: critical options or extensions not in byte order. */
  | "UNSORTED_OPTIONS"
  /** PROTOCOL.certkeys: the same option or extension name twice. */
  | "DUPLICATE_OPTION"
  /** A key or certificate type name this layer does not know. */
  | "UNKNOWN_KEY_TYPE"
  /** A type name inside a structure that disagrees with the one around it. */
  | "KEY_TYPE_MISMATCH"
  /** Bytes that should be UTF-8 text and are not. */
  | "INVALID_UTF8"
  /** A field whose value is outside what the format allows (lengths, ranges, constants). */
  | "INVALID_VALUE"
  /** An EC point that is malformed or not on its curve. */
  | "INVALID_POINT"
  /** Text (authorized_keys line, base64, PEM) that cannot be read. */
  | "INVALID_ENCODING"
  /** A certificate where a plain public key is required (decision S17). */
  | "CERTIFICATE"
  /** An encrypted private key (this layer reads only unencrypted ones). */
  | "ENCRYPTED"
  /** A structure this layer recognises but deliberately does not handle (e.g. encrypted keys). */
  | "UNSUPPORTED";

/** Thrown for malformed or unsupported SSH wire data. */
export class WireError extends Error {
  /** Machine-readable reason. */
  readonly code: WireErrorCode;

  constructor(code: WireErrorCode, message: string) {
    super(message);
    this.name = "WireError";
    this.code = code;
  }
}
