CREATE TABLE `identity_entities` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`metadata` text DEFAULT '{}' NOT NULL,
	`policies` text DEFAULT '[]' NOT NULL,
	`disabled` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `identity_entities_name` ON `identity_entities` (`name`);--> statement-breakpoint
CREATE TABLE `identity_entity_aliases` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`canonical_id` text NOT NULL,
	`mount_accessor` text NOT NULL,
	`metadata` text DEFAULT '{}' NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `identity_entity_aliases_mount_name` ON `identity_entity_aliases` (`mount_accessor`,`name`);--> statement-breakpoint
CREATE INDEX `identity_entity_aliases_canonical` ON `identity_entity_aliases` (`canonical_id`);--> statement-breakpoint
CREATE TABLE `ssh_ca` (
	`mount` text PRIMARY KEY NOT NULL,
	`public_key` text NOT NULL,
	`private_key_encrypted` text NOT NULL,
	`key_type` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `ssh_legacy_host_keys` (
	`mount` text NOT NULL,
	`name` text NOT NULL,
	`key` text DEFAULT '' NOT NULL,
	`created_at` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`mount`, `name`)
);
--> statement-breakpoint
CREATE TABLE `ssh_mount_tune` (
	`mount` text PRIMARY KEY NOT NULL,
	`default_lease_ttl` integer NOT NULL,
	`max_lease_ttl` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `ssh_role_cidrs` (
	`mount` text NOT NULL,
	`role` text NOT NULL,
	`included` integer NOT NULL,
	`range_start` text NOT NULL,
	`range_end` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `ssh_role_cidrs_lookup` ON `ssh_role_cidrs` (`mount`,`range_start`,`range_end`);--> statement-breakpoint
CREATE INDEX `ssh_role_cidrs_role` ON `ssh_role_cidrs` (`mount`,`role`);--> statement-breakpoint
CREATE TABLE `ssh_roles` (
	`mount` text NOT NULL,
	`name` text NOT NULL,
	`key_type` text NOT NULL,
	`config` text NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`mount`, `name`)
);
--> statement-breakpoint
CREATE TABLE `ssh_zeroaddress` (
	`mount` text PRIMARY KEY NOT NULL,
	`roles` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `vault_policies` (
	`name` text PRIMARY KEY NOT NULL,
	`policy` text NOT NULL,
	`rules` text NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `vault_settings` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `vault_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`accessor` text NOT NULL,
	`policies` text NOT NULL,
	`display_name` text NOT NULL,
	`meta` text DEFAULT '{}' NOT NULL,
	`entity_id` text,
	`parent_accessor` text,
	`num_uses` integer DEFAULT 0 NOT NULL,
	`uses_left` integer,
	`ttl` integer NOT NULL,
	`explicit_max_ttl` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`expire_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `vault_tokens_accessor` ON `vault_tokens` (`accessor`);--> statement-breakpoint
CREATE INDEX `vault_tokens_parent` ON `vault_tokens` (`parent_accessor`);