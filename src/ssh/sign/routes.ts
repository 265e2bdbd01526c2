/**
 * `POST sign/:name` and `POST issue/:name` (Vault's builtin/logical/ssh path_sign.go,
 * path_issue.go and path_issue_sign.go; decisions S4, S6–S11, S17, S18, S20, S21). Both read
 * the role, the mount's issuers and its TTLs in one D1 batch (cached per isolate), sign with
 * the issuer the role's `issuer_ref` names, reuse the per-isolate signing key, and store
 * nothing.
 */
import type { Db } from "../../db/client";
import { randomBytes } from "../../lib/bytes";
import {
  generateSshKeyPair,
  parseSubjectPublicKey,
  publicKeyHash,
  SshKeyError,
  type SshSigningKey,
  SubjectKeyError,
  signCertificate,
  WireError,
} from "../../lib/crypto/ssh-keys-and-certificates";
import type { RsaSignatureAlgorithm } from "../../lib/sshwire/key-types";
import { mountContextCache } from "../context-cache";
import { badRequest } from "../errors";
import { type FieldSchema, parseFields, unknownFieldWarnings } from "../fields";
import { loadEntity } from "../identity/entity-repo";
import { templateGroupsOf } from "../identity/group-repo";
import { containsTemplate, type TemplateEntity, usesGroupTemplates } from "../identity/templates";
import { issueKeySpec, type KeySpec, KeySpecError, sshKeyTypeOf } from "../issuers/key-specs";
import { signingKeyFor } from "../issuers/keys";
import { issuerConfigQuery, issuersOfMountQuery, type MountIssuers, mountIssuersFromRows } from "../issuers/repo";
import { signingIssuer } from "../issuers/service";
import { mountTtlsFromRows, mountTuneQuery } from "../mount-ttls";
import { envelope, object, str } from "../openapi/schemas";
import { vaultJson } from "../respond";
import { type CertificateRecord, recordCertificate } from "../revocation/inventory-routes";
import { checkIssueKey, checkSubjectKey, KeyLengthError } from "../roles/key-lengths";
import type { Role } from "../roles/model";
import { roleFromRows, roleQuery } from "../roles/repo";
import type { VaultRequest, VaultRoute } from "../router";
import {
  certTypeFor,
  criticalOptionsFor,
  extensionsFor,
  keyIdFor,
  PolicyError,
  principalsFor,
  SKIPPED_EXTENSIONS_WARNING,
  type SystemTtls,
  ttlFor,
  validityFor,
} from "./certificate-rules";
import { poolFor } from "./key-pool";

/** The certificate fields of `sign`, shared with `issue`. */
const CERT_FIELDS: FieldSchema = {
  valid_principals: { type: "string" },
  cert_type: { type: "string", default: "user" },
  key_id: { type: "string" },
  ttl: { type: "duration" },
  critical_options: { type: "map" },
  extensions: { type: "map" },
};

const SIGN_FIELDS: FieldSchema = { ...CERT_FIELDS, public_key: { type: "string" } };
const ISSUE_FIELDS: FieldSchema = {
  ...CERT_FIELDS,
  key_type: { type: "string", default: "rsa" },
  key_bits: { type: "int" },
};

/** B14: `data` of a sign answer. */
const SIGNED_SCHEMA = object({
  serial_number: str("16 lower-case hex digits"),
  signed_key: str("the OpenSSH certificate"),
  issuer_id: str(),
});

/** S11: the warning that comes with an `ssh-rsa` (SHA-1) signature. */
export const SSH_RSA_WARNING =
  "algorithm_signer ssh-rsa signs with SHA-1, which OpenSSH 8.8 and later reject by default; use rsa-sha2-256 or rsa-sha2-512";

interface SignContext {
  role: Role | null;
  issuers: MountIssuers;
  ttls: SystemTtls;
}

const signContexts = mountContextCache<SignContext>();

/** Role, issuers and mount TTLs: from the per-isolate cache, else in one D1 round trip. */
function loadContext(db: Db, mount: string, name: string): Promise<SignContext> {
  return signContexts.get(mount, name, () => readContext(db, mount, name));
}

async function readContext(db: Db, mount: string, name: string): Promise<SignContext> {
  const [roleRows, issuerRows, configRows, tuneRows] = await db.batch([
    roleQuery(db, mount, name),
    issuersOfMountQuery(db, mount),
    issuerConfigQuery(db, mount),
    mountTuneQuery(db, mount),
  ]);
  return {
    role: roleFromRows(roleRows),
    issuers: mountIssuersFromRows(issuerRows, configRows),
    ttls: mountTtlsFromRows(tuneRows),
  };
}

/** The role's values rendered as templates (each `*_template` flag that is on). */
function templateValues(role: Role): string[] {
  const values: string[] = [];
  if (role.defaultUserTemplate) values.push(role.defaultUser);
  if (role.allowedUsersTemplate) values.push(role.allowedUsers);
  if (role.allowedDomainsTemplate) values.push(role.allowedDomains);
  if (role.defaultExtensionsTemplate) values.push(...Object.values(role.defaultExtensions));
  return values;
}

/**
 * The caller's entity when the role renders templates (only then is it loaded), with its
 * groups when a template names `identity.groups.*` (S27).
 */
async function templateEntity(req: VaultRequest, role: Role): Promise<TemplateEntity | null> {
  const entityId = req.token?.entityId;
  if (!entityId) return null;
  const values = templateValues(role);
  if (!values.some(containsTemplate)) return null;
  const [entity, groups] = await Promise.all([
    loadEntity(req.db, entityId),
    values.some(usesGroupTemplates) ? templateGroupsOf(req.db, entityId) : undefined,
  ]);
  return entity && groups ? { ...entity, groups } : entity;
}

/** Unknown-field and path-field warnings (Vault's sdk/framework). */
function requestWarnings(body: Record<string, unknown>, unknown: string[]): string[] {
  const warnings = unknownFieldWarnings(unknown.filter((k) => k !== "role"));
  if (Object.hasOwn(body, "role")) {
    warnings.push(
      "Endpoint replaced the value of these parameters with the values captured from the endpoint's path: [role]",
    );
  }
  return warnings;
}

function policy<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof PolicyError || e instanceof KeyLengthError || e instanceof KeySpecError)
      throw badRequest(e.message);
    throw e;
  }
}

/** Everything decided about a certificate before a subject key is needed. */
interface CertificatePlan {
  keyIdParts: string[];
  certType: 1 | 2;
  principals: string[];
  ttl: number;
  criticalOptions: Record<string, string>;
  extensions: Record<string, string>;
  warnings: string[];
  caKey: Promise<SshSigningKey>;
  /** OpenBao's `issuer_id` of the answer. */
  issuerId: string;
}

/**
 * The shared pipeline's checks (Vault's path_issue_sign.go, in Vault's order): key ID → certificate type
 * → principals → TTL → critical options → extensions → CA key (the role's issuer). Issue runs them before it
 * generates a key pair, so a refused request costs no key generation.
 */
async function plan(
  req: VaultRequest,
  role: Role,
  issuers: MountIssuers,
  ttls: SystemTtls,
  values: Record<string, unknown>,
  provided: Set<string>,
): Promise<CertificatePlan> {
  const now = Date.now();
  const warnings: string[] = [];
  const keyIdParts = policy(() =>
    keyIdFor(role, req.params.name!, values.key_id as string, req.token?.displayName ?? ""),
  );
  const certType = policy(() => certTypeFor(role, values.cert_type as string));
  const entity = await templateEntity(req, role);
  const principals = policy(() =>
    principalsFor(role, {
      certType,
      validPrincipals: provided.has("valid_principals") ? (values.valid_principals as string) : undefined,
      entity,
      now,
    }),
  );
  const ttl = policy(() => ttlFor(role, provided.has("ttl") ? (values.ttl as number) : undefined, ttls));
  const criticalOptions = policy(() => criticalOptionsFor(role, values.critical_options as Record<string, string>));
  const ext = policy(() => extensionsFor(role, values.extensions as Record<string, string>, entity, now));
  if (ext.skipped) warnings.push(SKIPPED_EXTENSIONS_WARNING);
  // S4/S20/S21: no issuer, no default, unknown or retired issuer: 400s after every other check (as in Vault).
  const issuer = signingIssuer(issuers, role.issuerRef);
  const caKey = signingKeyFor(req.env, issuer, req.waitUntil);
  // Consumed by certify; a rejection before then must not go unhandled.
  caKey.catch(() => {});
  return {
    keyIdParts,
    certType,
    principals,
    ttl,
    criticalOptions,
    extensions: ext.extensions,
    warnings,
    caKey,
    issuerId: issuer.id,
  };
}

interface CertificateResult {
  issuerId: string;
  serialHex: string;
  signedKey: string;
  ttl: number;
  warnings: string[];
  /** What the inventory records (S22). */
  record: Omit<CertificateRecord, "mount" | "issuerId" | "role">;
}

/** Sign `subjectKeyBlob` as planned (S11 algorithm choice; S4 for a mismatched signer). */
async function certify(role: Role, p: CertificatePlan, subjectKeyBlob: Uint8Array): Promise<CertificateResult> {
  const caKey = await p.caKey;
  const keyId = p.keyIdParts.length > 1 ? p.keyIdParts.join(await publicKeyHash(subjectKeyBlob)) : p.keyIdParts[0]!;
  // S11: `default` → rsa-sha2-256 for RSA CAs, the native algorithm otherwise.
  const algorithm = role.algorithmSigner === "default" ? undefined : (role.algorithmSigner as RsaSignatureAlgorithm);
  const serial = randomSerial();
  const { validAfter, validBefore } = validityFor(role, p.ttl, Date.now());
  let signed: Awaited<ReturnType<typeof signCertificate>>;
  try {
    signed = await signCertificate(
      caKey,
      {
        subjectKeyBlob,
        serial,
        certType: p.certType,
        keyId,
        principals: p.principals,
        validAfter,
        validBefore,
        criticalOptions: p.criticalOptions,
        extensions: p.extensions,
      },
      algorithm,
    );
  } catch (e) {
    // S4: an RSA algorithm on a non-RSA CA is a 400 with Vault's prefix.
    if (e instanceof SshKeyError) throw badRequest(`failed to generate signed SSH key: sign error: ${e.message}`);
    // Caller text the encoder refuses (e.g. option names equal once encoded as UTF-8): B3.
    if (e instanceof WireError) throw badRequest(`failed to generate signed SSH key: ${e.message}`);
    throw e;
  }
  const warnings = [...p.warnings];
  if (signed.algorithm === "ssh-rsa") warnings.push(SSH_RSA_WARNING);
  return {
    issuerId: p.issuerId,
    serialHex: serial.toString(16),
    signedKey: signed.text,
    ttl: p.ttl,
    warnings,
    record: { serial, certType: p.certType, keyId, principals: p.principals, validAfter, validBefore, subjectKeyBlob },
  };
}

/** S22: a recorded serial must be new for its issuer; past this many draws something is wrong. */
const MAX_SERIAL_DRAWS = 4;

/**
 * certify, and with the role's `store_certificates` (S22) record the certificate first:
 * the answer leaves only after its row commits, and a serial the issuer already recorded
 * is drawn again (and the certificate signed again).
 */
async function certifyAndRecord(
  req: VaultRequest,
  role: Role,
  p: CertificatePlan,
  subjectKeyBlob: Uint8Array,
): Promise<CertificateResult> {
  for (let draw = 1; ; draw++) {
    const cert = await certify(role, p, subjectKeyBlob);
    if (!role.storeCertificates) return cert;
    if (await recordCertificate(req, { ...cert.record, mount: req.mount, issuerId: p.issuerId, role: role.name }))
      return cert;
    if (draw >= MAX_SERIAL_DRAWS) throw new Error("no unused certificate serial after repeated draws");
  }
}

/** A random uint64 serial (Vault's path_issue_sign.go). */
function randomSerial(): bigint {
  let serial = 0n;
  for (const byte of randomBytes(8)) serial = (serial << 8n) | BigInt(byte);
  return serial;
}

async function sign(req: VaultRequest): Promise<Response> {
  const f = parseFields(req.body, SIGN_FIELDS);
  const warnings = requestWarnings(req.body, f.unknown);
  const name = req.params.name!;
  const { role, issuers, ttls } = await loadContext(req.db, req.mount, name);
  if (!role) throw badRequest(`Unknown role: ${name}`);
  const publicKeyText = f.values.public_key as string;
  if (publicKeyText === "") throw badRequest("missing public_key");
  let subject: ReturnType<typeof parseSubjectPublicKey>;
  try {
    subject = parseSubjectPublicKey(publicKeyText);
  } catch (e) {
    // S17 refusals and parse failures carry their full 400 text.
    if (e instanceof SubjectKeyError) throw badRequest(e.message);
    throw e;
  }
  try {
    checkSubjectKey(role.allowedUserKeyLengths, { type: subject.type, bits: subject.bits });
  } catch (e) {
    if (e instanceof KeyLengthError) throw badRequest(`public_key failed to meet the key requirements: ${e.message}`);
    throw e;
  }
  const p = await plan(req, role, issuers, ttls, f.values, f.provided);
  const cert = await certifyAndRecord(req, role, p, subject.blob);
  return vaultJson(req, {
    data: { serial_number: cert.serialHex, signed_key: cert.signedKey, issuer_id: cert.issuerId },
    warnings: [...warnings, ...cert.warnings],
    // S18: a lease id naming the certificate, not renewable, as long as the certificate.
    leaseId: `${req.mount}/sign/${name}/${cert.serialHex}`,
    leaseDuration: cert.ttl,
  });
}

async function issue(req: VaultRequest): Promise<Response> {
  const f = parseFields(req.body, ISSUE_FIELDS);
  const warnings = requestWarnings(req.body, f.unknown);
  const name = req.params.name!;
  const { role, issuers, ttls } = await loadContext(req.db, req.mount, name);
  if (!role) throw badRequest(`unknown role: ${name}`);
  if (role.keyType !== "ca") throw badRequest(`role key type '${role.keyType}' not allowed to issue key pairs`);
  const keyType = f.values.key_type as string;
  const keyBits = f.values.key_bits as number;
  const spec = issueSpec(role, keyType, keyBits);
  const p = await plan(req, role, issuers, ttls, f.values, f.provided);
  // Only now, with every check passed, pay for key generation: a key generated ahead of
  // time when this isolate has one (docs/performance.md, key-pool.ts), and the pool refilled after the
  // answer.
  const pool = poolFor(spec);
  const pair = pool?.take() ?? (await generateSshKeyPair(spec.kind, spec.bits));
  if (pool) req.waitUntil(pool.fill());
  const cert = await certifyAndRecord(req, role, p, pair.signingKey.publicKeyBlob);
  return vaultJson(req, {
    data: {
      serial_number: cert.serialHex,
      signed_key: cert.signedKey,
      private_key: pair.privateKeyPem,
      // Vault echoes the requested key type (Vault's path_issue.go).
      private_key_type: keyType,
      issuer_id: cert.issuerId,
    },
    warnings: [...warnings, ...cert.warnings],
    leaseId: `${req.mount}/issue/${name}/${cert.serialHex}`,
    leaseDuration: cert.ttl,
  });
}

/**
 * The key issue generates (decision S10), checked against the role's
 * `allowed_user_key_lengths` first as Vault does (Vault's path_issue.go). Sizes are
 * defaulted before that check, so `rsa` with key_bits 0 matches a role allowing 2048.
 */
function issueSpec(role: Role, keyType: string, keyBits: number): KeySpec {
  let spec: KeySpec;
  try {
    spec = issueKeySpec(keyType, keyBits);
  } catch (e) {
    if (!(e instanceof KeySpecError)) throw e;
    if (Object.keys(role.allowedUserKeyLengths).length > 0) {
      const facts =
        keyType === "rsa" || keyType === "ssh-rsa"
          ? { type: "ssh-rsa", bits: keyBits }
          : keyType === "ec"
            ? { type: `ecdsa-sha2-nistp${keyBits}`, bits: keyBits }
            : null;
      if (!facts) throw badRequest("provided key_type value not in allowed_user_key_types");
      policy(() => checkIssueKey(role.allowedUserKeyLengths, facts));
    }
    throw badRequest(e.message);
  }
  policy(() => checkIssueKey(role.allowedUserKeyLengths, { type: sshKeyTypeOf(spec), bits: spec.bits }));
  return spec;
}

/** Mount-relative routes `sign/:name` and `issue/:name`. */
export const signRoutes: VaultRoute[] = [
  // S6: writes here need `create` (with or without `update`).
  {
    pattern: "sign/:name",
    mounted: true,
    writeNeedsCreate: true,
    operations: { update: sign },
    docs: {
      params: { name: "the CA role" },
      operations: {
        update: {
          summary: "Sign a public key with the role's issuer",
          body: SIGN_FIELDS,
          responses: envelope("the certificate; `lease_id` names it, `lease_duration` is its TTL", SIGNED_SCHEMA),
        },
      },
    },
  },
  {
    pattern: "issue/:name",
    mounted: true,
    writeNeedsCreate: true,
    operations: { update: issue },
    docs: {
      params: { name: "the CA role" },
      operations: {
        update: {
          summary: "Generate a key pair and sign its public key",
          body: ISSUE_FIELDS,
          responses: envelope(
            "the certificate and its private key",
            object({
              ...SIGNED_SCHEMA.properties,
              private_key: str("OpenSSH private key (PEM)"),
              private_key_type: str(),
            }),
          ),
        },
      },
    },
  },
];
