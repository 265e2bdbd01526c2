-- N19's migration of existing agent workspaces: their runs were planned by the built-in
-- planner, so they are marked `agent` runs and every one that has not ended is discarded
-- (pending variable changes of an upgrade run go with it, as a discard drops them). Their
-- structural state versions stay listed, are never downloaded and never given to an agent
-- (state_versions.kind = 'structural'), so the next run starts with no state. Idempotent.
UPDATE `runs` SET `execution_mode` = 'agent'
WHERE `workspace_id` IN (SELECT `id` FROM `workspaces` WHERE `execution_mode` = 'agent');--> statement-breakpoint
UPDATE `runs` SET
	`status` = 'discarded',
	`status_reason` = 'planned by the built-in planner before agents ran this workspace',
	`status_timestamps` = json_set(`status_timestamps`, '$."discarded-at"', strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
	`configuration` = json_remove(`configuration`, '$.varChanges'),
	`updated_at` = CAST(strftime('%s', 'now') AS INTEGER) * 1000
WHERE `execution_mode` = 'agent'
	AND `status` IN ('pending', 'plan_queued', 'planning', 'planned', 'confirmed', 'apply_queued', 'applying')
	AND NOT EXISTS (SELECT 1 FROM `agent_jobs` WHERE `agent_jobs`.`run_id` = `runs`.`id`);
