/**
 * Every D1 table of Keyway. Column names are explicit snake_case; timestamps are
 * integer milliseconds since the epoch unless a name says otherwise. Secrets are never
 * stored in the clear (decision B2): tokens as keyed hashes, private keys encrypted.
 * docs/storage-schema.md describes each table.
 */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

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
  },
  (t) => [uniqueIndex("vault_tokens_accessor").on(t.accessor), index("vault_tokens_parent").on(t.parentAccessor)],
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
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
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

/** Zero-address roles per mount (seed rows 5–7). `roles` is a JSON array. */
export const sshZeroAddress = sqliteTable("ssh_zeroaddress", {
  mount: text("mount").primaryKey(),
  roles: text("roles").notNull(),
});

/** The CA key pair of each mount (S9). The private key is AES-GCM encrypted (B2). */
export const sshCa = sqliteTable("ssh_ca", {
  mount: text("mount").primaryKey(),
  publicKey: text("public_key").notNull(),
  privateKeyEncrypted: text("private_key_encrypted").notNull(),
  keyType: text("key_type").notNull(),
  createdAt: integer("created_at").notNull(),
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
