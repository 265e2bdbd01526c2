import type { D1Migration } from "cloudflare:test";

declare global {
  namespace Cloudflare {
    interface Env {
      TEST_MIGRATIONS: D1Migration[];
      /** A real local D1 database to which no migration is ever applied (health tests, B12). */
      DB_UNMIGRATED: D1Database;
    }
  }
}
