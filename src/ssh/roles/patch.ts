/**
 * `PATCH roles/:name` (decision S12): a JSON merge patch (RFC 7396) applied to the role as
 * it reads back, then validated exactly like a full write.
 */

/** Fields whose value is an object: a patch merges them key by key (S12). */
const OBJECT_FIELDS = new Set(["default_extensions", "default_critical_options", "allowed_user_key_lengths"]);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * Merge `patch` into `current` (a role's read output) and return the write body the merged
 * role corresponds to. RFC 7396 §2: `null` removes a member — here that resets a field to its
 * default, and inside an object field removes that key; an object merges into an object
 * field; anything else replaces. `role` (the path field) is passed through so the write
 * reports it as Vault does.
 */
export function mergeRolePatch(
  current: Record<string, unknown>,
  patch: Record<string, unknown>,
): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...current };
  for (const [field, value] of Object.entries(patch)) {
    if (value === null) {
      delete merged[field];
      continue;
    }
    const existing = merged[field];
    if (OBJECT_FIELDS.has(field) && isPlainObject(value) && isPlainObject(existing)) {
      const inner: Record<string, unknown> = { ...existing };
      for (const [key, innerValue] of Object.entries(value)) {
        if (innerValue === null) delete inner[key];
        else inner[key] = innerValue;
      }
      merged[field] = inner;
      continue;
    }
    merged[field] = value;
  }
  return merged;
}
