CREATE TABLE `registry_module_versions` (
	`id` text PRIMARY KEY NOT NULL,
	`module_id` text NOT NULL,
	`version` text NOT NULL,
	`commit_sha` text,
	`status` text NOT NULL,
	`error` text,
	`tarball_key` text,
	`tarball_bytes` integer,
	`summary` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`uploaded_at` integer,
	`ingested_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `registry_module_versions_module_version` ON `registry_module_versions` (`module_id`,`version`);--> statement-breakpoint
CREATE TABLE `registry_modules` (
	`id` text PRIMARY KEY NOT NULL,
	`organization` text NOT NULL,
	`registry_name` text NOT NULL,
	`namespace` text NOT NULL,
	`name` text NOT NULL,
	`provider` text NOT NULL,
	`no_code` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `registry_modules_address` ON `registry_modules` (`organization`,`registry_name`,`namespace`,`name`,`provider`);--> statement-breakpoint
CREATE TABLE `registry_upload_links` (
	`token_hash` text PRIMARY KEY NOT NULL,
	`version_id` text NOT NULL,
	`expires_at` integer NOT NULL,
	`used_at` integer,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `registry_upload_links_version` ON `registry_upload_links` (`version_id`);