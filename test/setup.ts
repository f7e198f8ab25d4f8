// @hono/zod-openapi adds `.openapi()` to zod schemas made after it loads (zod 4 sets methods per
// instance). The service's entry point loads the REST adapters, and so the extension, before any
// service schema; a test that imports a service module first would not, so every test file
// starts the way the service does.
import '@hono/zod-openapi';
