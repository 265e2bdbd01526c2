import { defineConfig } from "drizzle-kit";

// Generate only; wrangler applies migrations (locally and remotely) and the worker tests
// apply the very same flat files through readD1Migrations.
export default defineConfig({
  dialect: "sqlite",
  schema: ["./src/db/schema/ssh.ts", "./src/db/schema/nocode.ts"],
  out: "./migrations",
});
