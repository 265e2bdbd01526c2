-- Decisions S20/S21: a mount holds any number of CA key pairs ("issuers"), one of them the
-- default. Each mount's existing CA becomes its default issuer, unnamed and trusted, with
-- the same public key text and the same ciphertext (the KEK context `ssh-ca:<mount>` is
-- unchanged), so public_key, config/ca and sign answer exactly as before.
CREATE TABLE `ssh_issuers` (
	`id` text PRIMARY KEY NOT NULL,
	`mount` text NOT NULL,
	`name` text,
	`public_key` text NOT NULL,
	`private_key_encrypted` text NOT NULL,
	`key_type` text NOT NULL,
	`trusted` integer DEFAULT true NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ssh_issuers_mount_name` ON `ssh_issuers` (`mount`,`name`);--> statement-breakpoint
CREATE INDEX `ssh_issuers_mount_created` ON `ssh_issuers` (`mount`,`created_at`);--> statement-breakpoint
CREATE TABLE `ssh_issuer_config` (
	`mount` text PRIMARY KEY NOT NULL,
	`default_issuer_id` text
);
--> statement-breakpoint
-- A random (version 4) UUID per migrated CA, in the lower-case form OpenBao uses.
INSERT INTO `ssh_issuers` (`id`, `mount`, `name`, `public_key`, `private_key_encrypted`, `key_type`, `trusted`, `created_at`, `updated_at`)
SELECT
	lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-'
		|| substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6))),
	`mount`, NULL, `public_key`, `private_key_encrypted`, `key_type`, 1, `created_at`, `created_at`
FROM `ssh_ca`;
--> statement-breakpoint
INSERT INTO `ssh_issuer_config` (`mount`, `default_issuer_id`) SELECT `mount`, `id` FROM `ssh_issuers`;
--> statement-breakpoint
DROP TABLE `ssh_ca`;
