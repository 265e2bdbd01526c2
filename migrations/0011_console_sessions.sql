-- Sessions of the self-service console under /app (decision N14, issue 20).
-- `id_hash` is keyedHash(KEYWAY_HASH_KEY, "console-session", <cookie value>): the session id
-- itself is never stored. `token_hash` is the stored form of the token the session was
-- opened with (nocode_tokens.hash): every request resolves it again, so revoking, replacing
-- or expiring that token ends the session. Sessions last 12 hours at most.
CREATE TABLE `console_sessions` (
	`id_hash` text PRIMARY KEY NOT NULL,
	`token_hash` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `console_sessions_expires` ON `console_sessions` (`expires_at`);
