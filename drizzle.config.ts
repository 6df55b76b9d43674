import { defineConfig } from 'drizzle-kit'

// Both dialects: `npm run db:generate` runs drizzle-kit once per dialect (DRIZZLE_DIALECT picks).
const postgres = process.env.DRIZZLE_DIALECT === 'postgresql'

export default defineConfig(
  postgres
    ? { dialect: 'postgresql', schema: './src/db/pg-schema/index.ts', out: './migrations/pg', strict: true }
    : { dialect: 'sqlite', schema: './src/db/schema/index.ts', out: './migrations', strict: true },
)
