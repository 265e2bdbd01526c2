-- The execution plane (decisions N17–N20): agent tokens, agents, jobs, encrypted run data.
-- N17: an agent pool holds many agent tokens (kind 'agent', subject_id = the pool id), so the
-- one-per-subject rule covers team and organization tokens only.
DROP INDEX `nocode_tokens_one_per_team_or_org`;--> statement-breakpoint
CREATE UNIQUE INDEX `nocode_tokens_one_per_team_or_org` ON `nocode_tokens` (`kind`,`subject_id`) WHERE kind IN ('team', 'organization');--> statement-breakpoint
CREATE TABLE `agents` (
	`id` text PRIMARY KEY NOT NULL,
	`pool_id` text NOT NULL,
	`organization` text NOT NULL,
	`token_id` text NOT NULL,
	`name` text NOT NULL,
	`version` text NOT NULL,
	`engine_name` text NOT NULL,
	`engine_version` text NOT NULL,
	`ip_address` text,
	`status` text NOT NULL,
	`last_ping_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);--> statement-breakpoint
CREATE INDEX `agents_pool` ON `agents` (`pool_id`,`last_ping_at`);--> statement-breakpoint
CREATE INDEX `agents_token` ON `agents` (`token_id`);--> statement-breakpoint
CREATE TABLE `agent_jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`run_id` text NOT NULL,
	`phase` text NOT NULL,
	`pool_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`organization` text NOT NULL,
	`engine_constraint` text NOT NULL,
	`status` text NOT NULL,
	`agent_id` text,
	`token_hash` text,
	`registry_token_hash` text,
	`started_at` integer,
	`expires_at` integer,
	`finished_at` integer,
	`message` text,
	`log_length` integer DEFAULT 0 NOT NULL,
	`plan_file_object_id` text,
	`json_plan_object_id` text,
	`lock_file_object_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);--> statement-breakpoint
CREATE UNIQUE INDEX `agent_jobs_run_phase` ON `agent_jobs` (`run_id`,`phase`);--> statement-breakpoint
CREATE UNIQUE INDEX `agent_jobs_token` ON `agent_jobs` (`token_hash`);--> statement-breakpoint
CREATE UNIQUE INDEX `agent_jobs_registry_token` ON `agent_jobs` (`registry_token_hash`);--> statement-breakpoint
CREATE INDEX `agent_jobs_pool_status` ON `agent_jobs` (`pool_id`,`status`);--> statement-breakpoint
CREATE INDEX `agent_jobs_agent` ON `agent_jobs` (`agent_id`,`status`);--> statement-breakpoint
CREATE TABLE `run_data_objects` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`r2_key` text NOT NULL,
	`data_key_encrypted` text NOT NULL,
	`size` integer NOT NULL,
	`created_at` integer NOT NULL
);--> statement-breakpoint
CREATE TABLE `agent_job_log_chunks` (
	`job_id` text NOT NULL,
	`offset` integer NOT NULL,
	`length` integer NOT NULL,
	`object_id` text NOT NULL,
	PRIMARY KEY(`job_id`, `offset`)
);--> statement-breakpoint
ALTER TABLE `runs` ADD `execution_mode` text DEFAULT 'remote' NOT NULL;--> statement-breakpoint
ALTER TABLE `runs` ADD `execution_details` text;--> statement-breakpoint
ALTER TABLE `runs` ADD `status_reason` text;--> statement-breakpoint
ALTER TABLE `runs` ADD `agent_inputs` text;--> statement-breakpoint
ALTER TABLE `state_versions` ADD `kind` text DEFAULT 'structural' NOT NULL;--> statement-breakpoint
ALTER TABLE `state_versions` ADD `lineage` text;--> statement-breakpoint
ALTER TABLE `state_versions` ADD `md5` text;--> statement-breakpoint
ALTER TABLE `state_versions` ADD `size` integer;--> statement-breakpoint
ALTER TABLE `state_versions` ADD `object_id` text;
--> statement-breakpoint
-- N20: an agent's apply may record more than one state (an interrupted apply, then the final one).
DROP INDEX `state_versions_run`;--> statement-breakpoint
CREATE INDEX `state_versions_run` ON `state_versions` (`run_id`);
