import { defineConfig } from 'prisma/config';

// The CLI is used only for `prisma generate` here; migrations are applied by src/db/migrate.ts.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://localhost/unused' },
});
