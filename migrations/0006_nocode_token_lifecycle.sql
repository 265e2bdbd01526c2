-- N13 (issue 14): no-code tokens carry when they were last used (updated at most once a
-- minute per token) and an optional expiry (epoch milliseconds; a request with an
-- expired token is 401).
ALTER TABLE `nocode_tokens` ADD `last_used_at` integer;--> statement-breakpoint
ALTER TABLE `nocode_tokens` ADD `expired_at` integer;
