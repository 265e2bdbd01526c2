-- Identity groups (decision S27). `type` is `internal` or `external`; `policies` and
-- `metadata` are JSON. Members are rows of `identity_group_members`: an entity or a group
-- (internal groups, set through the API, `source` = ''), or an entity that a login put
-- into an external group (`source` = the auth mount's accessor whose groups claim named
-- the group's alias). Policies are read from here on every token resolution.
CREATE TABLE `identity_groups` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`type` text NOT NULL,
	`policies` text DEFAULT '[]' NOT NULL,
	`metadata` text DEFAULT '{}' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `identity_groups_name` ON `identity_groups` (`name`);
--> statement-breakpoint
CREATE TABLE `identity_group_members` (
	`group_id` text NOT NULL,
	`member_type` text NOT NULL,
	`member_id` text NOT NULL,
	`source` text DEFAULT '' NOT NULL,
	PRIMARY KEY(`group_id`, `member_type`, `member_id`)
);
--> statement-breakpoint
CREATE INDEX `identity_group_members_member` ON `identity_group_members` (`member_type`, `member_id`);
--> statement-breakpoint
CREATE TABLE `identity_group_aliases` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`mount_accessor` text NOT NULL,
	`canonical_id` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `identity_group_aliases_mount_name` ON `identity_group_aliases` (`mount_accessor`, `name`);
--> statement-breakpoint
CREATE UNIQUE INDEX `identity_group_aliases_canonical` ON `identity_group_aliases` (`canonical_id`);
