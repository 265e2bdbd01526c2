-- B16: every upload attempt writes its own R2 object (a fresh key per attempt). Before the
-- object is written, the attempt is recorded here; the one D1 batch that spends the upload
-- link records the winner's key on the version (`tarball_key`) and deletes its row. A
-- losing attempt deletes its object and row itself; rows of attempts that never finished
-- are swept by the hourly cron after one hour (object first, then row).
CREATE TABLE `registry_upload_attempts` (
	`object_key` text PRIMARY KEY NOT NULL,
	`version_id` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `registry_upload_attempts_created` ON `registry_upload_attempts` (`created_at`);
--> statement-breakpoint
-- Versions uploaded before B16 keep their per-version key as their recorded key (every
-- upload recorded it; this only fills a row that was stored without it).
UPDATE `registry_module_versions`
SET `tarball_key` = 'registry-modules/' || `module_id` || '/' || `id` || '.tar.gz'
WHERE `tarball_key` IS NULL AND `status` IN ('reg_ingressing', 'ok');
