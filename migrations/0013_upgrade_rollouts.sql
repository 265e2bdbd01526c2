-- Fleet upgrades (decision N15, issue 21): a rollout moves the workspaces of a no-code
-- module to the version it targets, in batches driven by the provisioning queue.
-- Every status change is a conditional UPDATE (… WHERE status = ?), so a redelivered or
-- duplicated queue message finds the row already moved on and does nothing.
-- The partial unique index allows one active rollout per no-code module (a second → 409).
CREATE TABLE `upgrade_rollouts` (
	`id` text PRIMARY KEY NOT NULL,
	`organization` text NOT NULL,
	`no_code_module_id` text NOT NULL,
	`target_version_id` text NOT NULL,
	`target_version` text NOT NULL,
	`batch_size` integer NOT NULL,
	`auto_confirm` text NOT NULL,
	`max_failures` integer NOT NULL,
	`status` text NOT NULL,
	`reason` text,
	`current_batch` integer NOT NULL,
	`created_by` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `upgrade_rollouts_one_active` ON `upgrade_rollouts` (`no_code_module_id`) WHERE `status` IN ('pending', 'running', 'waiting-confirmation', 'paused');
--> statement-breakpoint
CREATE INDEX `upgrade_rollouts_module` ON `upgrade_rollouts` (`no_code_module_id`, `created_at`);
--> statement-breakpoint
-- One item per workspace. `baseline_run_id` and `baseline_vars` record what the workspace
-- looked like when the rollout began (its latest run; a digest of its vars' ids and update
-- times): a workspace that differs when its batch comes was changed by someone else and
-- is skipped, never overwritten.
CREATE TABLE `upgrade_rollout_items` (
	`rollout_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`position` integer NOT NULL,
	`batch` integer NOT NULL,
	`status` text NOT NULL,
	`run_id` text,
	`reason` text,
	`additions` integer,
	`changes` integer,
	`destructions` integer,
	`baseline_run_id` text,
	`baseline_vars` text NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`rollout_id`, `workspace_id`)
);
--> statement-breakpoint
CREATE INDEX `upgrade_rollout_items_workspace` ON `upgrade_rollout_items` (`workspace_id`, `status`);
--> statement-breakpoint
CREATE INDEX `upgrade_rollout_items_run` ON `upgrade_rollout_items` (`run_id`);
