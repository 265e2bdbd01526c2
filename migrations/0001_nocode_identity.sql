CREATE TABLE `agent_pools` (
	`id` text PRIMARY KEY NOT NULL,
	`organization` text NOT NULL,
	`name` text NOT NULL,
	`organization_scoped` integer DEFAULT true NOT NULL,
	`allowed_workspaces` text DEFAULT '[]' NOT NULL,
	`allowed_projects` text DEFAULT '[]' NOT NULL,
	`excluded_workspaces` text DEFAULT '[]' NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `agent_pools_organization_name` ON `agent_pools` (`organization`,`name`);--> statement-breakpoint
CREATE TABLE `nocode_tokens` (
	`hash` text PRIMARY KEY NOT NULL,
	`id` text NOT NULL,
	`kind` text NOT NULL,
	`subject_id` text NOT NULL,
	`organization` text,
	`description` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `nocode_tokens_id` ON `nocode_tokens` (`id`);--> statement-breakpoint
CREATE INDEX `nocode_tokens_subject` ON `nocode_tokens` (`kind`,`subject_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `nocode_tokens_one_per_team_or_org` ON `nocode_tokens` (`kind`,`subject_id`) WHERE kind <> 'user';--> statement-breakpoint
CREATE TABLE `nocode_users` (
	`id` text PRIMARY KEY NOT NULL,
	`username` text NOT NULL,
	`email` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `nocode_users_username` ON `nocode_users` (`username`);--> statement-breakpoint
CREATE TABLE `organizations` (
	`name` text PRIMARY KEY NOT NULL,
	`email` text NOT NULL,
	`default_project_id` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `projects` (
	`id` text PRIMARY KEY NOT NULL,
	`organization` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `projects_organization_name` ON `projects` (`organization`,`name`);--> statement-breakpoint
CREATE TABLE `team_memberships` (
	`team_id` text NOT NULL,
	`user_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`team_id`, `user_id`)
);
--> statement-breakpoint
CREATE INDEX `team_memberships_user` ON `team_memberships` (`user_id`);--> statement-breakpoint
CREATE TABLE `teams` (
	`id` text PRIMARY KEY NOT NULL,
	`organization` text NOT NULL,
	`name` text NOT NULL,
	`manage_workspaces` integer DEFAULT false NOT NULL,
	`manage_projects` integer DEFAULT false NOT NULL,
	`manage_modules` integer DEFAULT false NOT NULL,
	`manage_agent_pools` integer DEFAULT false NOT NULL,
	`read_workspaces` integer DEFAULT false NOT NULL,
	`read_projects` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `teams_organization_name` ON `teams` (`organization`,`name`);--> statement-breakpoint
CREATE TABLE `terraform_versions` (
	`id` text PRIMARY KEY NOT NULL,
	`version` text NOT NULL,
	`url` text,
	`sha` text,
	`official` integer DEFAULT true NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`beta` integer DEFAULT false NOT NULL,
	`deprecated` integer DEFAULT false NOT NULL,
	`deprecated_reason` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `terraform_versions_version` ON `terraform_versions` (`version`);