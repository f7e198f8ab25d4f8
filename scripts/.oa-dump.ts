import { writeFileSync } from 'node:fs';
import { startTestService } from '../test/helpers/service.js';
const t = await startTestService({});
for (const [v, base] of [['v1', '/channel/v1'], ['v2', '/api/channel/v2']]) {
  const res = await t.request(`${base}/openapi.json`);
  writeFileSync(`/tmp/oa/${v}.json`, JSON.stringify(await res.json(), null, 2));
}
await t.close();
process.exit(0);
