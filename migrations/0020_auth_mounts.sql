-- Auth methods enabled through sys/auth (decision S24) and the JWT/OIDC method's
-- configuration and roles (S25). A mount's `path` is below `auth/`, without the trailing
-- slash (`jwt`, `ci/github`); its `accessor` (`auth_jwt_<8 hex>`/`auth_oidc_<8 hex>`) names it in
-- entity and group aliases and in identity templates. Config and roles are keyed by the
-- accessor, so disabling a mount and enabling it again starts from nothing.
CREATE TABLE `auth_mounts` (
	`path` text PRIMARY KEY NOT NULL,
	`type` text NOT NULL,
	`accessor` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `auth_mounts_accessor` ON `auth_mounts` (`accessor`);
--> statement-breakpoint
-- `config` is the mount's configuration as JSON without the client secret, which is kept
-- only encrypted under KEYWAY_KEK (B2), context `auth-jwt:<accessor>`.
CREATE TABLE `auth_jwt_configs` (
	`accessor` text PRIMARY KEY NOT NULL,
	`config` text NOT NULL,
	`oidc_client_secret_encrypted` text,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `auth_jwt_roles` (
	`accessor` text NOT NULL,
	`name` text NOT NULL,
	`role` text NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`accessor`, `name`)
);
