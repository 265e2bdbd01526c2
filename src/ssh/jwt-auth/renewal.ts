/**
 * Renewing a token made by a JWT/OIDC login (decision S25): as Vault's JWT auth method does
 * (hashicorp/vault-plugin-auth-jwt path_login.go, `pathLoginRenew`), the token renews only
 * while the role it logged in through still exists. Disabling the mount revokes its tokens
 * (S24), so only the role can be missing.
 */
import type { Db } from "../../db/client";
import type { TokenContext } from "../auth/token-context";
import { badRequest } from "../errors";
import { jwtRoleExists } from "./repo";

/** `auth/<mount>/login`: the path a login token records; its mount path (possibly nested, S24). */
const LOGIN_PATH = /^auth\/(.+)\/login$/;

/**
 * Refuse the renewal of a login token whose role is gone; any other token passes.
 * @throws VaultError 400 `failed to renew entry: role <name> does not exist during renewal`
 */
export async function assertLoginRoleExists(db: Db, token: TokenContext): Promise<void> {
  const mount = LOGIN_PATH.exec(token.path)?.[1];
  if (mount === undefined || mount === "token") return;
  // The role is kept in the token's metadata at login (claim mappings may not name `role`).
  const role = token.meta.role ?? "";
  if (role === "" || !(await jwtRoleExists(db, mount, role))) {
    // Vault answers this error of the plugin with a 500 that wraps it; here a client's
    // request never gets a 5xx, so it is a 400 with the plugin's text.
    throw badRequest(`failed to renew entry: role ${role} does not exist during renewal`);
  }
}
