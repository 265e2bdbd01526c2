/**
 * `allowed_user_key_lengths` (Vault's path_roles.go, path_issue_sign.go and path_issue.go): parsing the
 * role field, and the checks sign and issue apply to a subject key. Pure (no bindings).
 */

/** A role field or key check that failed; `message` is the text of the 400. */
export class KeyLengthError extends Error {}

/** Go's `%v` of a JSON value for messages. */
function show(value: unknown): string {
  if (value === null || value === undefined) return "<nil>";
  if (Array.isArray(value)) return `[${value.map(show).join(" ")}]`;
  if (typeof value === "object") return "map[...]";
  return String(value);
}

function parseOneInt(value: unknown): number {
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) throw new KeyLengthError(`could not parse value ${show(value)} as an integer`);
    return value;
  }
  if (typeof value === "string") {
    const t = value.trim();
    // parseutil.ParseInt: "" is 0.
    if (t === "") return 0;
    if (!/^[-+]?\d+$/.test(t) || !Number.isSafeInteger(Number(t))) {
      throw new KeyLengthError(`strconv.ParseInt: parsing "${t}": invalid syntax`);
    }
    return Number(t);
  }
  throw new KeyLengthError(`could not parse value ${show(value)} as an integer`);
}

/**
 * parseutil.SafeParseIntSlice for one map value: an int, a numeric string, a comma-separated
 * string of numbers (`"2048,4096"`), or an array of those. `""` is `[0]`.
 */
function parseIntSlice(value: unknown): number[] {
  if (Array.isArray(value)) return value.map(parseOneInt);
  if (typeof value === "string") return value.split(",").map(parseOneInt);
  return [parseOneInt(value)];
}

/**
 * The role field: a map (or an array of maps, merged) from key type to sizes.
 * @throws KeyLengthError with the cause for `error processing allowed_user_key_lengths: <cause>`;
 *   NotAMapError when the value is not a map at all (a field conversion error in Vault)
 */
export function parseAllowedUserKeyLengths(value: unknown): Record<string, number[]> {
  if (value === undefined || value === null || value === "") return {};
  const objects = Array.isArray(value) ? value : [value];
  const out: Record<string, number[]> = {};
  for (const item of objects) {
    if (item === null || typeof item !== "object" || Array.isArray(item)) throw new NotAMapError();
    for (const [k, v] of Object.entries(item as Record<string, unknown>)) out[k] = parseIntSlice(v);
  }
  return out;
}

/** The field is not a map: reported as a field conversion failure. */
export class NotAMapError extends Error {}

/** Class of a subject key as Vault's validateSignedKeyRequirements sees it. */
export type KeyClass = "rsa" | "dsa" | "ecdsa" | "ed25519";

/** What the checks need to know about a subject key. */
export interface KeyFacts {
  /** SSH key type name (`ssh-rsa`, `ecdsa-sha2-nistp256`, `sk-…`, …). */
  type: string;
  /** RSA modulus bits, DSA p bits, curve size for ECDSA. */
  bits: number;
}

/** Go type names x/crypto/ssh gives FIDO keys (not ssh.CryptoPublicKey). */
const SK_GO_TYPES: Record<string, string> = {
  "sk-ecdsa-sha2-nistp256@openssh.com": "*ssh.skECDSAPublicKey",
  "sk-ssh-ed25519@openssh.com": "*ssh.skEd25519PublicKey",
};

function classify(key: KeyFacts): { cls: KeyClass; bits: number } {
  const goType = SK_GO_TYPES[key.type];
  if (goType)
    throw new KeyLengthError(`pubkey not suitable for crypto (expected ssh.CryptoPublicKey but found ${goType})`);
  if (key.type === "ssh-rsa") return { cls: "rsa", bits: key.bits };
  if (key.type === "ssh-dss") return { cls: "dsa", bits: key.bits };
  if (key.type.startsWith("ecdsa-sha2-")) return { cls: "ecdsa", bits: key.bits };
  if (key.type === "ssh-ed25519") return { cls: "ed25519", bits: 0 };
  throw new KeyLengthError(`public key type of ${key.type} is not allowed`);
}

/** Map keys consulted per class (as Vault's path_issue_sign.go). */
function mapKeysFor(cls: KeyClass, bits: number): string[] {
  switch (cls) {
    case "rsa":
      return ["rsa", "ssh-rsa"];
    case "dsa":
      return ["dsa", "ssh-dss"];
    case "ecdsa":
      return ["ecdsa", "ec", `ecdsa-sha2-nistp${bits}`];
    case "ed25519":
      return ["ed25519", "ssh-ed25519"];
  }
}

/** Outcome of matching a key against the role's map. */
export type KeyLengthVerdict = "ok" | "type_not_allowed" | "size_not_allowed";

function verdict(
  allowed: Record<string, number[]>,
  key: KeyFacts,
): { verdict: KeyLengthVerdict; cls: KeyClass; bits: number } {
  const { cls, bits } = classify(key);
  let present = false;
  for (const mapKey of mapKeysFor(cls, bits)) {
    if (!Object.hasOwn(allowed, mapKey)) continue;
    present = true;
    const values = allowed[mapKey]!;
    // RSA/DSA sizes and `ec`/`ecdsa` curve sizes must match exactly; a curve-named or
    // ed25519 entry passes with any listed value (but never with an empty list).
    const exact = cls === "rsa" || cls === "dsa" || mapKey === "ec" || mapKey === "ecdsa";
    if (values.some((v) => !exact || v === bits)) return { verdict: "ok", cls, bits };
  }
  return { verdict: present ? "size_not_allowed" : "type_not_allowed", cls, bits };
}

/**
 * Sign's check of a subject key (Vault's path_issue_sign.go). Skipped when the map is empty.
 * @throws KeyLengthError with the cause for `public_key failed to meet the key requirements: <cause>`
 */
export function checkSubjectKey(allowed: Record<string, number[]>, key: KeyFacts): void {
  if (Object.keys(allowed).length === 0) return;
  const v = verdict(allowed, key);
  if (v.verdict === "type_not_allowed") throw new KeyLengthError(`key of type ${v.cls} is not allowed`);
  if (v.verdict === "size_not_allowed") throw new KeyLengthError(`key is of an invalid size: ${v.bits}`);
}

/**
 * Issue's check of the key it is about to generate (Vault's path_issue.go), applied to the
 * key type and size after defaults (S10) with the same matching rules as sign, so a role
 * that lets `sign` take a key also lets `issue` make one.
 * @throws KeyLengthError with Vault's issue messages
 */
export function checkIssueKey(allowed: Record<string, number[]>, key: KeyFacts): void {
  if (Object.keys(allowed).length === 0) return;
  const v = verdict(allowed, key);
  if (v.verdict === "type_not_allowed")
    throw new KeyLengthError("provided key_type value not in allowed_user_key_types");
  if (v.verdict === "size_not_allowed")
    throw new KeyLengthError("provided key_bits value not in list of role's allowed_user_key_types");
}
