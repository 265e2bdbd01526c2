/**
 * The D1 tables of the secrets service (/v1, the `src/ssh` wing): tokens, policies,
 * identity, auth mounts, the SSH engine's roles, issuers, certificate inventory and
 * revocations. Column names are explicit snake_case; timestamps are integer milliseconds
 * since the epoch unless a name says otherwise. Secrets are never stored in the clear
 * (decision B2): tokens as keyed hashes, private keys encrypted. Only `src/ssh` (with its
 * tests and the bench) imports this file; the no-code wing's tables are in `nocode.ts`.
 * docs/storage-schema.md describes each table.
 */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { timestamps } from "./columns";

// ---------------------------------------------------------------------------
// Secrets service (/v1): tokens, policies, identity, mount settings
// ---------------------------------------------------------------------------

/** Vault-style tokens (S5, S5a). `id` is hex HMAC-SHA-256 of the token under KEYWAY_HASH_KEY. */
export const vaultTokens = sqliteTable(
  "vault_tokens",
  {
    id: text("id").primaryKey(),
    accessor: text("accessor").notNull(),
    /** JSON array of policy names, sorted, `default` included unless opted out. */
    policies: text("policies").notNull(),
    displayName: text("display_name").notNull(),
    /** JSON object of string metadata. */
    meta: text("meta").notNull().default("{}"),
    entityId: text("entity_id"),
    /** Accessor of the token that created this one; null for tokens created by root. */
    parentAccessor: text("parent_accessor"),
    /** Vault's num_uses as created (0 = unlimited). */
    numUses: integer("num_uses").notNull().default(0),
    /**
     * Uses left; null = unlimited. Decremented atomically on each use; a token at 0 is
     * spent and never valid again, so "0" can never be mistaken for "unlimited".
     */
    usesLeft: integer("uses_left"),
    /** Seconds; the creation TTL (0 for no expiry). */
    ttl: integer("ttl").notNull(),
    explicitMaxTtl: integer("explicit_max_ttl").notNull().default(0),
    createdAt: integer("created_at").notNull(),
    /** Null when the token never expires. */
    expireAt: integer("expire_at"),
    /** JSON array of CIDR blocks the token may be used from (S25); null = anywhere. */
    boundCidrs: text("bound_cidrs"),
    /** Accessor of the auth mount whose login made the token (S24); null for token-store tokens. */
    authAccessor: text("auth_accessor"),
    /** The path that made the token (`auth/<mount>/login`); null = `auth/token/create`. */
    path: text("path"),
    /** Seconds a renewal may extend the token to, from its creation (0 = the system maximum). */
    maxTtl: integer("max_ttl").notNull().default(0),
    /** Seconds of a periodic token's renewal (0 = not periodic). */
    period: integer("period").notNull().default(0),
  },
  (t) => [
    uniqueIndex("vault_tokens_accessor").on(t.accessor),
    index("vault_tokens_parent").on(t.parentAccessor),
    index("vault_tokens_auth_accessor").on(t.authAccessor),
  ],
);

/** ACL policies in Vault's JSON syntax (S5a). `rules` is our parsed, normalised form. */
export const vaultPolicies = sqliteTable("vault_policies", {
  name: text("name").primaryKey(),
  policy: text("policy").notNull(),
  rules: text("rules").notNull(),
  updatedAt: integer("updated_at").notNull(),
});

/** Identity entities (S5a). */
export const identityEntities = sqliteTable(
  "identity_entities",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    metadata: text("metadata").notNull().default("{}"),
    policies: text("policies").notNull().default("[]"),
    disabled: integer("disabled", { mode: "boolean" }).notNull().default(false),
    ...timestamps(),
  },
  (t) => [uniqueIndex("identity_entities_name").on(t.name)],
);

/** Identity entity aliases (S5a). */
export const identityEntityAliases = sqliteTable(
  "identity_entity_aliases",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    canonicalId: text("canonical_id").notNull(),
    mountAccessor: text("mount_accessor").notNull(),
    metadata: text("metadata").notNull().default("{}"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    uniqueIndex("identity_entity_aliases_mount_name").on(t.mountAccessor, t.name),
    index("identity_entity_aliases_canonical").on(t.canonicalId),
  ],
);

/** Identity groups (S27): `internal` (members set through the API) or `external` (members set by logins). */
export const identityGroups = sqliteTable(
  "identity_groups",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    type: text("type").notNull(),
    /** JSON array of policy names. */
    policies: text("policies").notNull().default("[]"),
    /** JSON object of string metadata. */
    metadata: text("metadata").notNull().default("{}"),
    ...timestamps(),
  },
  (t) => [uniqueIndex("identity_groups_name").on(t.name)],
);

/**
 * Members of identity groups (S27): `member_type` `entity` or `group`; `source` is '' for
 * members set through the API, or the auth mount accessor whose login set an external membership.
 */
export const identityGroupMembers = sqliteTable(
  "identity_group_members",
  {
    groupId: text("group_id").notNull(),
    memberType: text("member_type").notNull(),
    memberId: text("member_id").notNull(),
    source: text("source").notNull().default(""),
  },
  (t) => [
    primaryKey({ columns: [t.groupId, t.memberType, t.memberId] }),
    index("identity_group_members_member").on(t.memberType, t.memberId),
  ],
);

/** Aliases of external groups (S27): the name a groups claim carries, per auth mount accessor. */
export const identityGroupAliases = sqliteTable(
  "identity_group_aliases",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    mountAccessor: text("mount_accessor").notNull(),
    canonicalId: text("canonical_id").notNull(),
    ...timestamps(),
  },
  (t) => [
    uniqueIndex("identity_group_aliases_mount_name").on(t.mountAccessor, t.name),
    uniqueIndex("identity_group_aliases_canonical").on(t.canonicalId),
  ],
);

/** Auth methods enabled through sys/auth (S24); `path` is below `auth/`, without a trailing slash. */
export const authMounts = sqliteTable(
  "auth_mounts",
  {
    path: text("path").primaryKey(),
    /** `jwt` or `oidc` (one backend under either name). */
    type: text("type").notNull(),
    /** `auth_<type>_<8 hex>`. */
    accessor: text("accessor").notNull(),
    description: text("description").notNull().default(""),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("auth_mounts_accessor").on(t.accessor)],
);

/** A JWT/OIDC mount's configuration (S25), keyed by the mount's accessor. */
export const authJwtConfigs = sqliteTable("auth_jwt_configs", {
  accessor: text("accessor").primaryKey(),
  /** JSON of the configuration without the client secret. */
  config: text("config").notNull(),
  /** `oidc_client_secret` encrypted under KEYWAY_KEK (B2), context `auth-jwt:<accessor>`; null when unset. */
  oidcClientSecretEncrypted: text("oidc_client_secret_encrypted"),
  updatedAt: integer("updated_at").notNull(),
});

/** A JWT/OIDC mount's roles (S25); `role` is the stored role as JSON. */
export const authJwtRoles = sqliteTable(
  "auth_jwt_roles",
  {
    accessor: text("accessor").notNull(),
    name: text("name").notNull(),
    role: text("role").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accessor, t.name] })],
);

/** Small key/value settings of the secrets service (e.g. the token store accessor). */
export const vaultSettings = sqliteTable("vault_settings", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});

/** Per-mount lease TTLs tuned through sys/mounts/:mount/tune (S1); absent row = 768h/768h. */
export const sshMountTune = sqliteTable("ssh_mount_tune", {
  mount: text("mount").primaryKey(),
  defaultLeaseTtl: integer("default_lease_ttl").notNull(),
  maxLeaseTtl: integer("max_lease_ttl").notNull(),
});

// ---------------------------------------------------------------------------
// SSH secrets engine: roles, zero-address list, CA, legacy host keys
// ---------------------------------------------------------------------------

/** Roles (S12). `config` is the full normalised role as JSON. */
export const sshRoles = sqliteTable(
  "ssh_roles",
  {
    mount: text("mount").notNull(),
    name: text("name").notNull(),
    keyType: text("key_type").notNull(),
    config: text("config").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.mount, t.name] })],
);

/**
 * Index of OTP roles' CIDR ranges for `lookup` (S14): one row per CIDR block, with the
 * range's first and last address as fixed-width hex (32 digits, IPv4 mapped into
 * IPv6) so string comparison orders addresses.
 */
export const sshRoleCidrs = sqliteTable(
  "ssh_role_cidrs",
  {
    mount: text("mount").notNull(),
    role: text("role").notNull(),
    /** 1 for cidr_list, 0 for exclude_cidr_list. */
    included: integer("included", { mode: "boolean" }).notNull(),
    rangeStart: text("range_start").notNull(),
    rangeEnd: text("range_end").notNull(),
  },
  (t) => [
    index("ssh_role_cidrs_lookup").on(t.mount, t.rangeStart, t.rangeEnd),
    index("ssh_role_cidrs_role").on(t.mount, t.role),
  ],
);

/** Zero-address roles per mount. `roles` is a JSON array. */
export const sshZeroAddress = sqliteTable("ssh_zeroaddress", {
  mount: text("mount").primaryKey(),
  roles: text("roles").notNull(),
});

/** Legacy dynamic host keys, only filled by data migrated from older deployments (S15). */
export const sshLegacyHostKeys = sqliteTable(
  "ssh_legacy_host_keys",
  {
    mount: text("mount").notNull(),
    name: text("name").notNull(),
    key: text("key").notNull().default(""),
    createdAt: integer("created_at").notNull().default(sql`0`),
  },
  (t) => [primaryKey({ columns: [t.mount, t.name] })],
);

// ---------------------------------------------------------------------------
// SSH issuers (decisions S20, S21; migration 0009): a mount's CA key pairs
// ---------------------------------------------------------------------------

/**
 * The CA key pairs ("issuers") of each mount, OpenBao's issuer model (S20). Migration 0009
 * turned each mount's former single CA (`ssh_ca`) into its default issuer. `public_key` is
 * kept verbatim as written (served byte for byte by `public_key`); the private key is
 * AES-GCM encrypted under KEYWAY_KEK with the context `ssh-ca:<mount>` (B2), the context
 * the former table used, so migrated ciphertexts stay readable as they are.
 */
export const sshIssuers = sqliteTable(
  "ssh_issuers",
  {
    /** UUID, OpenBao's `issuer_id`. */
    id: text("id").primaryKey(),
    mount: text("mount").notNull(),
    /** Optional unique name (OpenBao's grammar, never `default`); null when unnamed. */
    name: text("name"),
    publicKey: text("public_key").notNull(),
    privateKeyEncrypted: text("private_key_encrypted").notNull(),
    /** SSH key type name of the CA key (`ssh-rsa`, `ssh-ed25519`, `ecdsa-sha2-nistp256`, …). */
    keyType: text("key_type").notNull(),
    /** S21: a trusted issuer is in `trusted_keys`/`known_hosts`; an untrusted one is retired. */
    trusted: integer("trusted", { mode: "boolean" }).notNull().default(true),
    ...timestamps(),
  },
  (t) => [
    // SQLite treats NULLs as distinct, so any number of unnamed issuers may share a mount.
    uniqueIndex("ssh_issuers_mount_name").on(t.mount, t.name),
    index("ssh_issuers_mount_created").on(t.mount, t.createdAt),
  ],
);

/** OpenBao's `config/issuers` per mount: which issuer is the default (null: none). No row = none. */
export const sshIssuerConfig = sqliteTable("ssh_issuer_config", {
  mount: text("mount").primaryKey(),
  defaultIssuerId: text("default_issuer_id"),
});

// ---------------------------------------------------------------------------
// SSH certificate inventory, revocation and KRL (decisions S22, S23; migration 0010)
// ---------------------------------------------------------------------------

/**
 * S22: certificates signed or issued through a role with `store_certificates`; never a
 * private key. `serial` is 16-digit lower-case hex, unique per issuer (the primary key).
 * Times are seconds since the epoch, as in the certificate.
 */
export const sshCertificates = sqliteTable(
  "ssh_certificates",
  {
    mount: text("mount").notNull(),
    issuerId: text("issuer_id").notNull(),
    serial: text("serial").notNull(),
    role: text("role").notNull(),
    /** `user` or `host`. */
    certType: text("cert_type").notNull(),
    keyId: text("key_id").notNull(),
    /** JSON array of strings. */
    principals: text("principals").notNull(),
    validAfter: integer("valid_after").notNull(),
    validBefore: integer("valid_before").notNull(),
    /** `SHA256:…` of the subject key, as `ssh-keygen -l` prints it. */
    publicKeyFingerprint: text("public_key_fingerprint").notNull(),
    requesterDisplayName: text("requester_display_name").notNull(),
    requesterAccessor: text("requester_accessor").notNull(),
    requesterEntityId: text("requester_entity_id"),
    clientAddress: text("client_address"),
    /** Milliseconds since the epoch. */
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.issuerId, t.serial] }),
    index("ssh_certificates_mount_serial").on(t.mount, t.serial),
    index("ssh_certificates_mount_valid_before").on(t.mount, t.validBefore),
  ],
);

/**
 * S23: revocations of a mount. `kind` is `serial` (issuer_id + serial), `key_id`
 * (issuer_id, or null for every issuer of the mount) or `public_key` (the plain key and
 * its SHA256 fingerprint). `expires_at` (seconds) is when the entry may leave the KRL.
 */
export const sshRevocations = sqliteTable(
  "ssh_revocations",
  {
    id: text("id").primaryKey(),
    mount: text("mount").notNull(),
    kind: text("kind").notNull(),
    issuerId: text("issuer_id"),
    serial: text("serial"),
    keyId: text("key_id"),
    /** `type base64` of the plain key. */
    publicKey: text("public_key"),
    publicKeyFingerprint: text("public_key_fingerprint"),
    expiresAt: integer("expires_at"),
    requesterDisplayName: text("requester_display_name").notNull(),
    requesterAccessor: text("requester_accessor").notNull(),
    /** Milliseconds since the epoch. */
    createdAt: integer("created_at").notNull(),
    /**
     * B17: SHA256 fingerprint of the CA key a serial or key-id revocation applies to; NULL
     * when it names no issuer or is not back-filled yet, '' when its issuer was gone first.
     */
    caKeyFingerprint: text("ca_key_fingerprint"),
  },
  (t) => [
    index("ssh_revocations_mount_created").on(t.mount, t.createdAt),
    index("ssh_revocations_mount_ca_key").on(t.mount, t.caKeyFingerprint),
  ],
);

/**
 * S23: each mount's KRL. `krl_version` grows with every change (in the same batch as the
 * change); `built_version` is the version whose KRL is in R2 (`ssh-krl/<mount>/<version>`).
 * `changed_at` (seconds) is the KRL's generated_date, so every build of a version is the
 * same bytes.
 */
export const sshKrlState = sqliteTable("ssh_krl_state", {
  mount: text("mount").primaryKey(),
  krlVersion: integer("krl_version").notNull(),
  changedAt: integer("changed_at").notNull(),
  builtVersion: integer("built_version").notNull().default(0),
  /** The ids of the issuers the built KRL covers: a change of issuers is a change of the KRL. */
  builtIssuers: text("built_issuers").notNull().default(""),
  /** B17: why the last rebuild failed; NULL once one succeeds (the last good KRL is served meanwhile). */
  rebuildError: text("rebuild_error"),
  /** B17: failed rebuild attempts in a row (the retry's backoff). */
  rebuildAttempts: integer("rebuild_attempts").notNull().default(0),
});
