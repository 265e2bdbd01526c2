/**
 * `POST <mount>/creds/:name` (Vault's path_creds_create.go, decision S13): issue a
 * one-time password for a username and a remote host IP, under a lease.
 */
import type { Db } from "../../db/client";
import { parseIp } from "../../lib/net/ip";
import { mountContextCache } from "../context-cache";
import { badRequest } from "../errors";
import { parseFields, unknownFieldWarnings } from "../fields";
import { type MountTtls, mountTtlsFromRows, mountTuneQuery } from "../mount-ttls";
import { vaultJson } from "../respond";
import type { Role } from "../roles/model";
import { roleFromRows, roleQuery } from "../roles/repo";
import type { VaultRequest } from "../router";
import { checkRoleCidrs, formatIp } from "./ip-match";
import { newLeaseKey, newOtp, otpHash, otpStore, shardOf } from "./shard";
import { zeroAddressFromRows, zeroAddressQuery } from "./zeroaddress";

/** What creds reads of a (mount, role): the role, whether it is on the zero-address list, the mount's TTLs. */
interface CredsContext {
  role: Role | null;
  zeroAddress: boolean;
  ttls: MountTtls;
}

const credsContexts = mountContextCache<CredsContext>();

/** The creds context: from the per-isolate cache (as sign's), else in one D1 round trip. */
function loadCredsContext(db: Db, mount: string, roleName: string): Promise<CredsContext> {
  return credsContexts.get(mount, roleName, async () => {
    // The three reads are independent: one D1 batch, one round trip.
    const [roleRows, zeroAddressRows, tuneRows] = await db.batch([
      roleQuery(db, mount, roleName),
      zeroAddressQuery(db, mount),
      mountTuneQuery(db, mount),
    ]);
    return {
      role: roleFromRows(roleRows),
      zeroAddress: (zeroAddressFromRows(zeroAddressRows) ?? []).includes(roleName),
      ttls: mountTtlsFromRows(tuneRows),
    };
  });
}

/** Vault's OTP reading of `allowed_users` (Vault's path_creds_create.go): `*`, or trimmed exact names. */
function userAllowed(username: string, allowedUsers: string): boolean {
  if (allowedUsers === "*") return true;
  return allowedUsers.split(",").some((entry) => entry.trim() === username);
}

/** The fields `creds/:name` takes. */
export const CREDS_FIELDS = { ip: { type: "string" }, username: { type: "string" } } as const;

export async function credsHandler(req: VaultRequest): Promise<Response> {
  const roleName = req.params.name!;
  const { role: _pathField, ...body } = req.body;
  const f = parseFields(body, CREDS_FIELDS);
  const warnings = unknownFieldWarnings(f.unknown);
  if ("role" in req.body) {
    warnings.push(
      "Endpoint replaced the value of these parameters with the values captured from the endpoint's path: [role]",
    );
  }

  // Vault's path_creds_create.go, in Vault's order.
  const ipText = f.values.ip as string;
  if (ipText === "") throw badRequest("Missing ip");
  const { role, zeroAddress, ttls } = await loadCredsContext(req.db, req.mount, roleName);
  if (!role) throw badRequest(`Role ${JSON.stringify(roleName)} not found`);

  let username = f.values.username as string;
  if (username === "") {
    if (role.defaultUser === "") throw badRequest("No default username registered. Use 'username' option");
    username = role.defaultUser;
  }
  if (role.allowedUsers !== "") {
    // The default user is always allowed, listed or not.
    if (!userAllowed(username, role.allowedUsers) && username !== role.defaultUser) {
      throw badRequest("Username is not present is allowed users list");
    }
  } else if (username !== role.defaultUser) {
    throw badRequest("Username has to be either in allowed users list or has to be a default username");
  }

  const addr = parseIp(ipText);
  if (!addr) throw badRequest(`Invalid IP ${JSON.stringify(ipText)}`);
  const ip = formatIp(addr);

  // Zero-address roles accept any IP; their CIDR lists are ignored (Vault's path_config_zeroaddress.go).
  if (!zeroAddress) {
    const check = checkRoleCidrs(addr, role.cidrList, role.excludeCidrList);
    if (!check.ok) throw badRequest(`Error validating IP: ${check.error}`);
  }
  // Only a CA role on the zero-address list gets here with another key type; Vault
  // answers 500, a caller's mistake is 400 here (S4, B3).
  if (role.keyType !== "otp") throw badRequest("key type unknown");

  // S13: the lease lasts the mount's default lease TTL as tuned now (S1).
  const defaultLeaseTtl = ttls.defaultLeaseTtl;
  const expiresAt = Date.now() + defaultLeaseTtl * 1000;
  for (let attempt = 0; attempt < 3; attempt++) {
    const otp = newOtp();
    const hash = await otpHash(req.env, req.mount, otp);
    const leaseKey = newLeaseKey(shardOf(hash));
    const stored = await otpStore(req.env, req.mount, shardOf(hash)).put({
      hash,
      leaseKey,
      roleName,
      username,
      ip,
      expiresAt,
    });
    if (!stored.ok) continue; // a collision: draw a new OTP (Vault's path_creds_create.go)
    return vaultJson(req, {
      leaseId: `${req.mount}/creds/${roleName}/${leaseKey}`,
      leaseDuration: defaultLeaseTtl,
      renewable: false,
      data: { key_type: "otp", key: otp, username, ip, port: role.port },
      warnings,
    });
  }
  throw new Error("could not store a new OTP after 3 attempts");
}
