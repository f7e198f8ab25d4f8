// Writes schema.graphql: the schema the server serves (the Pothos schema with @defer and @stream,
// src/graphql/schema.ts); test/contract/schema.test.ts fails when it is stale.
import { writeFileSync } from 'node:fs';
import { printSchema } from 'graphql';
import { servedSchema } from '../src/graphql/index.js';

writeFileSync(new URL('../schema.graphql', import.meta.url), `${printSchema(servedSchema)}\n`);
