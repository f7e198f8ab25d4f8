// `prisma generate` without the schema-engine binary: the CLI insists on a binary path even though
// generating the client does not run it, and the binary cannot be downloaded on every machine.
// Any existing file satisfies the check (see ARCHITECTURE.md, environment notes).
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const env = { ...process.env };
env.PRISMA_SCHEMA_ENGINE_BINARY ??= process.execPath;
env.PRISMA_HIDE_UPDATE_MESSAGE = '1';
const cli = createRequire(import.meta.url).resolve('prisma/build/index.js');
const result = spawnSync(process.execPath, [cli, 'generate'], { stdio: 'inherit', env });
process.exit(result.status ?? 1);
