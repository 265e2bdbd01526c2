/**
 * OpenBao's SSH issuer API (decision S20; https://openbao.org/api-docs/secret/ssh/): `issuers` (list),
 * `issuers/import[/:issuer_name]`, `issuer/:issuer_ref` (read, write, patch, delete),
 * the unauthenticated `issuer/:issuer_ref/public_key`, and `config/issuers`; plus S21's
 * trust bundle: `trusted` on each issuer, and the unauthenticated `trusted_keys` and
 * `known_hosts?domain=`.
 */
import { toHex, utf8 } from "../../lib/bytes";
import { isKnownHostsDomain, knownHostsFile, trustedUserCaKeysFile } from "../../lib/sshwire/trust-files";
import { badRequest, notFound } from "../errors";
import { parseFields, unknownFieldWarnings } from "../fields";
import { bool, cacheableFile, envelope, listData, object, plainText, str, written } from "../openapi/schemas";
import { keyedList, vaultJson, vaultNoContent } from "../respond";
import type { VaultRequest, VaultRoute } from "../router";
import { KEY_MATERIAL_FIELDS, keyMaterialFrom } from "./key-material";
import {
  countRolesReferencingIssuer,
  DEFAULT_ISSUER_REF,
  defaultIssuerOf,
  deleteIssuer,
  type IssuerRow,
  issuerByRef,
  issuersOfMount,
  type MountIssuers,
  setDefaultIssuer,
  updateIssuer,
} from "./repo";
import {
  cachedIssuersOfMount,
  checkIssuerName,
  createIssuer,
  ISSUER_NAME_PATTERN,
  isNameConflict,
  normaliseIssuerRef,
  pathIssuerRef,
  resolveIssuer,
  retiredDefault,
} from "./service";

/** OpenBao's issuer answer, plus S21's `trusted`. */
function issuerData(issuer: IssuerRow) {
  return {
    issuer_id: issuer.id,
    issuer_name: issuer.name ?? "",
    public_key: issuer.publicKey,
    trusted: issuer.trusted,
  };
}

/** OpenBao's warning when roles still name an issuer by a reference that changes or goes. */
async function dereferenceWarning(req: VaultRequest, ref: string, warnings: string[]): Promise<void> {
  const n = await countRolesReferencingIssuer(req.db, req.mount, ref);
  if (n > 0) warnings.push(`${n} roles reference '${ref}'`);
}

// ---------------------------------------------------------------------------
// issuers (list) and issuers/import
// ---------------------------------------------------------------------------

async function listIssuers(req: VaultRequest): Promise<Response> {
  const set = await issuersOfMount(req.db, req.mount);
  // OpenBao lists its storage keys: issuer ids in byte order, paged by `after` and `limit`.
  const after = req.query.get("after") ?? "";
  const limitText = req.query.get("limit");
  let limit = 0;
  if (limitText !== null && limitText !== "") {
    if (!/^-?\d{1,9}$/.test(limitText)) {
      throw badRequest(`error converting input ${limitText} for field "limit": expected an integer`);
    }
    limit = Number(limitText);
  }
  let ids = set.issuers.map((i) => i.id).sort();
  if (after !== "") ids = ids.filter((id) => id > after);
  if (limit > 0) ids = ids.slice(0, limit);
  if (ids.length === 0) throw notFound();
  const data = keyedList(
    ids,
    (id) => id,
    (id) => {
      const issuer = set.issuers.find((i) => i.id === id)!;
      return {
        issuer_name: issuer.name ?? "",
        is_default: id === set.defaultId,
        public_key: issuer.publicKey,
        trusted: issuer.trusted,
      };
    },
  );
  return vaultJson(req, { data });
}

const IMPORT_FIELDS = {
  ...KEY_MATERIAL_FIELDS,
  issuer_name: { type: "string" },
  set_default: { type: "bool", default: false },
  trusted: { type: "bool", default: true },
} as const;

async function importIssuer(req: VaultRequest): Promise<Response> {
  const f = parseFields(req.body, IMPORT_FIELDS);
  const warnings = unknownFieldWarnings(f.unknown);
  const pathName = req.params.issuer_name;
  if (pathName !== undefined && Object.hasOwn(req.body, "issuer_name")) {
    warnings.push(
      "Endpoint replaced the value of these parameters with the values captured from the endpoint's path: [issuer_name]",
    );
  }
  const name = pathName ?? (f.values.issuer_name as string);
  // Refuse a bad or taken name before paying for key generation.
  checkIssuerName(await issuersOfMount(req.db, req.mount), name, { emptyAllowed: pathName === undefined });
  const material = await keyMaterialFrom(f.values, f.provided);
  const created = await createIssuer(req.env, req.db, req.mount, {
    name,
    material,
    setDefault: f.values.set_default as boolean,
    trusted: f.values.trusted as boolean,
  });
  return vaultJson(req, { data: issuerData(created.issuer), warnings: [...warnings, ...created.warnings] });
}

// ---------------------------------------------------------------------------
// issuer/:issuer_ref
// ---------------------------------------------------------------------------

async function readIssuer(req: VaultRequest): Promise<Response> {
  const ref = pathIssuerRef(req.params.issuer_ref!);
  const issuer = resolveIssuer(await issuersOfMount(req.db, req.mount), ref);
  return vaultJson(req, { data: issuerData(issuer) });
}

const UPDATE_FIELDS = { issuer_name: { type: "string" }, trusted: { type: "bool" } } as const;

/**
 * POST and PATCH: rename and/or retire or restore (S21). Only the fields sent change
 * (OpenBao's POST clears an unsent name; here a POST that only sets `trusted` keeps it).
 */
async function writeIssuer(req: VaultRequest): Promise<Response> {
  const ref = pathIssuerRef(req.params.issuer_ref!);
  const f = parseFields(req.body, UPDATE_FIELDS);
  const warnings = unknownFieldWarnings(f.unknown);
  const set = await issuersOfMount(req.db, req.mount);
  const issuer = resolveIssuer(set, ref);
  const change: { name?: string | null; trusted?: boolean } = {};
  if (f.provided.has("issuer_name")) {
    const name = checkIssuerName(set, f.values.issuer_name as string, { emptyAllowed: false, self: issuer });
    if (name !== issuer.name) change.name = name;
  }
  if (f.provided.has("trusted") && f.values.trusted !== issuer.trusted) {
    if (f.values.trusted === false && set.defaultId === issuer.id) {
      throw badRequest("the default issuer cannot be retired; make another issuer the default first");
    }
    change.trusted = f.values.trusted as boolean;
  }
  if (Object.keys(change).length === 0) return vaultJson(req, { data: issuerData(issuer), warnings });
  try {
    await updateIssuer(req.db, req.mount, issuer.id, change);
  } catch (e) {
    // A concurrent rename took the name between the check and the write.
    if (isNameConflict(e)) throw badRequest("issuer name already in use");
    throw e;
  }
  if (change.name !== undefined && issuer.name) await dereferenceWarning(req, issuer.name, warnings);
  return vaultJson(req, { data: issuerData({ ...issuer, ...change }), warnings });
}

/** Delete: an unknown reference is 204 (OpenBao); deleting the default warns. */
async function removeIssuer(req: VaultRequest): Promise<Response> {
  const ref = pathIssuerRef(req.params.issuer_ref!);
  const set = await issuersOfMount(req.db, req.mount);
  const issuer = issuerByRef(set, ref);
  if (!issuer) return vaultNoContent(req);
  const warnings: string[] = [];
  if (issuer.name) await dereferenceWarning(req, issuer.name, warnings);
  await dereferenceWarning(req, issuer.id, warnings);
  const wasDefault = set.defaultId === issuer.id;
  await deleteIssuer(req.db, req.mount, issuer.id);
  if (wasDefault) {
    warnings.push(
      `Deleted issuer ${issuer.id} (via issuer_ref ${ref}); this was configured as the default issuer. Operations without an explicit issuer will not work until a new default is configured.`,
    );
    await dereferenceWarning(req, DEFAULT_ISSUER_REF, warnings);
  }
  return vaultNoContent(req, warnings);
}

async function issuerPublicKey(req: VaultRequest): Promise<Response> {
  const ref = pathIssuerRef(req.params.issuer_ref!);
  // S16a/N2b: unauthenticated, so served from the mount's cached issuers (keyed by the
  // mount, never by the caller's reference).
  const issuer = resolveIssuer(await cachedIssuersOfMount(req.db, req.mount), ref);
  return new Response(issuer.publicKey, { status: 200, headers: { "Content-Type": "text/plain" } });
}

// ---------------------------------------------------------------------------
// config/issuers
// ---------------------------------------------------------------------------

async function readIssuersConfig(req: VaultRequest): Promise<Response> {
  const set = await issuersOfMount(req.db, req.mount);
  // S20a: OpenBao answers 200 with an empty default when none is configured.
  return vaultJson(req, { data: { default: defaultIssuerOf(set)?.id ?? "" } });
}

const ISSUERS_CONFIG_FIELDS = { default: { type: "string" } } as const;

async function writeIssuersConfig(req: VaultRequest): Promise<Response> {
  const f = parseFields(req.body, ISSUERS_CONFIG_FIELDS);
  const warnings = unknownFieldWarnings(f.unknown);
  const ref = normaliseIssuerRef(f.values.default as string);
  if (ref === "" || ref === DEFAULT_ISSUER_REF) {
    throw badRequest("Invalid issuer specification; must be non-empty and can't be 'default'.");
  }
  const set = await issuersOfMount(req.db, req.mount);
  const issuer = resolveIssuer(set, ref);
  if (!issuer.trusted) throw retiredDefault(ref);
  if (set.defaultId === issuer.id) {
    warnings.push("The default issuer is already set to the specified issuer.");
  } else {
    await setDefaultIssuer(req.db, req.mount, issuer.id);
    if (set.defaultId !== null) {
      const resolved = ref === issuer.id ? "" : ` (resolved to ${issuer.id})`;
      warnings.push(`Previous default (${set.defaultId}) has been updated with the issuer '${ref}'${resolved}`);
    }
  }
  return vaultJson(req, { data: { default: issuer.id }, warnings });
}

// ---------------------------------------------------------------------------
// S21: trusted_keys and known_hosts
// ---------------------------------------------------------------------------

/** Public keys of the trusted issuers: the default first, then the others oldest first. */
function trustedKeys(set: MountIssuers): string[] {
  const ordered = [...set.issuers].sort((a, b) => Number(b.id === set.defaultId) - Number(a.id === set.defaultId));
  return ordered.filter((i) => i.trusted).map((i) => i.publicKey);
}

/** A trust file answer with S21's caching headers; `If-None-Match` with the same tag → 304. */
async function trustFileResponse(req: VaultRequest, body: string): Promise<Response> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", utf8(body)));
  const etag = `"${toHex(digest.subarray(0, 16))}"`;
  const headers = { "Content-Type": "text/plain", ETag: etag, "Cache-Control": "public, max-age=60" };
  const match = req.headers.get("If-None-Match");
  if (match?.split(",").some((t) => t.trim().replace(/^W\//, "") === etag || t.trim() === "*")) {
    return new Response(null, { status: 304, headers });
  }
  return new Response(body, { status: 200, headers });
}

async function readTrustedKeys(req: VaultRequest): Promise<Response> {
  const set = await cachedIssuersOfMount(req.db, req.mount);
  return trustFileResponse(req, trustedUserCaKeysFile(trustedKeys(set)));
}

async function readKnownHosts(req: VaultRequest): Promise<Response> {
  const domain = req.query.get("domain");
  if (domain === null || domain === "") throw badRequest("missing domain");
  if (!isKnownHostsDomain(domain)) {
    throw badRequest("invalid domain: a hostname of letters, digits, '-' and '.', at most 253 characters");
  }
  const set = await cachedIssuersOfMount(req.db, req.mount);
  return trustFileResponse(req, knownHostsFile(domain, trustedKeys(set)));
}

const ISSUER_REF_PARAMS = { issuer_ref: ISSUER_NAME_PATTERN };

/** Mount-relative routes of the issuer API (S20) and the trust bundle (S21). */
/** B14: OpenBao's issuer answer (`issuerData`). */
const issuerSchema = object({
  issuer_id: str(),
  issuer_name: str("empty when unnamed"),
  public_key: str(),
  trusted: bool(),
});
const ISSUER_REF_DOC = { issuer_ref: "an issuer id, name, or `default`" };

export const issuerRoutes: VaultRoute[] = [
  {
    pattern: "issuers",
    mounted: true,
    operations: { list: listIssuers },
    docs: {
      operations: {
        list: {
          summary: "List the issuers of a mount",
          query: {
            after: { description: "list only ids after this one" },
            limit: { description: "at most this many ids", schema: { type: "string", pattern: "^-?\\d{1,9}$" } },
          },
          responses: envelope(
            "issuer ids in byte order",
            listData(object({ issuer_name: str(), is_default: bool(), public_key: str(), trusted: bool() })),
          ),
        },
      },
    },
  },
  {
    pattern: "issuers/import",
    mounted: true,
    operations: { update: importIssuer },
    docs: {
      operations: {
        update: {
          summary: "Import or generate an issuer",
          body: IMPORT_FIELDS,
          responses: envelope("the issuer", issuerSchema),
        },
      },
    },
  },
  {
    pattern: "issuers/import/:issuer_name",
    mounted: true,
    params: { issuer_name: ISSUER_NAME_PATTERN },
    operations: { update: importIssuer },
    docs: {
      params: { issuer_name: "the new issuer's name" },
      operations: {
        update: {
          summary: "Import or generate a named issuer",
          body: IMPORT_FIELDS,
          responses: envelope("the issuer", issuerSchema),
        },
      },
    },
  },
  {
    pattern: "issuer/:issuer_ref",
    mounted: true,
    params: ISSUER_REF_PARAMS,
    operations: { read: readIssuer, update: writeIssuer, patch: writeIssuer, delete: removeIssuer },
    docs: {
      params: ISSUER_REF_DOC,
      operations: {
        read: { summary: "Read an issuer", responses: envelope("the issuer", issuerSchema) },
        update: {
          summary: "Rename, retire or restore an issuer",
          body: UPDATE_FIELDS,
          responses: envelope("the issuer", issuerSchema),
        },
        patch: {
          summary: "Rename, retire or restore an issuer",
          body: UPDATE_FIELDS,
          responses: envelope("the issuer", issuerSchema),
        },
        delete: { summary: "Delete an issuer", responses: written("deleted (also when unknown)") },
      },
    },
  },
  {
    pattern: "issuer/:issuer_ref/public_key",
    mounted: true,
    params: ISSUER_REF_PARAMS,
    // S16a: served without a token; other methods need one (and are then 405).
    unauthenticated: ["read"],
    operations: { read: issuerPublicKey },
    docs: {
      params: ISSUER_REF_DOC,
      operations: {
        read: {
          summary: "An issuer's public key, in canonical text (B17)",
          responses: plainText("an OpenSSH public key"),
        },
      },
    },
  },
  {
    pattern: "config/issuers",
    mounted: true,
    operations: { read: readIssuersConfig, update: writeIssuersConfig },
    docs: {
      operations: {
        read: {
          summary: "Read the default issuer",
          responses: envelope("the default issuer's id", object({ default: str() })),
        },
        update: {
          summary: "Set the default issuer",
          body: ISSUERS_CONFIG_FIELDS,
          responses: envelope("the default issuer's id", object({ default: str() })),
        },
      },
    },
  },
  {
    pattern: "trusted_keys",
    mounted: true,
    unauthenticated: ["read"],
    operations: { read: readTrustedKeys },
    docs: {
      operations: {
        read: {
          summary: "Public keys of the trusted issuers, one a line (sshd's TrustedUserCAKeys)",
          responses: cacheableFile("one OpenSSH public key a line, default issuer first", "text/plain"),
        },
      },
    },
  },
  {
    pattern: "known_hosts",
    mounted: true,
    unauthenticated: ["read"],
    operations: { read: readKnownHosts },
    docs: {
      operations: {
        read: {
          summary: "`@cert-authority` lines for the trusted issuers (known_hosts)",
          query: {
            domain: {
              description: "the host domain: letters, digits, `-`, `.`, at most 253 characters",
              required: true,
            },
          },
          responses: cacheableFile("one `@cert-authority *.D,D <key>` line per trusted issuer", "text/plain"),
        },
      },
    },
  },
];
