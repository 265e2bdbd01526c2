-- Decision B17: a revocation follows its CA key, not the issuer row. `ca_key_fingerprint`
-- is the SHA256 fingerprint (`SHA256:<base64>`) of the CA public key a serial or key-id
-- revocation applies to; NULL for revocations that name no issuer (by public key, or a key
-- id revoked mount-wide), and NULL for rows written before this column, which the Worker
-- back-fills from their issuer row ('' when that issuer was already deleted: orphaned).
ALTER TABLE `ssh_revocations` ADD `ca_key_fingerprint` text;
--> statement-breakpoint
CREATE INDEX `ssh_revocations_mount_ca_key` ON `ssh_revocations` (`mount`,`ca_key_fingerprint`);
