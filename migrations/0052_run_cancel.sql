-- N19a cancel: when a cancel of a running agent run was first asked (force-cancel is allowed
-- KEYWAY_FORCE_CANCEL_AFTER_SECONDS later), and when a job was force-canceled (its token then
-- serves only the state upload).
ALTER TABLE `runs` ADD `cancel_requested_at` integer;--> statement-breakpoint
ALTER TABLE `agent_jobs` ADD `force_canceled_at` integer;
