/**
 * The credential of an `Authorization: Bearer <credential>` header (RFC 6750 §2.1), the one
 * parser both wings and the agent protocol use. The scheme name is case-insensitive
 * (RFC 9110 §11.1); the credential is what follows the whitespace after it, trimmed. Null
 * when the value is absent, names another scheme, or carries no credential.
 *
 * The callers differ only in what they accept around it: the Vault wing trims the header
 * value first and takes any credential text; /api/v2 takes a single token (no whitespace
 * inside), as HCP Terraform's API tokens are.
 */
export function bearerCredential(authorization: string | null | undefined): string | null {
  // Written without `\s+(.+)`, whose two overlapping quantifiers backtrack polynomially
  // (lint:regex): the whitespace run is stripped first, then the rest must be one line.
  if (!authorization || !/^Bearer\s/i.test(authorization)) return null;
  const credential = authorization.slice("Bearer".length).replace(/^\s+/, "");
  if (/[\n\r\u2028\u2029]/.test(credential)) return null;
  return credential.trim() || null;
}
