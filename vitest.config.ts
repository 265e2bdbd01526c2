import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// Decision B7: two runtimes, one command. `node` runs pure code, OpenSSH interop and
// end-to-end tests against the real Worker; `worker` runs inside workerd with real
// local D1, Durable Object, Queue and R2 bindings.
const migrations = await readD1Migrations(path.join(import.meta.dirname, "migrations"));

// Fixed test secrets (decision B6 formats). Never used outside tests.
export const TEST_SECRETS = {
  ROOT_TOKEN: "test-root-token",
  ADMIN_TOKEN: "test-admin-token",
  KEYWAY_HASH_KEY: "dGVzdC1oYXNoLWtleS10ZXN0LWhhc2gta2V5LXRlc3Q=",
  KEYWAY_KEK: "t1:dGVzdC1rZWstdGVzdC1rZWstdGVzdC1rZWstdGVzdDE=",
};

export default defineConfig({
  test: {
    // Every request writes an access line (decision B15); tests that check them spy on
    // console.log, and the run's output stays readable without them.
    onConsoleLog: (log) => !log.includes('"message":"access"'),
    // Queue work a test file started (plans, applies) may still log after the file ended;
    // the Workers test runtime then drops that line and vitest reports it as a teardown
    // error. A lost log line is not a failure; every other unhandled error still is.
    onUnhandledError: (error) =>
      !(error.name === "EnvironmentTeardownError" && error.message.includes('"onUserConsoleLog" was pending')),
    projects: [
      {
        test: {
          name: "node",
          include: ["test/unit/**/*.test.ts", "test/interop/**/*.test.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.jsonc" },
            miniflare: {
              bindings: {
                TEST_MIGRATIONS: migrations,
                ...TEST_SECRETS,
                SSH_MOUNTS: "ssh,ssh-two",
                D1_LIMIT_GUARD: "on",
              },
              // A real D1 database that never gets Keyway's schema: with it as `DB`, every
              // statement on Keyway's tables fails as it would against a broken database (B12).
              d1Databases: { DB_UNMIGRATED: "keyway-unmigrated" },
              compatibilityFlags: ["service_binding_extra_handlers"],
              queueConsumers: {
                "keyway-provision": { maxBatchTimeout: 0.05 },
                "keyway-provision-dlq": { maxBatchTimeout: 0.05 },
                "keyway-ssh-krl": { maxBatchTimeout: 0.05 },
              },
            },
          }),
        ],
        test: {
          name: "worker",
          include: ["test/worker/**/*.test.ts"],
          setupFiles: ["./test/worker/setup/apply-migrations.ts", "./test/worker/setup/load-contracts.ts"],
          // A Node HTTP server the Worker under test fetches discovery and JWKS documents from (S25).
          globalSetup: ["./test/worker/setup/fixture-http-server.ts"],
          testTimeout: 30_000,
        },
      },
    ],
  },
});
