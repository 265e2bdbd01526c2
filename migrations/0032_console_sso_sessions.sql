-- Console sessions opened by single sign-on (decision N16). A token session keeps
-- `token_hash` (N14) and no SSO columns; an SSO session has no token: it keeps the user,
-- the organization it is scoped to, the SSO configuration's generation it was opened
-- under and when the provider sign-in happened (ms). SQLite cannot drop NOT NULL from
-- `token_hash` in place, so the table is rebuilt with its rows.
CREATE TABLE `console_sessions_new` (
	`id_hash` text PRIMARY KEY NOT NULL,
	`token_hash` text,
	`user_id` text,
	`sso_organization` text,
	`sso_generation` integer,
	`sso_signed_in_at` integer,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `console_sessions_new` (`id_hash`, `token_hash`, `created_at`, `expires_at`)
	SELECT `id_hash`, `token_hash`, `created_at`, `expires_at` FROM `console_sessions`;
--> statement-breakpoint
DROP TABLE `console_sessions`;
--> statement-breakpoint
ALTER TABLE `console_sessions_new` RENAME TO `console_sessions`;
--> statement-breakpoint
CREATE INDEX `console_sessions_expires` ON `console_sessions` (`expires_at`);
--> statement-breakpoint
CREATE INDEX `console_sessions_sso` ON `console_sessions` (`sso_organization`, `user_id`);
