-- Decisions S22 and S23: the opt-in certificate inventory, revocations, and the state of
-- each mount's OpenSSH KRL. Issuer ids are the ids of `ssh_issuers` (S20); they are not
-- foreign keys, so deleting an issuer leaves its records to expire and be tidied.
CREATE TABLE `ssh_certificates` (
	`mount` text NOT NULL,
	`issuer_id` text NOT NULL,
	`serial` text NOT NULL,
	`role` text NOT NULL,
	`cert_type` text NOT NULL,
	`key_id` text NOT NULL,
	`principals` text NOT NULL,
	`valid_after` integer NOT NULL,
	`valid_before` integer NOT NULL,
	`public_key_fingerprint` text NOT NULL,
	`requester_display_name` text NOT NULL,
	`requester_accessor` text NOT NULL,
	`requester_entity_id` text,
	`client_address` text,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`issuer_id`, `serial`)
);
--> statement-breakpoint
CREATE INDEX `ssh_certificates_mount_serial` ON `ssh_certificates` (`mount`,`serial`);--> statement-breakpoint
CREATE INDEX `ssh_certificates_mount_valid_before` ON `ssh_certificates` (`mount`,`valid_before`);--> statement-breakpoint
CREATE TABLE `ssh_revocations` (
	`id` text PRIMARY KEY NOT NULL,
	`mount` text NOT NULL,
	`kind` text NOT NULL,
	`issuer_id` text,
	`serial` text,
	`key_id` text,
	`public_key` text,
	`public_key_fingerprint` text,
	`expires_at` integer,
	`requester_display_name` text NOT NULL,
	`requester_accessor` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `ssh_revocations_mount_created` ON `ssh_revocations` (`mount`,`created_at`);--> statement-breakpoint
CREATE TABLE `ssh_krl_state` (
	`mount` text PRIMARY KEY NOT NULL,
	`krl_version` integer NOT NULL,
	`changed_at` integer NOT NULL,
	`built_version` integer DEFAULT 0 NOT NULL,
	`built_issuers` text DEFAULT '' NOT NULL
);
