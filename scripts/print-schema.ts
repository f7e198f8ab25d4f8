// Writes schema.graphql from the Pothos schema; test/contract/schema.test.ts fails when it is stale.
import { writeFileSync } from 'node:fs';
import { printSchema } from 'graphql';
import { schema } from '../src/schema/index.js';

writeFileSync(new URL('../schema.graphql', import.meta.url), `${printSchema(schema)}\n`);
