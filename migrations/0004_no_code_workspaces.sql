CREATE TABLE `no_code_modules` (
	`id` text PRIMARY KEY NOT NULL,
	`organization` text NOT NULL,
	`registry_module_id` text NOT NULL,
	`enabled` integer DEFAULT false NOT NULL,
	`version_pin` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `no_code_modules_registry_module` ON `no_code_modules` (`registry_module_id`);--> statement-breakpoint
CREATE INDEX `no_code_modules_organization` ON `no_code_modules` (`organization`);--> statement-breakpoint
CREATE TABLE `runs` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`organization` text NOT NULL,
	`kind` text NOT NULL,
	`no_code_module_id` text,
	`module_version_id` text NOT NULL,
	`module_version` text NOT NULL,
	`configuration` text NOT NULL,
	`configuration_version_id` text NOT NULL,
	`engine_version` text NOT NULL,
	`plan_id` text NOT NULL,
	`plan` text,
	`status` text NOT NULL,
	`status_timestamps` text DEFAULT '{}' NOT NULL,
	`auto_apply` integer DEFAULT false NOT NULL,
	`message` text,
	`error` text,
	`state_version_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `runs_plan_id` ON `runs` (`plan_id`);--> statement-breakpoint
CREATE INDEX `runs_workspace_created` ON `runs` (`workspace_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `state_versions` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`run_id` text NOT NULL,
	`serial` integer NOT NULL,
	`resources` text NOT NULL,
	`outputs` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `state_versions_run` ON `state_versions` (`run_id`);--> statement-breakpoint
CREATE INDEX `state_versions_workspace` ON `state_versions` (`workspace_id`,`serial`);--> statement-breakpoint
CREATE TABLE `variable_options` (
	`id` text PRIMARY KEY NOT NULL,
	`no_code_module_id` text NOT NULL,
	`variable_name` text NOT NULL,
	`variable_type` text NOT NULL,
	`options` text DEFAULT '[]' NOT NULL,
	`position` integer NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `variable_options_module_variable` ON `variable_options` (`no_code_module_id`,`variable_name`);--> statement-breakpoint
CREATE TABLE `workspace_vars` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`key` text NOT NULL,
	`category` text NOT NULL,
	`value` text,
	`value_encrypted` text,
	`sensitive_hash` text,
	`description` text,
	`hcl` integer DEFAULT false NOT NULL,
	`sensitive` integer DEFAULT false NOT NULL,
	`version_id` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `workspace_vars_workspace_category_key` ON `workspace_vars` (`workspace_id`,`category`,`key`);--> statement-breakpoint
CREATE TABLE `workspaces` (
	`id` text PRIMARY KEY NOT NULL,
	`organization` text NOT NULL,
	`name` text NOT NULL,
	`project_id` text NOT NULL,
	`description` text,
	`auto_apply` integer DEFAULT false NOT NULL,
	`execution_mode` text DEFAULT 'remote' NOT NULL,
	`execution_mode_set` integer DEFAULT false NOT NULL,
	`agent_pool_id` text,
	`engine_version` text NOT NULL,
	`source` text DEFAULT 'tfe-module' NOT NULL,
	`source_name` text,
	`source_url` text,
	`source_module_id` text,
	`no_code_module_id` text,
	`no_code_module_version_id` text,
	`no_code_version_id` text,
	`no_code_version` text,
	`option_set_fingerprint` text,
	`current_configuration_version_id` text,
	`current_run_id` text,
	`latest_run_id` text,
	`current_state_version_id` text,
	`resource_count` integer DEFAULT 0 NOT NULL,
	`latest_change_at` integer,
	`locked` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `workspaces_organization_name` ON `workspaces` (`organization`,`name`);--> statement-breakpoint
CREATE INDEX `workspaces_no_code_module` ON `workspaces` (`no_code_module_id`);