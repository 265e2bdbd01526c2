import { defineConfig } from "drizzle-kit";

// drizzle-kit only compares: migrations are hand-written SQL that wrangler applies (locally
// and remotely) and the worker tests apply through readD1Migrations; drizzle-kit reads the
// snapshot in migrations/meta, which `npm run db:snapshot` keeps equal to these files, so
// `npx drizzle-kit generate` finds nothing new (docs/storage-schema.md, "Making a migration").
export default defineConfig({
  dialect: "sqlite",
  schema: ["./src/db/schema/ssh.ts", "./src/db/schema/nocode.ts"],
  out: "./migrations",
});
