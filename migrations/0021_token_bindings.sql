-- Tokens made by a login (decision S25): the CIDR blocks they may be used from
-- (`bound_cidrs`, JSON array, checked on every request), the auth mount that made them
-- (`auth_accessor`: disabling the mount revokes them, S24), the path that made them, and
-- the role's renewal limits (`max_ttl`, `period`, seconds; 0 = none).
ALTER TABLE `vault_tokens` ADD `bound_cidrs` text;
--> statement-breakpoint
ALTER TABLE `vault_tokens` ADD `auth_accessor` text;
--> statement-breakpoint
ALTER TABLE `vault_tokens` ADD `path` text;
--> statement-breakpoint
ALTER TABLE `vault_tokens` ADD `max_ttl` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `vault_tokens` ADD `period` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
CREATE INDEX `vault_tokens_auth_accessor` ON `vault_tokens` (`auth_accessor`);
