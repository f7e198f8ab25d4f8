import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REGENERATE, renderGraphQLTypes, renderOpenApiTypes, ROOT, servedDocuments, type GeneratedFile } from '../../scripts/client-codegen.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * The checked-in generated clients (docs/client.md) are what `npm run client:generate` makes now:
 * clients/typescript/v1.ts and v2.ts from the OpenAPI documents the service serves, and
 * clients/graphql/generated/ from schema.graphql and the example operations. Rendered again in
 * memory (the same functions the script uses) and compared byte for byte.
 */

let t: TestService;
let documents: Awaited<ReturnType<typeof servedDocuments>>;

beforeAll(async () => {
  t = await startTestService();
  documents = await servedDocuments((path) => t.request(path));
}, 120_000);

afterAll(async () => {
  await t?.close();
});

function stale(files: GeneratedFile[]): string[] {
  return files.filter((f) => !existsSync(join(ROOT, f.path)) || readFileSync(join(ROOT, f.path), 'utf8') !== f.content).map((f) => f.path);
}

describe('the generated clients are current', () => {
  it.each(['v1', 'v2'] as const)('clients/typescript/%s.ts is what the served document generates', async (version) => {
    const file = await renderOpenApiTypes(version, documents[version]);
    expect(stale([file]), `${file.path} is stale: run \`${REGENERATE}\` and commit the result`).toEqual([]);
    // Not an empty rendering: the document's paths are in it.
    expect(file.content).toContain(version === 'v1' ? '"/search/price-check": {' : '"/bookings/retrieve": {');
  }, 60_000);

  it('clients/graphql/generated/ is what schema.graphql and the example operations generate', async () => {
    const files = await renderGraphQLTypes();
    expect(files.map((f) => f.path)).toEqual(expect.arrayContaining(['clients/graphql/generated/graphql.ts']));
    expect(stale(files), `stale GraphQL types: run \`${REGENERATE}\` and commit the result`).toEqual([]);
    // Nothing left over from operations that are gone.
    const dir = join(ROOT, 'clients/graphql/generated');
    const present = readdirSync(dir).map((name) => `clients/graphql/generated/${name}`).sort();
    expect(present, `files the generator no longer writes: run \`${REGENERATE}\``).toEqual(files.map((f) => f.path).sort());
    const graphql = files.find((f) => f.path.endsWith('/graphql.ts'))!.content;
    expect(graphql).toContain('export const PropertyPageDocument');
    expect(graphql).toContain('export const BookDocument');
  }, 60_000);
});
