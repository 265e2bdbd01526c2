import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach } from "vitest";
import { clearD1Failures, guardD1 } from "../../../src/db/d1-guard";

// Setup files run outside per-file storage isolation and may run several times;
// applyD1Migrations only applies what is missing, so this is idempotent.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

// Decision B8: every statement a test sends, directly or through the Worker, goes through the
// guard that enforces D1's limits on the real binding (the Worker's entry points wrap the env
// they are given; this covers tests that call services with `env` themselves).
env.DB = guardD1(env.DB);
afterEach(() => clearD1Failures());
