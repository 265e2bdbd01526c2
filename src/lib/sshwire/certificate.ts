/**
 * OpenSSH certificates (PROTOCOL.certkeys, "*-cert-v01@openssh.com").
 *
 * Layout, for every key type:
 *
 *     string    certificate type name          (e.g. "ssh-ed25519-cert-v01@openssh.com")
 *     string    nonce
 *     ...       the subject key's public fields (as in its plain blob, after the type name)
 *     uint64    serial
 *     uint32    type                            (1 = user, 2 = host)
 *     string    key id
 *     string    valid principals                (a list of strings, inside one string)
 *     uint64    valid after
 *     uint64    valid before
 *     string    critical options                (list of name/data pairs, inside one string)
 *     string    extensions                      (same)
 *     string    reserved
 *     string    signature key                   (the CA's public key blob)
 *     string    signature                       (over every byte before this field)
 *
 * Encoding follows OpenSSH exactly: options sorted by the bytes of their names with no
 * duplicates, non-empty option data wrapped in a nested string, empty data for flags.
 * Decoding is strict: every nested list is read with a sub-reader that must end exactly.
 */

import { utf8 } from "../bytes";
import { WireError } from "./errors";
import { CERT_TYPE_FOR_KEY, isCertificateTypeName, isSshKeyType, keyTypeForCertType } from "./key-types";
import { readPublicKeyFields, type SshPublicKey, writePublicKeyFields } from "./public-key";
import { decodeUtf8, SshReader } from "./reader";
import { decodeSignature, type SshSignature } from "./signature";
import { SshWriter } from "./writer";

/** PROTOCOL.certkeys "type": user certificate. */
export const SSH_CERT_TYPE_USER = 1;
/** PROTOCOL.certkeys "type": host certificate. */
export const SSH_CERT_TYPE_HOST = 2;

/** One critical option or extension: its name and raw data (already unwrapped from the list). */
export interface CertOption {
  /** Option name, e.g. `force-command` or `permit-pty`. */
  readonly name: string;
  /**
   * Raw option data. PROTOCOL.certkeys: for the options OpenSSH defines this is either empty
   * (a flag) or a nested string holding the value.
   */
  readonly data: Uint8Array;
}

/** Options given either as a name→value map (values wrapped as nested strings) or as raw pairs. */
export type CertOptionsInput = Readonly<Record<string, string>> | readonly CertOption[];

/** Every field of a certificate except the signature. */
export interface CertificateBody {
  /** PROTOCOL.certkeys "nonce": random bytes chosen by the CA (OpenSSH uses 32). */
  readonly nonce: Uint8Array;
  /** The certified (subject) public key. */
  readonly publicKey: SshPublicKey;
  /** uint64 serial. */
  readonly serial: bigint;
  /** 1 = user, 2 = host. */
  readonly certType: number;
  /** Key identifier, logged by sshd. */
  readonly keyId: string;
  /** Principals; empty means any principal (PROTOCOL.certkeys). */
  readonly principals: readonly string[];
  /** uint64 seconds since the epoch. */
  readonly validAfter: bigint;
  /** uint64 seconds since the epoch (0xffffffffffffffff = forever). */
  readonly validBefore: bigint;
  /** Critical options. */
  readonly criticalOptions: CertOptionsInput;
  /** Extensions. */
  readonly extensions: CertOptionsInput;
  /** Reserved field; empty unless re-encoding a decoded certificate. */
  readonly reserved?: Uint8Array;
  /** The CA's public key blob. */
  readonly signatureKey: Uint8Array;
}

/** A decoded certificate. Options are always raw pairs in wire order. */
export interface SshCertificate extends CertificateBody {
  /** Certificate type name, e.g. `ssh-rsa-cert-v01@openssh.com`. */
  readonly typeName: string;
  readonly criticalOptions: readonly CertOption[];
  readonly extensions: readonly CertOption[];
  readonly reserved: Uint8Array;
  /** The CA's public key, decoded. */
  readonly signatureKeyParsed: SshPublicKey;
  /** The decoded signature. */
  readonly signature: SshSignature;
  /** The raw signature field (RFC 4253 §6.6 encoding). */
  readonly signatureBytes: Uint8Array;
  /** The bytes the signature covers: everything before the signature field. */
  readonly signedBytes: Uint8Array;
}

/** Byte-wise comparison of two arrays (memcmp, then length), as OpenSSH orders names. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = a[i]! - b[i]!;
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

/**
 * PROTOCOL.certkeys "Critical options": the data of a non-empty value is itself a string;
 * an empty value (a flag such as `permit-pty`) has empty data.
 */
export function optionDataFromText(value: string): Uint8Array {
  return value === "" ? new Uint8Array(0) : new SshWriter().writeText(value).finish();
}

/**
 * The text value of an option: "" for empty data, the nested string when the data is exactly
 * one UTF-8 string, otherwise null (opaque vendor data).
 */
export function optionText(option: CertOption): string | null {
  if (option.data.length === 0) return "";
  const r = new SshReader(option.data, option.name);
  try {
    const text = r.readText("value");
    r.expectEnd();
    return text;
  } catch (e) {
    if (e instanceof WireError) return null;
    throw e;
  }
}

/** Options as a name→text map (opaque values are skipped). */
export function optionsToRecord(options: readonly CertOption[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const o of options) {
    const v = optionText(o);
    if (v !== null) out[o.name] = v;
  }
  return out;
}

/** Normalises options input to raw pairs sorted by name bytes; refuses duplicates. */
export function normaliseOptions(input: CertOptionsInput, what: string): CertOption[] {
  const list: CertOption[] = Array.isArray(input)
    ? (input as readonly CertOption[]).map((o) => ({ name: o.name, data: o.data }))
    : Object.entries(input as Record<string, string>).map(([name, value]) => {
        if (typeof value !== "string") throw new WireError("INVALID_VALUE", `${what} ${name}: value must be a string`);
        return { name, data: optionDataFromText(value) };
      });
  const keyed = list.map((o) => ({ o, k: utf8(o.name) }));
  // PROTOCOL.certkeys: "Options must be lexically ordered by name" — byte order, not localeCompare.
  keyed.sort((a, b) => compareBytes(a.k, b.k));
  for (let i = 1; i < keyed.length; i++) {
    if (compareBytes(keyed[i - 1]!.k, keyed[i]!.k) === 0) {
      throw new WireError("DUPLICATE_OPTION", `${what}: duplicate name ${JSON.stringify(keyed[i]!.o.name)}`);
    }
  }
  return keyed.map((x) => x.o);
}

function encodeOptions(input: CertOptionsInput, what: string): Uint8Array {
  const w = new SshWriter();
  for (const o of normaliseOptions(input, what)) w.writeText(o.name).writeString(o.data);
  return w.finish();
}

function decodeOptions(r: SshReader, what: string): CertOption[] {
  // PROTOCOL.certkeys: a string holding a sequence of (string name, string data).
  const sub = r.subReader(what);
  const out: CertOption[] = [];
  let prev: Uint8Array | undefined;
  while (!sub.atEnd) {
    const nameBytes = sub.readString("option name");
    const name = decodeUtf8(nameBytes, `${sub.context}: option name`);
    const data = sub.readString(`data of ${JSON.stringify(name)}`);
    if (prev !== undefined) {
      const c = compareBytes(prev, nameBytes);
      if (c === 0) throw new WireError("DUPLICATE_OPTION", `${sub.context}: duplicate name ${JSON.stringify(name)}`);
      if (c > 0) throw new WireError("UNSORTED_OPTIONS", `${sub.context}: ${JSON.stringify(name)} is out of order`);
    }
    prev = nameBytes;
    out.push({ name, data });
  }
  sub.expectEnd();
  return out;
}

/**
 * Encodes the part of a certificate that the CA signs: every field up to and including the
 * signature key (PROTOCOL.certkeys: the signature is "computed over all preceding fields").
 * @throws WireError for duplicate options, out-of-range integers or a bad certificate type
 */
export function encodeCertificateToBeSigned(body: CertificateBody): Uint8Array {
  if (body.certType !== SSH_CERT_TYPE_USER && body.certType !== SSH_CERT_TYPE_HOST) {
    throw new WireError("INVALID_VALUE", `certificate type must be 1 (user) or 2 (host), got ${body.certType}`);
  }
  const w = new SshWriter();
  w.writeText(CERT_TYPE_FOR_KEY[body.publicKey.type]);
  w.writeString(body.nonce);
  writePublicKeyFields(w, body.publicKey);
  w.writeUint64(body.serial);
  w.writeUint32(body.certType);
  w.writeText(body.keyId);
  // PROTOCOL.certkeys "valid principals": a string containing zero or more strings.
  const principals = new SshWriter();
  for (const p of body.principals) principals.writeText(p);
  w.writeString(principals.finish());
  w.writeUint64(body.validAfter);
  w.writeUint64(body.validBefore);
  w.writeString(encodeOptions(body.criticalOptions, "critical options"));
  w.writeString(encodeOptions(body.extensions, "extensions"));
  w.writeString(body.reserved ?? new Uint8Array(0));
  w.writeString(body.signatureKey);
  return w.finish();
}

/** Appends the signature field (RFC 4253 §6.6 signature bytes) to a to-be-signed body. */
export function appendCertificateSignature(toBeSigned: Uint8Array, signature: Uint8Array): Uint8Array {
  return new SshWriter().writeRaw(toBeSigned).writeString(signature).finish();
}

/** Re-encodes a decoded certificate (byte-identical to the input it was decoded from). */
export function encodeCertificate(cert: SshCertificate): Uint8Array {
  return appendCertificateSignature(encodeCertificateToBeSigned(cert), cert.signatureBytes);
}

function readPlainKeyBlob(blob: Uint8Array, what: string): SshPublicKey {
  const r = new SshReader(blob, what);
  const name = r.readText("key type");
  if (!isSshKeyType(name)) {
    throw new WireError(
      isCertificateTypeName(name) ? "INVALID_VALUE" : "UNKNOWN_KEY_TYPE",
      `${what}: unsupported key type ${JSON.stringify(name.slice(0, 64))}`,
    );
  }
  const key = readPublicKeyFields(r, name);
  r.expectEnd();
  return key;
}

/** True when `algorithm` is a signature algorithm a key of type `keyType` can make. */
export function signatureAlgorithmMatchesKey(keyType: string, algorithm: string): boolean {
  if (keyType === "ssh-rsa")
    return algorithm === "ssh-rsa" || algorithm === "rsa-sha2-256" || algorithm === "rsa-sha2-512";
  return algorithm === keyType;
}

/**
 * Decodes a certificate blob strictly: every read bounds-checked, minimal mpints, valid EC
 * points, sorted and unique options, nested lists that end exactly, a known certificate type
 * (1 or 2), a signature whose algorithm fits the CA key, nothing after the signature.
 * Does not check the signature itself (see `verifyCertificate` in `src/lib/crypto`).
 * @throws WireError
 */
export function decodeCertificate(blob: Uint8Array): SshCertificate {
  const r = new SshReader(blob, "certificate");
  const typeName = r.readText("certificate type");
  const keyType = keyTypeForCertType(typeName);
  if (!keyType)
    throw new WireError("UNKNOWN_KEY_TYPE", `unknown certificate type ${JSON.stringify(typeName.slice(0, 64))}`);
  const nonce = r.readString("nonce");
  const publicKey = readPublicKeyFields(r, keyType);
  const serial = r.readUint64("serial");
  const certType = r.readUint32("type");
  if (certType !== SSH_CERT_TYPE_USER && certType !== SSH_CERT_TYPE_HOST) {
    throw new WireError("INVALID_VALUE", `certificate: unknown certificate type ${certType}`);
  }
  const keyId = r.readText("key id");
  const principalsReader = r.subReader("valid principals");
  const principals: string[] = [];
  while (!principalsReader.atEnd) principals.push(principalsReader.readText("principal"));
  principalsReader.expectEnd();
  const validAfter = r.readUint64("valid after");
  const validBefore = r.readUint64("valid before");
  const criticalOptions = decodeOptions(r, "critical options");
  const extensions = decodeOptions(r, "extensions");
  const reserved = r.readString("reserved");
  const signatureKey = r.readString("signature key");
  const signatureKeyParsed = readPlainKeyBlob(signatureKey, "signature key");
  const signedLength = r.offset;
  const signatureBytes = r.readString("signature");
  r.expectEnd();
  const signature = decodeSignature(signatureBytes);
  if (!signatureAlgorithmMatchesKey(signatureKeyParsed.type, signature.algorithm)) {
    throw new WireError(
      "KEY_TYPE_MISMATCH",
      `certificate: signature algorithm ${JSON.stringify(signature.algorithm.slice(0, 64))} does not fit a ${signatureKeyParsed.type} CA key`,
    );
  }
  return {
    typeName,
    nonce,
    publicKey,
    serial,
    certType,
    keyId,
    principals,
    validAfter,
    validBefore,
    criticalOptions,
    extensions,
    reserved,
    signatureKey,
    signatureKeyParsed,
    signature,
    signatureBytes,
    signedBytes: blob.slice(0, signedLength),
  };
}
