/**
 * OpenSSH's own private key container, "openssh-key-v1" (OpenSSH PROTOCOL.key), unencrypted.
 *
 *     "openssh-key-v1\0"
 *     string ciphername        ("none")
 *     string kdfname           ("none")
 *     string kdfoptions        (empty)
 *     uint32 number of keys N  (OpenSSH writes and reads exactly 1)
 *     string publickey1..N
 *     string encrypted, padded list of private keys:
 *         uint32 checkint, uint32 checkint (equal)
 *         string keytype, <private key fields>, string comment   (per key)
 *         byte   padding 1, 2, 3, ... up to a multiple of the cipher block size (8 for "none")
 *
 * Private key fields (OpenSSH sshkey_private_serialize): ssh-rsa: mpint n, e, d, iqmp, p, q;
 * ecdsa-sha2-*: string curve, string Q, mpint d; ssh-ed25519: string pk (32), string sk (64 =
 * seed || pk).
 */

import { bytesEqual, randomBytes, utf8 } from "../bytes";
import { WireError } from "./errors";
import { EC_CURVES, type EcCurveName } from "./key-types";
import { decodePublicKey, encodePublicKey, type SshPublicKey } from "./public-key";
import { SshReader } from "./reader";
import { SshWriter } from "./writer";

/** PROTOCOL.key AUTH_MAGIC. */
const AUTH_MAGIC = utf8("openssh-key-v1\0");
/** PROTOCOL.key: block size used for padding when the cipher is "none". */
const NONE_BLOCK_SIZE = 8;

/** RSA private key fields (big-endian magnitudes). */
export interface RsaPrivateFields {
  readonly type: "ssh-rsa";
  readonly n: Uint8Array;
  readonly e: Uint8Array;
  readonly d: Uint8Array;
  /** q⁻¹ mod p. */
  readonly iqmp: Uint8Array;
  readonly p: Uint8Array;
  readonly q: Uint8Array;
}

/** ECDSA private key fields. */
export interface EcdsaPrivateFields {
  readonly type: "ecdsa-sha2-nistp256" | "ecdsa-sha2-nistp384" | "ecdsa-sha2-nistp521";
  readonly curve: EcCurveName;
  /** Uncompressed public point. */
  readonly point: Uint8Array;
  /** Private scalar, big-endian magnitude. */
  readonly d: Uint8Array;
}

/** Ed25519 private key fields. */
export interface Ed25519PrivateFields {
  readonly type: "ssh-ed25519";
  /** 32-byte public key. */
  readonly publicKey: Uint8Array;
  /** 32-byte RFC 8032 private key (seed). */
  readonly seed: Uint8Array;
}

/** A private key as openssh-key-v1 carries it. */
export type OpensshPrivateKeyFields = RsaPrivateFields | EcdsaPrivateFields | Ed25519PrivateFields;

/** A decoded openssh-key-v1 container. */
export interface OpensshPrivateKey {
  readonly key: OpensshPrivateKeyFields;
  /** The public key blob stored beside the private section. */
  readonly publicKeyBlob: Uint8Array;
  /** Key comment (often empty). */
  readonly comment: string;
  /** The check int (random; re-encoding with it reproduces the input byte for byte). */
  readonly checkInt: number;
}

/** The public key of private key fields. */
export function publicKeyOfPrivateFields(key: OpensshPrivateKeyFields): SshPublicKey {
  switch (key.type) {
    case "ssh-rsa":
      return { type: "ssh-rsa", e: key.e, n: key.n };
    case "ecdsa-sha2-nistp256":
    case "ecdsa-sha2-nistp384":
    case "ecdsa-sha2-nistp521":
      return { type: key.type, curve: key.curve, point: key.point };
    case "ssh-ed25519":
      return { type: "ssh-ed25519", key: key.publicKey };
  }
}

function readPrivateFields(r: SshReader, pub: SshPublicKey): OpensshPrivateKeyFields {
  const type = r.readText("private key type");
  if (type !== pub.type) {
    throw new WireError(
      "KEY_TYPE_MISMATCH",
      `${r.context}: private key type ${JSON.stringify(type.slice(0, 64))} does not match public key ${pub.type}`,
    );
  }
  switch (pub.type) {
    case "ssh-rsa": {
      const n = r.readMpint("rsa n");
      const e = r.readMpint("rsa e");
      const d = r.readMpint("rsa d");
      const iqmp = r.readMpint("rsa iqmp");
      const p = r.readMpint("rsa p");
      const q = r.readMpint("rsa q");
      for (const [name, v] of Object.entries({ d, iqmp, p, q })) {
        if (v.length === 0) throw new WireError("INVALID_VALUE", `${r.context}: rsa ${name} must not be zero`);
      }
      return { type: "ssh-rsa", n, e, d, iqmp, p, q };
    }
    case "ecdsa-sha2-nistp256":
    case "ecdsa-sha2-nistp384":
    case "ecdsa-sha2-nistp521": {
      const curve = r.readText("curve name");
      if (curve !== pub.curve)
        throw new WireError(
          "KEY_TYPE_MISMATCH",
          `${r.context}: curve ${JSON.stringify(curve.slice(0, 64))} does not match ${pub.type}`,
        );
      const point = r.readString("public point");
      const d = r.readMpint("private scalar");
      if (d.length === 0 || d.length > EC_CURVES[pub.curve].size) {
        throw new WireError("INVALID_VALUE", `${r.context}: ecdsa private scalar out of range`);
      }
      return { type: pub.type, curve: pub.curve, point, d };
    }
    case "ssh-ed25519": {
      const pk = r.readString("ed25519 public key");
      const sk = r.readString("ed25519 private key");
      if (pk.length !== 32 || sk.length !== 64)
        throw new WireError("INVALID_VALUE", `${r.context}: ed25519 key has the wrong length`);
      // OpenSSH stores sk as seed || pk; the halves must agree.
      if (!bytesEqual(sk.subarray(32), pk))
        throw new WireError("INVALID_VALUE", `${r.context}: ed25519 private key does not contain its public key`);
      return { type: "ssh-ed25519", publicKey: pk, seed: sk.slice(0, 32) };
    }
    default:
      throw new WireError("UNSUPPORTED", `${r.context}: ${pub.type} private keys are not supported`);
  }
}

function writePrivateFields(w: SshWriter, key: OpensshPrivateKeyFields): void {
  w.writeText(key.type);
  switch (key.type) {
    case "ssh-rsa":
      w.writeMpint(key.n).writeMpint(key.e).writeMpint(key.d).writeMpint(key.iqmp).writeMpint(key.p).writeMpint(key.q);
      return;
    case "ecdsa-sha2-nistp256":
    case "ecdsa-sha2-nistp384":
    case "ecdsa-sha2-nistp521":
      w.writeText(key.curve).writeString(key.point).writeMpint(key.d);
      return;
    case "ssh-ed25519": {
      const sk = new Uint8Array(64);
      sk.set(key.seed, 0);
      sk.set(key.publicKey, 32);
      w.writeString(key.publicKey).writeString(sk);
      return;
    }
  }
}

/**
 * Decodes an unencrypted openssh-key-v1 binary (the base64 body of an `OPENSSH PRIVATE KEY`
 * PEM block). Strict: one key, equal check ints, padding 1, 2, 3…, a private section whose
 * type and public part match the public key, nothing left over.
 * @throws WireError `ENCRYPTED` for a passphrase-protected key, other codes for malformed input
 */
export function decodeOpensshPrivateKey(bin: Uint8Array): OpensshPrivateKey {
  const r = new SshReader(bin, "openssh private key");
  const magic = r.readRaw(AUTH_MAGIC.length, "magic");
  if (!bytesEqual(magic, AUTH_MAGIC)) throw new WireError("INVALID_ENCODING", "not an openssh-key-v1 private key");
  const cipher = r.readText("cipher name");
  const kdf = r.readText("kdf name");
  const kdfOptions = r.readString("kdf options");
  if (cipher !== "none" || kdf !== "none") {
    throw new WireError("ENCRYPTED", "this private key is passphrase protected");
  }
  if (kdfOptions.length !== 0)
    throw new WireError("INVALID_VALUE", "openssh private key: kdf options must be empty for kdf none");
  const count = r.readUint32("number of keys");
  if (count !== 1) throw new WireError("UNSUPPORTED", `openssh private key: expected exactly 1 key, found ${count}`);
  const publicKeyBlob = r.readString("public key");
  const pub = decodePublicKey(publicKeyBlob);
  const section = r.subReader("private section");
  r.expectEnd();
  const sectionLength = section.remaining;
  if (sectionLength % NONE_BLOCK_SIZE !== 0) {
    throw new WireError(
      "INVALID_VALUE",
      `openssh private key: private section length ${sectionLength} is not a multiple of ${NONE_BLOCK_SIZE}`,
    );
  }
  const check1 = section.readUint32("check int");
  const check2 = section.readUint32("check int");
  if (check1 !== check2)
    throw new WireError("INVALID_VALUE", "openssh private key: check ints differ (wrong passphrase or corrupt key)");
  const key = readPrivateFields(section, pub);
  const comment = section.readText("comment");
  // PROTOCOL.key: padding bytes are 1, 2, 3, ...
  for (let i = 1; !section.atEnd; i++) {
    if (section.readByte("padding") !== (i & 0xff))
      throw new WireError("INVALID_VALUE", "openssh private key: bad padding");
  }
  section.expectEnd();
  if (!bytesEqual(encodePublicKey(publicKeyOfPrivateFields(key)), publicKeyBlob)) {
    throw new WireError("KEY_TYPE_MISMATCH", "openssh private key: private key does not match its public key");
  }
  return { key, publicKeyBlob, comment, checkInt: check1 };
}

/**
 * Encodes an unencrypted openssh-key-v1 binary for one key (PROTOCOL.key), as
 * `ssh-keygen -N ''` writes it: cipher and kdf "none", random equal check ints, padding
 * 1, 2, 3… to a multiple of 8.
 * @param checkInt fixed check int for reproducible output (tests); random by default
 */
export function encodeOpensshPrivateKey(key: OpensshPrivateKeyFields, comment = "", checkInt?: number): Uint8Array {
  const check = checkInt ?? new DataView(randomBytes(4).buffer).getUint32(0);
  const section = new SshWriter();
  section.writeUint32(check).writeUint32(check);
  writePrivateFields(section, key);
  section.writeText(comment);
  for (let i = 1; section.length % NONE_BLOCK_SIZE !== 0; i++) section.writeByte(i);
  const w = new SshWriter();
  w.writeRaw(AUTH_MAGIC);
  w.writeText("none").writeText("none").writeString(new Uint8Array(0));
  w.writeUint32(1);
  w.writeString(encodePublicKey(publicKeyOfPrivateFields(key)));
  w.writeString(section.finish());
  return w.finish();
}
