/**
 * The opt-in certificate inventory (decision S22): roles with `store_certificates` record
 * every certificate they sign or issue (never a private key); `certs` lists them with
 * OpenBao's pagination and filters, `cert/:serial` reads one, and `tidy/certs` (plus the
 * scheduled tidy) removes expired entries.
 */
import type { Db } from "../../db/client";
import { toBase64, trimTrailing } from "../../lib/bytes";
import { logInfo } from "../../lib/log";
import { badRequest, notFound } from "../errors";
import { type FieldSchema, parseFields, unknownFieldWarnings } from "../fields";
import { dateTime, envelope, int, listData, object, str, strings } from "../openapi/schemas";
import { keyedList, vaultJson } from "../respond";
import type { VaultRequest, VaultRoute } from "../router";
import {
  type CertificateRow,
  certificateRowsBySerial,
  deleteExpiredCertificates,
  insertCertificate,
  listCertificateRows,
} from "./certificate-repo";
import { issuerSetOf, resolveIssuerRef } from "./issuers";

/** One recorded certificate, as the sign path knows it. */
export interface CertificateRecord {
  mount: string;
  issuerId: string;
  serial: bigint;
  role: string;
  certType: 1 | 2;
  keyId: string;
  principals: string[];
  validAfter: bigint;
  validBefore: bigint;
  subjectKeyBlob: Uint8Array;
}

/** uint64 → the 16-digit lower-case hex text S22 stores. */
export function serialText(serial: bigint): string {
  return serial.toString(16).padStart(16, "0");
}

/**
 * A serial as a client writes it (hex as in the sign answer, up to 16 digits, optionally
 * with `:` or `-` between byte pairs) → 16-digit lower-case hex, or null when malformed.
 */
export function parseSerialText(text: string): string | null {
  const hex = /^[0-9a-fA-F]{2}([:-][0-9a-fA-F]{2})+$/.test(text) ? text.replace(/[:-]/g, "") : text;
  if (!/^[0-9a-fA-F]{1,16}$/.test(hex)) return null;
  return hex.toLowerCase().padStart(16, "0");
}

/** `SHA256:<base64 without padding>`, as `ssh-keygen -l` prints it. */
export async function sha256Fingerprint(blob: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", blob.slice().buffer));
  return `SHA256:${trimTrailing(toBase64(digest), "=")}`;
}

/** Seconds since the epoch as a D1 integer (a `forever` valid-before is clamped). */
function seconds(value: bigint): number {
  return value > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(value);
}

/**
 * Record a certificate. False when the issuer already has a certificate with this serial
 * (S22: the caller signs again with a new serial); the row is committed when this returns.
 */
export async function recordCertificate(req: VaultRequest, cert: CertificateRecord): Promise<boolean> {
  const token = req.token;
  return insertCertificate(req.db, {
    mount: cert.mount,
    issuerId: cert.issuerId,
    serial: serialText(cert.serial),
    role: cert.role,
    certType: cert.certType === 2 ? "host" : "user",
    keyId: cert.keyId,
    principals: JSON.stringify(cert.principals),
    validAfter: seconds(cert.validAfter),
    validBefore: seconds(cert.validBefore),
    publicKeyFingerprint: await sha256Fingerprint(cert.subjectKeyBlob),
    requesterDisplayName: token?.displayName ?? "",
    requesterAccessor: token?.accessor ?? "",
    requesterEntityId: token?.entityId ?? null,
    clientAddress: req.headers.get("CF-Connecting-IP"),
    createdAt: Date.now(),
  });
}

function certData(row: CertificateRow) {
  return {
    serial_number: row.serial,
    issuer_id: row.issuerId,
    role: row.role,
    cert_type: row.certType,
    key_id: row.keyId,
    valid_principals: JSON.parse(row.principals) as string[],
    valid_after: new Date(row.validAfter * 1000).toISOString(),
    valid_before: new Date(row.validBefore * 1000).toISOString(),
    public_key_fingerprint: row.publicKeyFingerprint,
    requester: {
      display_name: row.requesterDisplayName,
      accessor: row.requesterAccessor,
      entity_id: row.requesterEntityId ?? "",
      client_address: row.clientAddress ?? "",
    },
    created_at: new Date(row.createdAt).toISOString(),
  };
}

/** OpenBao's list pagination limit when none is given, and the most one page holds. */
const MAX_LIST_LIMIT = 1000;

function listLimit(query: URLSearchParams): number {
  const text = query.get("limit");
  if (text === null || text === "") return MAX_LIST_LIMIT;
  if (!/^-?\d+$/.test(text)) throw badRequest(`error parsing limit: strconv.Atoi: parsing "${text}": invalid syntax`);
  const n = Number(text);
  return n <= 0 ? MAX_LIST_LIMIT : Math.min(n, MAX_LIST_LIMIT);
}

/** `GET certs?list=true` (S22): serials in order, `after`/`limit`, filters role, key_id, principal. */
async function listCertificates(req: VaultRequest): Promise<Response> {
  const after = req.query.get("after");
  const limit = listLimit(req.query);
  const rows = await listCertificateRows(req.db, {
    mount: req.mount,
    after: after ? (parseSerialText(after) ?? after) : null,
    role: req.query.get("role"),
    keyId: req.query.get("key_id"),
    principal: req.query.get("principal"),
    limit,
  });
  if (rows.length === 0) throw notFound();
  const data = keyedList(
    rows,
    (row) => row.serial,
    (row) => ({
      issuer_id: row.issuerId,
      role: row.role,
      key_id: row.keyId,
      valid_before: new Date(row.validBefore * 1000).toISOString(),
    }),
  );
  return vaultJson(req, { data });
}

/** `GET cert/:serial` (S22); `issuer_ref` picks one when serials collide across issuers. */
async function readCertificate(req: VaultRequest): Promise<Response> {
  const serial = parseSerialText(req.params.serial!);
  if (!serial) throw badRequest(`invalid serial number: ${req.params.serial}`);
  const ref = req.query.get("issuer_ref");
  const issuerId = ref !== null ? resolveIssuerRef(await issuerSetOf(req.db, req.mount), ref).id : null;
  const rows = await certificateRowsBySerial(req.db, req.mount, serial, issuerId);
  if (rows.length === 0) throw notFound();
  if (rows.length > 1) throw badRequest(`serial number ${serial} was issued by more than one issuer; give issuer_ref`);
  return vaultJson(req, { data: certData(rows[0]!) });
}

/** S22/S23: tidy's default safety buffer, and the least it may be. */
const DEFAULT_SAFETY_BUFFER = 72 * 3600;

const TIDY_FIELDS: FieldSchema = { safety_buffer: { type: "duration", default: DEFAULT_SAFETY_BUFFER } };

/** Remove a mount's certificates that expired more than `bufferSeconds` ago. */
export async function tidyCertificates(
  db: Db,
  mount: string,
  bufferSeconds: number,
  nowMs = Date.now(),
): Promise<number> {
  const cutoff = Math.floor(nowMs / 1000) - bufferSeconds;
  const { total, removed } = await deleteExpiredCertificates(db, mount, cutoff);
  logInfo("ssh certificate inventory tidied", { mount, removed, of: total, safety_buffer: bufferSeconds });
  return removed;
}

/** `POST tidy/certs {"safety_buffer": "72h"}` (S22). */
async function tidyCertsRoute(req: VaultRequest): Promise<Response> {
  const f = parseFields(req.body, TIDY_FIELDS);
  const buffer = f.values.safety_buffer as number;
  if (buffer < 1) throw badRequest("safety_buffer must be at least 1s");
  const removed = await tidyCertificates(req.db, req.mount, buffer);
  return vaultJson(req, {
    data: { message: `Removed ${removed} expired certificates.`, certificates_removed: removed, safety_buffer: buffer },
    warnings: unknownFieldWarnings(f.unknown),
  });
}

/** A serial in a path: hex, optionally with `:` or `-` between byte pairs. */
export const SERIAL_PARAM = "[0-9a-fA-F]{1,16}|[0-9a-fA-F]{2}(?:[:-][0-9a-fA-F]{2}){1,7}";

/** B14: the schema of `certData`. */
const certSchema = object({
  serial_number: str("16 lower-case hex digits"),
  issuer_id: str(),
  role: str(),
  cert_type: { enum: ["user", "host"] },
  key_id: str(),
  valid_principals: strings(),
  valid_after: dateTime(),
  valid_before: dateTime(),
  public_key_fingerprint: str("SHA256:… as ssh-keygen -l prints it"),
  requester: object({ display_name: str(), accessor: str(), entity_id: str(), client_address: str() }),
  created_at: dateTime(),
});

export const inventoryRoutes: VaultRoute[] = [
  {
    pattern: "certs",
    mounted: true,
    operations: { list: listCertificates },
    docs: {
      operations: {
        list: {
          summary: "List recorded certificates (roles with store_certificates)",
          query: {
            after: { description: "list only serials after this one" },
            limit: { description: "at most this many (default and most: 1000)" },
            role: { description: "only certificates of this role" },
            key_id: { description: "only certificates with this key id" },
            principal: { description: "only certificates valid for this principal" },
          },
          responses: envelope(
            "serials in order",
            listData(object({ issuer_id: str(), role: str(), key_id: str(), valid_before: dateTime() })),
          ),
        },
      },
    },
  },
  {
    pattern: "cert/:serial",
    mounted: true,
    params: { serial: SERIAL_PARAM },
    operations: { read: readCertificate },
    docs: {
      params: { serial: "the serial: hex, optionally with `:` or `-` between byte pairs" },
      operations: {
        read: {
          summary: "Read a recorded certificate",
          query: { issuer_ref: { description: "the issuer, when serials collide across issuers" } },
          responses: envelope("the certificate's record", certSchema),
        },
      },
    },
  },
  {
    pattern: "tidy/certs",
    mounted: true,
    operations: { update: tidyCertsRoute },
    docs: {
      operations: {
        update: {
          summary: "Remove recorded certificates expired longer ago than the safety buffer",
          body: TIDY_FIELDS,
          responses: envelope(
            "how many were removed",
            object({ message: str(), certificates_removed: int(), safety_buffer: int("seconds") }),
          ),
        },
      },
    },
  },
];
