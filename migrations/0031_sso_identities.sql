-- Provider identities linked to no-code users (decision N16): (issuer, `sub`) per
-- organization, written on the first sign-in that links them, never the email alone.
CREATE TABLE `sso_identities` (
	`organization` text NOT NULL,
	`issuer` text NOT NULL,
	`subject` text NOT NULL,
	`user_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`organization`, `issuer`, `subject`)
);
--> statement-breakpoint
CREATE INDEX `sso_identities_user` ON `sso_identities` (`user_id`);
