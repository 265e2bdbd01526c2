/**
 * SSH public keys: wire-format blobs and authorized_keys text.
 *
 * Blob layouts: RFC 4253 §6.6 (ssh-rsa: string type, mpint e, mpint n; ssh-dss: mpint p, q, g,
 * y), RFC 5656 §3.1 (ecdsa-sha2-*: string curve, string Q), RFC 8709 §4 (ssh-ed25519: string
 * key), OpenSSH PROTOCOL.u2f (sk-ecdsa-sha2-nistp256@openssh.com: string curve, string Q, string
 * application; sk-ssh-ed25519@openssh.com: string key, string application).
 */

import { fromBase64, toBase64, trimTrailing } from "../bytes";
import { assertValidEcPoint } from "./ec-point";
import { WireError } from "./errors";
import {
  curveByName,
  EC_CURVES,
  type EcCurveName,
  isCertificateTypeName,
  isSshKeyType,
  type SshKeyType,
} from "./key-types";
import { SshReader } from "./reader";
import { bitLength, SshWriter } from "./writer";

/** RSA public key (RFC 4253 §6.6). Integers are big-endian magnitudes without sign bytes. */
export interface RsaPublicKey {
  readonly type: "ssh-rsa";
  readonly e: Uint8Array;
  readonly n: Uint8Array;
}

/** DSA public key (RFC 4253 §6.6); parsed only so callers can refuse it (decision S17). */
export interface DsaPublicKey {
  readonly type: "ssh-dss";
  readonly p: Uint8Array;
  readonly q: Uint8Array;
  readonly g: Uint8Array;
  readonly y: Uint8Array;
}

/** ECDSA public key (RFC 5656 §3.1); `point` is the uncompressed SEC1 point. */
export interface EcdsaPublicKey {
  readonly type: "ecdsa-sha2-nistp256" | "ecdsa-sha2-nistp384" | "ecdsa-sha2-nistp521";
  readonly curve: EcCurveName;
  readonly point: Uint8Array;
}

/** Ed25519 public key (RFC 8709 §4): 32 bytes. */
export interface Ed25519PublicKey {
  readonly type: "ssh-ed25519";
  readonly key: Uint8Array;
}

/** FIDO ECDSA public key (PROTOCOL.u2f). */
export interface SkEcdsaPublicKey {
  readonly type: "sk-ecdsa-sha2-nistp256@openssh.com";
  readonly curve: "nistp256";
  readonly point: Uint8Array;
  readonly application: string;
}

/** FIDO Ed25519 public key (PROTOCOL.u2f). */
export interface SkEd25519PublicKey {
  readonly type: "sk-ssh-ed25519@openssh.com";
  readonly key: Uint8Array;
  readonly application: string;
}

/** Any plain SSH public key this layer understands. */
export type SshPublicKey =
  | RsaPublicKey
  | DsaPublicKey
  | EcdsaPublicKey
  | Ed25519PublicKey
  | SkEcdsaPublicKey
  | SkEd25519PublicKey;

function readPositiveMpint(r: SshReader, what: string): Uint8Array {
  const v = r.readMpint(what);
  if (v.length === 0) throw new WireError("INVALID_VALUE", `${r.context}: ${what} must not be zero`);
  return v;
}

function readEcdsaFields(
  r: SshReader,
  type: SshKeyType,
  expected: EcCurveName,
): { curve: EcCurveName; point: Uint8Array } {
  const curveName = r.readText("curve name");
  if (curveName !== expected) {
    throw new WireError(
      "KEY_TYPE_MISMATCH",
      `${r.context}: curve ${JSON.stringify(curveName)} does not match key type ${type}`,
    );
  }
  const point = r.readString("public point");
  assertValidEcPoint(EC_CURVES[expected], point);
  return { curve: expected, point };
}

function readEd25519Key(r: SshReader): Uint8Array {
  const key = r.readString("ed25519 public key");
  // RFC 8709 §4: the public key is 32 octets.
  if (key.length !== 32)
    throw new WireError("INVALID_VALUE", `${r.context}: ed25519 public key must be 32 bytes, got ${key.length}`);
  return key;
}

/**
 * Reads the fields that follow the type name of a public key blob. Certificates use the same
 * fields after their nonce (PROTOCOL.certkeys), so the certificate decoder shares this.
 * @throws WireError
 */
export function readPublicKeyFields(r: SshReader, type: SshKeyType): SshPublicKey {
  switch (type) {
    case "ssh-rsa": {
      // RFC 4253 §6.6: mpint e, mpint n.
      const e = readPositiveMpint(r, "rsa e");
      const n = readPositiveMpint(r, "rsa n");
      if ((e[e.length - 1]! & 1) === 0 || (e.length === 1 && e[0]! < 3)) {
        throw new WireError("INVALID_VALUE", `${r.context}: rsa public exponent must be odd and at least 3`);
      }
      if ((n[n.length - 1]! & 1) === 0) throw new WireError("INVALID_VALUE", `${r.context}: rsa modulus must be odd`);
      return { type, e, n };
    }
    case "ssh-dss": {
      // RFC 4253 §6.6: mpint p, q, g, y.
      const p = readPositiveMpint(r, "dsa p");
      const q = readPositiveMpint(r, "dsa q");
      const g = readPositiveMpint(r, "dsa g");
      const y = readPositiveMpint(r, "dsa y");
      return { type, p, q, g, y };
    }
    case "ecdsa-sha2-nistp256":
    case "ecdsa-sha2-nistp384":
    case "ecdsa-sha2-nistp521": {
      // RFC 5656 §3.1: string identifier, string Q.
      const expected = type.slice("ecdsa-sha2-".length) as EcCurveName;
      return { type, ...readEcdsaFields(r, type, expected) };
    }
    case "ssh-ed25519":
      // RFC 8709 §4: string key.
      return { type, key: readEd25519Key(r) };
    case "sk-ecdsa-sha2-nistp256@openssh.com": {
      // PROTOCOL.u2f: string curve, string ec_point, string application.
      const { point } = readEcdsaFields(r, type, "nistp256");
      const application = r.readText("application");
      return { type, curve: "nistp256", point, application };
    }
    case "sk-ssh-ed25519@openssh.com": {
      // PROTOCOL.u2f: string public key, string application.
      const key = readEd25519Key(r);
      const application = r.readText("application");
      return { type, key, application };
    }
  }
}

/** Writes the fields that follow the type name (inverse of {@link readPublicKeyFields}). */
export function writePublicKeyFields(w: SshWriter, key: SshPublicKey): void {
  switch (key.type) {
    case "ssh-rsa":
      w.writeMpint(key.e).writeMpint(key.n);
      return;
    case "ssh-dss":
      w.writeMpint(key.p).writeMpint(key.q).writeMpint(key.g).writeMpint(key.y);
      return;
    case "ecdsa-sha2-nistp256":
    case "ecdsa-sha2-nistp384":
    case "ecdsa-sha2-nistp521":
      w.writeText(key.curve).writeString(key.point);
      return;
    case "ssh-ed25519":
      w.writeString(key.key);
      return;
    case "sk-ecdsa-sha2-nistp256@openssh.com":
      w.writeText(key.curve).writeString(key.point).writeText(key.application);
      return;
    case "sk-ssh-ed25519@openssh.com":
      w.writeString(key.key).writeText(key.application);
      return;
  }
}

/**
 * Reads a key type name and checks it names a plain key.
 * @throws WireError `CERTIFICATE` for a certificate type, `UNKNOWN_KEY_TYPE` otherwise
 */
export function readKeyTypeName(r: SshReader): SshKeyType {
  const name = r.readText("key type");
  if (isSshKeyType(name)) return name;
  if (isCertificateTypeName(name)) throw new WireError("CERTIFICATE", "certificates cannot be signed");
  throw new WireError("UNKNOWN_KEY_TYPE", `unknown key type ${JSON.stringify(name.slice(0, 64))}`);
}

/**
 * Decodes a public key blob (the base64-decoded middle field of an authorized_keys line).
 * Strict: minimal mpints, valid EC points, no trailing bytes.
 * @throws WireError `CERTIFICATE` for a certificate blob (decision S17), other codes for malformed input
 */
export function decodePublicKey(blob: Uint8Array): SshPublicKey {
  const r = new SshReader(blob, "public key");
  const type = readKeyTypeName(r);
  const key = readPublicKeyFields(r, type);
  r.expectEnd();
  return key;
}

/** Encodes a public key as its wire-format blob. */
export function encodePublicKey(key: SshPublicKey): Uint8Array {
  const w = new SshWriter();
  w.writeText(key.type);
  writePublicKeyFields(w, key);
  return w.finish();
}

/**
 * Key size in bits, as `allowed_user_key_lengths` compares it: RSA modulus and DSA p length,
 * the curve size for ECDSA (256/384/521), 256 for Ed25519.
 */
export function publicKeyBits(key: SshPublicKey): number {
  switch (key.type) {
    case "ssh-rsa":
      return bitLength(key.n);
    case "ssh-dss":
      return bitLength(key.p);
    case "ecdsa-sha2-nistp256":
    case "ecdsa-sha2-nistp384":
    case "ecdsa-sha2-nistp521":
    case "sk-ecdsa-sha2-nistp256@openssh.com": {
      const curve = curveByName(key.curve);
      return curve ? curve.bits : 0;
    }
    case "ssh-ed25519":
    case "sk-ssh-ed25519@openssh.com":
      return 256;
  }
}

/** A public key read from text, with the exact blob it came from. */
export interface ParsedPublicKeyText {
  /** The decoded key. */
  readonly key: SshPublicKey;
  /** The wire-format blob (what SHA-256 key IDs hash, decision S7). */
  readonly blob: Uint8Array;
  /** The leading type token when the text had one (not checked against the blob, as in Vault). */
  readonly label?: string;
  /** Whatever followed the base64 field, if anything. */
  readonly comment?: string;
}

/**
 * Reads a public key the way Vault's sign endpoint does (Vault's path_issue_sign.go): split on
 * single spaces; with more than one part the second is the base64 blob, otherwise the whole
 * text; CR and LF inside the base64 are ignored. So `type base64 [comment]` authorized_keys
 * lines and bare base64 blobs both work, and the type label is not trusted: the blob decides.
 * @throws WireError `INVALID_ENCODING` for bad base64, `CERTIFICATE` for a certificate, others for a bad blob
 */
export function parsePublicKeyText(text: string): ParsedPublicKeyText {
  const parts = text.split(" ");
  const b64 = (parts.length > 1 ? parts[1]! : parts[0]!).replace(/[\r\n]/g, "");
  if (b64.length === 0) throw new WireError("INVALID_ENCODING", "no base64 key data");
  let blob: Uint8Array;
  try {
    blob = fromBase64(b64);
  } catch {
    throw new WireError("INVALID_ENCODING", "key data is not valid base64");
  }
  const key = decodePublicKey(blob);
  const label = parts.length > 1 ? parts[0] : undefined;
  const rest = parts.length > 2 ? trimTrailing(parts.slice(2).join(" "), "\r\n") : "";
  return { key, blob, ...(label !== undefined ? { label } : {}), ...(rest ? { comment: rest } : {}) };
}

/**
 * Formats an authorized_keys line `type base64[ comment]` without a trailing newline.
 * `typeName` defaults to the type read from the blob.
 */
export function formatPublicKeyText(blob: Uint8Array, comment?: string, typeName?: string): string {
  const name = typeName ?? new SshReader(blob, "public key").readText("key type");
  return `${name} ${toBase64(blob)}${comment ? ` ${comment}` : ""}`;
}

/** A public key in the one text form Keyway stores (decision B17). */
export interface CanonicalPublicKey {
  /** `<type> <base64>[ <comment>]`: the type read from the blob, single spaces, nothing around. */
  readonly text: string;
  /** The wire-format blob. */
  readonly blob: Uint8Array;
  /** The decoded key. */
  readonly key: SshPublicKey;
}

/**
 * The one parser every stored public key goes through (decision B17), on the way in and
 * on the way out (rows written before it existed). Surrounding whitespace (CR and LF
 * included) is ignored; fields are separated by runs of spaces or tabs; a comment keeps its
 * words, joined by single spaces, with control characters dropped. The type written is the
 * blob's own (sshd's authorized_keys format, sshd(8) "AUTHORIZED_KEYS FILE FORMAT"), so two
 * texts of one key differ at most in their comment. A bare base64 blob is accepted too.
 * @throws WireError as {@link parsePublicKeyText}
 */
export function parseCanonicalPublicKey(text: string): CanonicalPublicKey {
  const fields = text
    .trim()
    .split(/[ \t]/)
    .filter((field) => field !== "");
  if (fields.length === 0) throw new WireError("INVALID_ENCODING", "no base64 key data");
  const bare = fields.length === 1;
  const { key, blob } = parsePublicKeyText(bare ? fields[0]! : `${fields[0]} ${fields[1]}`);
  const comment = bare
    ? ""
    : fields
        .slice(2)
        .join(" ")
        .replace(/[\u0000-\u001f\u007f]/g, " ")
        .split(" ")
        .filter((word) => word !== "")
        .join(" ");
  return { text: formatPublicKeyText(blob, comment || undefined, key.type), blob, key };
}
