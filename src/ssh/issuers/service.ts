/**
 * Issuer rules (decisions S20, S21) between the handlers and the repo: OpenBao's name and
 * reference rules and error texts, creation (with the first issuer becoming the default
 * and an already-held key pair answered with its issuer), the default, retirement, and
 * the issuer sign and issue use. The issuers of a mount are cached per isolate with the
 * other mount contexts (context-cache.ts): every issuer write here goes through repo.ts,
 * which drops the mount's entries at once; other isolates see a change within
 * MOUNT_CONTEXT_TTL_MS.
 */
import type { Db } from "../../db/client";
import { bytesEqual } from "../../lib/bytes";
import { parseCanonicalPublicKey } from "../../lib/sshwire/public-key";
import { mountContextCache } from "../context-cache";
import { badRequest } from "../errors";
import type { KeyMaterial } from "./key-material";
import { rememberSigningKey } from "./keys";
import {
  DEFAULT_ISSUER_REF,
  type IssuerRow,
  insertIssuer,
  issuerByRef,
  issuersOfMount,
  type MountIssuers,
  setDefaultIssuer,
} from "./repo";

/** OpenBao's issuer name grammar `\w(([\w-.]+)?\w)?` (framework.GenericNameRegex). */
export const ISSUER_NAME_PATTERN = "\\w(?:[\\w\\-.]*\\w)?";
const ISSUER_NAME = new RegExp(`^${ISSUER_NAME_PATTERN}$`);

/** Longest issuer name or reference we accept (OpenBao has none; B9 bounds input). */
const MAX_ISSUER_NAME_LENGTH = 128;

/** Most issuers a mount may hold: trusted_keys lists them all, so the list stays bounded. */
export const MAX_ISSUERS_PER_MOUNT = 100;

/** OpenBao's answer for a reference that matches nothing. */
export const unknownIssuer = (ref: string) => badRequest(`unable to find issuer for reference: ${ref}`);
/** OpenBao's answer for `default` while no default is configured. */
export const noDefaultIssuer = () => badRequest("no default issuer currently configured");
/** S21: a retired (untrusted) issuer does not sign. */
export const retiredIssuer = (ref: string) => badRequest(`issuer "${ref}" is retired`);
/** S21: a retired issuer cannot be the default. */
export const retiredDefault = (ref: string) =>
  badRequest(`issuer "${ref}" is retired and cannot be the default issuer; set it trusted first`);

const issuerSets = mountContextCache<MountIssuers>();

/** The issuers of a mount and its default, from the per-isolate cache (≤ 1 s old) or D1. */
export function cachedIssuersOfMount(db: Db, mount: string): Promise<MountIssuers> {
  return issuerSets.get(mount, "", () => issuersOfMount(db, mount));
}

/**
 * OpenBao's reading of a reference given in a body field (`default`, a role's
 * `issuer_ref`): trimmed, and any spelling of `default` is `default`.
 */
export function normaliseIssuerRef(value: string): string {
  const ref = value.trim();
  return ref.toLowerCase() === DEFAULT_ISSUER_REF ? DEFAULT_ISSUER_REF : ref;
}

/**
 * A reference taken from the path. S2b: a name the handler would normalise is refused
 * rather than rewritten, so `issuer/Default` is a 400, not the default issuer.
 */
export function pathIssuerRef(ref: string): string {
  if (ref !== DEFAULT_ISSUER_REF && ref.toLowerCase() === DEFAULT_ISSUER_REF) {
    throw badRequest(`issuer reference "${ref}" must be written "default"`);
  }
  if (ref.length > MAX_ISSUER_NAME_LENGTH) throw unknownIssuer(ref.slice(0, MAX_ISSUER_NAME_LENGTH));
  return ref;
}

/** Is `ref` a well-formed reference (`default`, or an id or name in OpenBao's grammar)? */
export function isWellFormedIssuerRef(ref: string): boolean {
  return ref === DEFAULT_ISSUER_REF || (ref.length <= MAX_ISSUER_NAME_LENGTH && ISSUER_NAME.test(ref));
}

/** Resolve a reference or answer OpenBao's 400s (no default; unknown reference). */
export function resolveIssuer(set: MountIssuers, ref: string): IssuerRow {
  const issuer = issuerByRef(set, ref);
  if (issuer) return issuer;
  if (ref === DEFAULT_ISSUER_REF) throw noDefaultIssuer();
  throw unknownIssuer(ref);
}

/**
 * Check a new issuer name (OpenBao's getIssuerName): trimmed, not empty (`emptyAllowed`
 * for imports, where empty means unnamed), not `default` in any case, in the grammar, and
 * not already naming (or being the id of) another issuer of the mount. Returns the
 * trimmed name, or null for none.
 */
export function checkIssuerName(
  set: MountIssuers,
  raw: string,
  options: { emptyAllowed: boolean; self?: IssuerRow },
): string | null {
  const name = raw.trim();
  if (name === "") {
    if (options.emptyAllowed) return null;
    throw badRequest("expected non-empty issuer name");
  }
  if (name.toLowerCase() === DEFAULT_ISSUER_REF)
    throw badRequest("reserved keyword 'default' can not be used as issuer name");
  if (name.length > MAX_ISSUER_NAME_LENGTH || !ISSUER_NAME.test(name))
    throw badRequest("issuer name contained invalid characters");
  const holder = issuerByRef(set, name);
  if (holder && holder.id !== options.self?.id) throw badRequest("issuer name already in use");
  return name;
}

/** OpenBao's warning when the submitted key pair is one the mount already holds. */
export const EXISTING_ISSUER_WARNING =
  "An issuer with the provided public key already exists, returning the existing issuer";

/** The issuer already holding this public key, if any. */
function issuerHolding(set: MountIssuers, material: KeyMaterial): IssuerRow | null {
  const blob = material.signingKey.publicKeyBlob;
  for (const issuer of set.issuers) {
    try {
      if (bytesEqual(parseCanonicalPublicKey(issuer.publicKey).blob, blob)) return issuer;
    } catch {
      // A stored key that no longer parses holds nothing comparable.
    }
  }
  return null;
}

/** Is a D1 failure the (mount, name) unique index refusing a concurrent duplicate? */
export function isNameConflict(e: unknown): boolean {
  return (
    e instanceof Error &&
    /UNIQUE constraint failed: ssh_issuers\.mount, ssh_issuers\.name/.test(`${e.message} ${String(e.cause ?? "")}`)
  );
}

/**
 * Create an issuer from checked key material (OpenBao's import; `config/ca` passes
 * `setDefault` true). The first issuer of a mount always becomes the default. A key pair
 * the mount already holds answers that issuer with a warning (made default when asked).
 */
export async function createIssuer(
  env: Env,
  db: Db,
  mount: string,
  input: { name: string; material: KeyMaterial; setDefault: boolean; trusted: boolean },
): Promise<{ issuer: IssuerRow; warnings: string[] }> {
  const set = await issuersOfMount(db, mount);
  const name = checkIssuerName(set, input.name, { emptyAllowed: true });
  const existing = issuerHolding(set, input.material);
  if (existing) {
    if (input.setDefault && set.defaultId !== existing.id) {
      if (!existing.trusted) throw retiredDefault(existing.id);
      await setDefaultIssuer(db, mount, existing.id);
    }
    return { issuer: existing, warnings: [EXISTING_ISSUER_WARNING] };
  }
  if (set.issuers.length >= MAX_ISSUERS_PER_MOUNT) {
    throw badRequest(`a mount holds at most ${MAX_ISSUERS_PER_MOUNT} issuers; delete retired issuers first`);
  }
  const makeDefault = input.setDefault || set.issuers.length === 0;
  if (makeDefault && !input.trusted) throw badRequest("a retired (untrusted) issuer cannot be the default issuer");
  let issuer: IssuerRow;
  try {
    issuer = await insertIssuer(
      env,
      db,
      mount,
      {
        name,
        publicKeyText: input.material.publicKeyText,
        privateKeyPem: input.material.privateKeyPem,
        keyType: input.material.keyType,
        trusted: input.trusted,
      },
      makeDefault,
    );
  } catch (e) {
    if (isNameConflict(e)) throw badRequest("issuer name already in use");
    throw e;
  }
  rememberSigningKey(issuer, input.material.signingKey);
  return { issuer, warnings: [] };
}

/**
 * The issuer that signs for a role's `issuer_ref` (S20, S21), checked where Vault checks
 * for the CA key (after every other check): no issuer at all keeps S4's `failed to read
 * CA private key`; `default` without a default, an unknown reference, and a retired issuer
 * are OpenBao's and S21's 400s.
 */
export function signingIssuer(set: MountIssuers, ref: string): IssuerRow {
  if (set.issuers.length === 0) throw badRequest("failed to read CA private key");
  const issuer = resolveIssuer(set, ref);
  if (!issuer.trusted) throw retiredIssuer(ref);
  return issuer;
}
