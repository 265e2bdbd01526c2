/**
 * Renewing a token made by a JWT/OIDC login (decision S25), as Vault's JWT auth method does
 * (hashicorp/vault-plugin-auth-jwt path_login.go, `pathLoginRenew`): the token renews only
 * while the role it logged in through still exists, and with that role's current
 * `token_ttl`, `token_max_ttl` and `token_period` (its own `explicit_max_ttl` still caps
 * it). Disabling the mount revokes its tokens (S24), so only the role can be missing.
 */
import type { Db } from "../../db/client";
import { TOKEN_MAX_TTL_SECONDS } from "../access/durations";
import type { TokenContext } from "../access/token-context";
import { badRequest } from "../errors";
import { loadJwtRoleAt } from "./repo";

/** `auth/<mount>/login`: the path a login token records; its mount path (possibly nested, S24). */
const LOGIN_PATH = /^auth\/(.+)\/login$/;

/**
 * The token as its renewal sees it: a login token takes its role's current TTLs; any
 * other token is returned as it is.
 * @throws VaultError 400 `failed to renew entry: role <name> does not exist during renewal`
 */
export async function tokenForRenewal(db: Db, token: TokenContext): Promise<TokenContext> {
  const mount = LOGIN_PATH.exec(token.path)?.[1];
  if (mount === undefined || mount === "token") return token;
  // The role is kept in the token's metadata at login (claim mappings may not name `role`).
  const roleName = token.meta.role ?? "";
  const role = roleName === "" ? null : await loadJwtRoleAt(db, mount, roleName);
  if (!role) {
    // Vault answers this error of the plugin with a 500 that wraps it; here a client's
    // request never gets a 5xx, so it is a 400 with the plugin's text.
    throw badRequest(`failed to renew entry: role ${roleName} does not exist during renewal`);
  }
  // Vault's framework.CalculateTTL: with no increment, the role's TTL or the system default.
  const ttl = role.token_ttl > 0 ? role.token_ttl : TOKEN_MAX_TTL_SECONDS;
  return { ...token, ttl, maxTtl: role.token_max_ttl, period: role.token_period };
}
