-- N20 locks: who holds a workspace's user lock (`user:<id>`, `team:<id>`), and since when.
-- A run's lock (from planning to its end) is derived from its status, never stored here.
ALTER TABLE `workspaces` ADD `locked_by` text;--> statement-breakpoint
ALTER TABLE `workspaces` ADD `locked_at` integer;
