/**
 * The stored shape of an SSH role (Vault's path_roles.go, decision S12). One type for
 * both key types; OTP roles use only the OTP fields. Durations are seconds.
 */

export type RoleKeyType = "otp" | "ca";

export interface Role {
  name: string;
  keyType: RoleKeyType;
  // Both types
  defaultUser: string;
  allowedUsers: string;
  // OTP roles
  /** CIDR blocks, trimmed (S12), as a list; read back joined by `,`. */
  cidrList: string[];
  excludeCidrList: string[];
  port: number;
  // CA roles
  defaultUserTemplate: boolean;
  allowedUsersTemplate: boolean;
  allowedDomains: string;
  allowedDomainsTemplate: boolean;
  ttl: number;
  maxTtl: number;
  allowedCriticalOptions: string;
  allowedExtensions: string;
  defaultCriticalOptions: Record<string, string>;
  defaultExtensions: Record<string, string>;
  defaultExtensionsTemplate: boolean;
  allowUserCertificates: boolean;
  allowHostCertificates: boolean;
  allowBareDomains: boolean;
  allowSubdomains: boolean;
  allowUserKeyIds: boolean;
  keyIdFormat: string;
  /** Key type (as written: `rsa`, `ssh-rsa`, `ec`, …) → allowed sizes. */
  allowedUserKeyLengths: Record<string, number[]>;
  /** `default`, `ssh-rsa`, `rsa-sha2-256` or `rsa-sha2-512`. */
  algorithmSigner: string;
  notBeforeDuration: number;
  allowEmptyPrincipals: boolean;
  /** S20: the issuer that signs (`default`, an issuer id or name), resolved at sign time. */
  issuerRef: string;
  /** S22: record every certificate signed or issued through the role (inventory). */
  storeCertificates: boolean;
}

/** A role with every field at its default (what a fresh write starts from). */
export function defaultRole(name: string, keyType: Role["keyType"]): Role {
  return {
    name,
    keyType,
    defaultUser: "",
    allowedUsers: "",
    cidrList: [],
    excludeCidrList: [],
    port: 22,
    defaultUserTemplate: false,
    allowedUsersTemplate: false,
    allowedDomains: "",
    allowedDomainsTemplate: false,
    ttl: 0,
    maxTtl: 0,
    allowedCriticalOptions: "",
    allowedExtensions: "",
    defaultCriticalOptions: {},
    defaultExtensions: {},
    defaultExtensionsTemplate: false,
    allowUserCertificates: false,
    allowHostCertificates: false,
    allowBareDomains: false,
    allowSubdomains: false,
    allowUserKeyIds: false,
    keyIdFormat: "",
    allowedUserKeyLengths: {},
    algorithmSigner: "default",
    notBeforeDuration: 30,
    allowEmptyPrincipals: false,
    issuerRef: "default",
    storeCertificates: false,
  };
}
