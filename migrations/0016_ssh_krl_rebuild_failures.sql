-- Decision B17: a KRL rebuild that fails leaves the last good KRL served. `rebuild_error`
-- is the reason of the last failed attempt (NULL once a rebuild succeeds) and
-- `rebuild_attempts` how many attempts in a row have failed (the Queue retry's backoff).
ALTER TABLE `ssh_krl_state` ADD `rebuild_error` text;
--> statement-breakpoint
ALTER TABLE `ssh_krl_state` ADD `rebuild_attempts` integer DEFAULT 0 NOT NULL;
