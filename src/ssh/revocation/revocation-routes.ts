/**
 * Revocation (decision S23): `POST revoke` by exactly one of serial_number, key_id or
 * public_key; `GET revocations?list=true`; `GET|DELETE revocation/:id`. Every change bumps
 * the mount's KRL version in the same D1 batch and rebuilds the KRL before answering, so
 * the next `GET krl` serves it. Each change is logged (structured; ids, kinds and
 * fingerprints only).
 */
import type { Db } from "../../db/client";
import { utf8 } from "../../lib/bytes";
import { logInfo } from "../../lib/log";
import { WireError } from "../../lib/sshwire/errors";
import { isCertificateTypeName } from "../../lib/sshwire/key-types";
import { formatPublicKeyText, parseCanonicalPublicKey } from "../../lib/sshwire/public-key";
import { badRequest, notFound } from "../errors";
import { type FieldSchema, parseFields, unknownFieldWarnings } from "../fields";
import { dateTime, envelope, listData, object, str, written } from "../openapi/schemas";
import { keyedList, vaultJson, vaultNoContent } from "../respond";
import type { VaultRequest, VaultRoute } from "../router";
import { certificateValidBefore } from "./certificate-repo";
import { parseSerialText, sha256Fingerprint } from "./inventory-routes";
import { DEFAULT_ISSUER_REF, issuerSetOf, resolveIssuerRef } from "./issuers";
import { caKeyFingerprint, KRL_STALE_HEADER, rebuildKrl } from "./krl";
import {
  deleteExpiredRevocations,
  deleteRevocationRow,
  findRevocationRow,
  insertRevocation,
  listRevocationRows,
  type RevocationRow,
} from "./revocation-repo";

/** S23: the longest key id that can be revoked, in bytes. */
export const MAX_REVOKED_KEY_ID_BYTES = 1024;

const REVOKE_FIELDS: FieldSchema = {
  serial_number: { type: "string" },
  key_id: { type: "string" },
  public_key: { type: "string" },
  issuer_ref: { type: "string" },
  expires_at: { type: "string" },
};

/** RFC 3339 → seconds since the epoch, or a 400. */
function parseExpiresAt(text: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.exec(text);
  const ms = m ? Date.parse(text) : Number.NaN;
  if (!m || Number.isNaN(ms))
    throw badRequest(`expires_at must be an RFC 3339 time, e.g. 2030-01-02T15:04:05Z: ${JSON.stringify(text)}`);
  return Math.floor(ms / 1000);
}

function revocationData(row: RevocationRow) {
  return {
    revocation_id: row.id,
    kind: row.kind,
    issuer_id: row.issuerId ?? "",
    serial_number: row.serial ?? "",
    key_id: row.keyId ?? "",
    public_key: row.publicKey ?? "",
    public_key_fingerprint: row.publicKeyFingerprint ?? "",
    ca_key_fingerprint: row.caKeyFingerprint ?? "",
    expires_at: row.expiresAt === null ? "" : new Date(row.expiresAt * 1000).toISOString(),
    created_at: new Date(row.createdAt).toISOString(),
    requester: { display_name: row.requesterDisplayName, accessor: row.requesterAccessor },
  };
}

/** B14: the schema of `revocationData`. */
const REVOCATION_KIND = { enum: ["serial", "key_id", "public_key"], description: "what the revocation matches" };
/** B17: the CA key a revocation follows; "" when it names none or its issuer was gone first (orphaned). */
const CA_KEY_FINGERPRINT = str(
  "SHA256 fingerprint of the CA key (B17); empty for by-public-key, mount-wide and orphaned revocations",
);
/** An RFC 3339 time, or "" when there is none. */
const OPTIONAL_TIME = { anyOf: [dateTime(), { const: "" }] };
const revocationSchema = object({
  revocation_id: str(),
  kind: REVOCATION_KIND,
  issuer_id: str(),
  serial_number: str(),
  key_id: str(),
  public_key: str(),
  public_key_fingerprint: str(),
  ca_key_fingerprint: CA_KEY_FINGERPRINT,
  expires_at: OPTIONAL_TIME,
  created_at: dateTime(),
  requester: object({ display_name: str(), accessor: str() }),
});

/** The revocation a request describes (before its id, time and requester are added). */
type Revocation = Pick<
  RevocationRow,
  "kind" | "issuerId" | "serial" | "keyId" | "publicKey" | "publicKeyFingerprint" | "expiresAt" | "caKeyFingerprint"
>;

async function describeRevocation(
  req: VaultRequest,
  values: Record<string, unknown>,
  provided: Set<string>,
): Promise<Revocation> {
  const given = ["serial_number", "key_id", "public_key"].filter((k) => provided.has(k) && values[k] !== "");
  if (given.length !== 1) throw badRequest("exactly one of serial_number, key_id or public_key must be given");
  const expiresAt =
    provided.has("expires_at") && values.expires_at !== "" ? parseExpiresAt(values.expires_at as string) : null;
  if (expiresAt !== null && expiresAt * 1000 <= Date.now())
    throw badRequest("expires_at is in the past: the revocation would never be in the KRL");
  const ref = provided.has("issuer_ref") && values.issuer_ref !== "" ? (values.issuer_ref as string) : null;
  const base = {
    issuerId: null,
    serial: null,
    keyId: null,
    publicKey: null,
    publicKeyFingerprint: null,
    caKeyFingerprint: null,
    expiresAt,
  };

  if (given[0] === "serial_number") {
    const serial = parseSerialText(values.serial_number as string);
    if (!serial)
      throw badRequest(
        `invalid serial_number: ${JSON.stringify(values.serial_number)}: expected hex as in the sign answer`,
      );
    if (/^0+$/.test(serial))
      throw badRequest("serial_number 0 cannot be revoked: OpenSSH ignores serial 0; revoke by key_id or public_key");
    const issuer = resolveIssuerRef(await issuerSetOf(req.db, req.mount), ref ?? DEFAULT_ISSUER_REF);
    let defaultExpiry = expiresAt;
    if (defaultExpiry === null) {
      // S23: a recorded certificate's revocation lasts until the certificate expires.
      defaultExpiry = await certificateValidBefore(req.db, issuer.id, serial);
    }
    return {
      ...base,
      kind: "serial",
      issuerId: issuer.id,
      caKeyFingerprint: await caKeyFingerprint(issuer.publicKey),
      serial,
      expiresAt: defaultExpiry,
    };
  }

  if (given[0] === "key_id") {
    const keyId = values.key_id as string;
    if (keyId.includes("\0")) throw badRequest("key_id must not contain NUL");
    if (utf8(keyId).length > MAX_REVOKED_KEY_ID_BYTES)
      throw badRequest(`key_id is longer than ${MAX_REVOKED_KEY_ID_BYTES} bytes`);
    // Without issuer_ref: every issuer of the mount, present and future (never the KRL wildcard).
    if (ref === null) return { ...base, kind: "key_id", keyId };
    const issuer = resolveIssuerRef(await issuerSetOf(req.db, req.mount), ref);
    return {
      ...base,
      kind: "key_id",
      issuerId: issuer.id,
      caKeyFingerprint: await caKeyFingerprint(issuer.publicKey),
      keyId,
    };
  }

  if (ref !== null) throw badRequest("issuer_ref applies to serial_number and key_id only");
  let parsed: ReturnType<typeof parseCanonicalPublicKey>;
  try {
    // B17: the one parser every stored key goes through (surrounding space, CRLF, comments).
    parsed = parseCanonicalPublicKey(values.public_key as string);
  } catch (e) {
    if (e instanceof WireError && e.code === "CERTIFICATE")
      throw badRequest("public_key must be a plain public key, not a certificate");
    if (e instanceof WireError) throw badRequest(`failed to parse public_key as SSH key: ${e.message}`);
    throw e;
  }
  if (isCertificateTypeName(parsed.key.type))
    throw badRequest("public_key must be a plain public key, not a certificate");
  return {
    ...base,
    kind: "public_key",
    publicKey: formatPublicKeyText(parsed.blob),
    publicKeyFingerprint: await sha256Fingerprint(parsed.blob),
  };
}

/**
 * Rebuild after a committed change. B17: a failed rebuild keeps the change (it is stored)
 * and answers a warning naming the reason; the Queue retries the rebuild.
 */
async function rebuildAfterChange(req: VaultRequest): Promise<string[]> {
  const rebuilt = await rebuildKrl(req.env, req.db, req.mount, { requestId: req.requestId });
  if (rebuilt.ok) return [];
  return [
    `the revocation is stored but the KRL could not be rebuilt (${rebuilt.reason}); GET krl serves the last good KRL with ${KRL_STALE_HEADER}: true until a retry succeeds`,
  ];
}

/** `POST revoke` (S23) → 200 `data.revocation_id`. */
async function revoke(req: VaultRequest): Promise<Response> {
  const f = parseFields(req.body, REVOKE_FIELDS);
  const revocation = await describeRevocation(req, f.values, f.provided);
  const now = Date.now();
  const row: RevocationRow = {
    ...revocation,
    id: crypto.randomUUID(),
    mount: req.mount,
    requesterDisplayName: req.token?.displayName ?? "",
    requesterAccessor: req.token?.accessor ?? "",
    createdAt: now,
  };
  await insertRevocation(req.db, row, now);
  logInfo("ssh revocation created", {
    request_id: req.requestId,
    mount: req.mount,
    revocation_id: row.id,
    kind: row.kind,
    issuer_id: row.issuerId,
    serial: row.serial,
    key_id: row.keyId,
    public_key_fingerprint: row.publicKeyFingerprint,
    ca_key_fingerprint: row.caKeyFingerprint,
    expires_at: row.expiresAt,
    accessor: row.requesterAccessor,
  });
  const warnings = [...unknownFieldWarnings(f.unknown), ...(await rebuildAfterChange(req))];
  return vaultJson(req, { data: { revocation_id: row.id }, warnings });
}

async function listRevocations(req: VaultRequest): Promise<Response> {
  const rows = await listRevocationRows(req.db, req.mount);
  if (rows.length === 0) throw notFound();
  const data = keyedList(
    rows,
    (row) => row.id,
    (row) => {
      const d = revocationData(row);
      return {
        kind: d.kind,
        issuer_id: d.issuer_id,
        serial_number: d.serial_number,
        key_id: d.key_id,
        public_key_fingerprint: d.public_key_fingerprint,
        ca_key_fingerprint: d.ca_key_fingerprint,
        expires_at: d.expires_at,
      };
    },
  );
  return vaultJson(req, { data });
}

async function findRevocation(req: VaultRequest): Promise<RevocationRow> {
  const row = await findRevocationRow(req.db, req.mount, req.params.id!);
  if (!row) throw notFound();
  return row;
}

async function readRevocation(req: VaultRequest): Promise<Response> {
  return vaultJson(req, { data: revocationData(await findRevocation(req)) });
}

/** `DELETE revocation/:id`: 204, also when it was already gone (Vault's delete). */
async function deleteRevocation(req: VaultRequest): Promise<Response> {
  const id = req.params.id!;
  const now = Date.now();
  // One batch (one transaction): the row goes and the KRL version grows together.
  const removedKind = await deleteRevocationRow(req.db, req.mount, id, now);
  if (removedKind !== null) {
    logInfo("ssh revocation deleted", {
      request_id: req.requestId,
      mount: req.mount,
      revocation_id: id,
      kind: removedKind,
      accessor: req.token?.accessor ?? "",
    });
    const warnings = await rebuildAfterChange(req);
    if (warnings.length > 0) return vaultNoContent(req, warnings);
  }
  return vaultNoContent(req);
}

/** Remove a mount's revocations past their `expires_at`; the KRL changes when any went. */
export async function tidyRevocations(env: Env, db: Db, mount: string, nowMs = Date.now()): Promise<number> {
  const removed = await deleteExpiredRevocations(db, mount, nowMs);
  if (removed > 0) {
    logInfo("ssh expired revocations tidied", { mount, removed });
    await rebuildKrl(env, db, mount);
  }
  return removed;
}

const UUID_PARAM = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";

export const revocationRoutes: VaultRoute[] = [
  {
    pattern: "revoke",
    mounted: true,
    operations: { update: revoke },
    docs: {
      operations: {
        update: {
          summary: "Revoke by exactly one of serial_number, key_id or public_key",
          body: REVOKE_FIELDS,
          responses: envelope("the revocation's id", object({ revocation_id: str() })),
        },
      },
    },
  },
  {
    pattern: "revocations",
    mounted: true,
    operations: { list: listRevocations },
    docs: {
      operations: {
        list: {
          summary: "List revocations",
          responses: envelope(
            "revocation ids, oldest first",
            listData(
              object({
                kind: REVOCATION_KIND,
                issuer_id: str(),
                serial_number: str(),
                key_id: str(),
                public_key_fingerprint: str(),
                ca_key_fingerprint: CA_KEY_FINGERPRINT,
                expires_at: OPTIONAL_TIME,
              }),
            ),
          ),
        },
      },
    },
  },
  {
    pattern: "revocation/:id",
    mounted: true,
    params: { id: UUID_PARAM },
    operations: { read: readRevocation, delete: deleteRevocation },
    docs: {
      params: { id: "the revocation id" },
      operations: {
        read: { summary: "Read a revocation", responses: envelope("the revocation", revocationSchema) },
        delete: {
          summary: "Delete a revocation (its certificates are accepted again after the next KRL sync)",
          responses: written("deleted"),
        },
      },
    },
  },
];
