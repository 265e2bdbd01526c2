-- An organization's single sign-on configuration (decision N16), one row per organization
-- that has ever written one (GET answers the defaults without a row).
-- `client_secret_encrypted` is the client secret encrypted under KEYWAY_KEK (B2), context
-- `sso-client-secret:<organization>`, listed for B11's rewrap (src/db/secrets-at-rest.ts).
-- `discovered` is the JSON of the provider's endpoints, read from its discovery document
-- when the configuration was last enabled (or its issuer changed while enabled).
-- `generation` grows by one whenever `issuer`, `client_id` or `enabled` changes: an SSO
-- session records the generation it was opened under and ends when it differs.
CREATE TABLE `sso_configurations` (
	`organization` text PRIMARY KEY NOT NULL,
	`enabled` integer DEFAULT false NOT NULL,
	`issuer` text,
	`client_id` text,
	`client_secret_encrypted` text,
	`groups_claim` text,
	`auto_provision` integer DEFAULT false NOT NULL,
	`default_team` text,
	`team_sync` integer DEFAULT false NOT NULL,
	`discovered` text,
	`generation` integer DEFAULT 1 NOT NULL,
	`updated_at` integer NOT NULL
);
