// Writes the generated clients (docs/client.md): clients/typescript/v1.ts and v2.ts from the
// OpenAPI documents a service built in process serves, and clients/graphql/generated/ from
// schema.graphql and clients/graphql/operations/. test/contract/client-drift.test.ts
// fails when they are stale. Usage: npm run client:generate
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { embeddedServiceDocuments, renderAll, ROOT } from './client-codegen.js';

const files = await renderAll(await embeddedServiceDocuments());
// The GraphQL output directory holds only what the preset writes now.
const graphqlOut = join(ROOT, 'clients/graphql/generated');
for (const name of readdirSync(graphqlOut, { withFileTypes: true }).filter((e) => e.isFile())) rmSync(join(graphqlOut, name.name));
for (const file of files) {
  const target = join(ROOT, file.path);
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, file.content);
  console.info(`wrote ${file.path}`);
}
