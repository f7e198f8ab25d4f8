import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createRequestContext, OperationContext, type AppDeps, type RequestContext } from '../../src/context.js';

/**
 * What a request leaves behind for the garbage collector (src/context.ts). V8 allocates an
 * object's own accessor (an object literal's `get`, Object.defineProperty's `get`) in the old
 * generation; left there after its request, it keeps its getter's closure, and through it the
 * whole request, alive through every young collection until the next full one. Made per request,
 * that promoted every request and cost a cached REST read about 70 % more CPU (bench/README.md,
 * "Issue 20: where the cost came from").
 *
 * Here a stand-in request is held only by what the per-request objects of a cached read and of a
 * GraphQL operation hold (the request context, its loaders' provider options, the operation's
 * context); once nothing holds those, two young collections must leave it out of the old
 * generation. So that the test can fail, the hazard itself is measured too: an object with a
 * getter of its own promotes the whole stand-in.
 *
 * The stand-in is an eighth of what the young generation has free, at most 2 MB: V8 sizes the
 * young generation as it goes (16 MB semi-spaces here when idle, 1 MB on a loaded machine, where
 * it shrinks after a full collection at a low allocation rate), and a stand-in larger than a
 * semi-space would live through two collections while it is being made and be promoted whatever
 * holds it.
 */

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as (options: { type: 'minor' | 'major'; execution: 'sync' }) => void;

/** The end of the current job (what it made may still be referenced from its stack until then). */
const nextJob = () => new Promise((resolve) => setImmediate(resolve));

/** Bytes in the old generation (every space but the young ones). */
function oldGenerationBytes(): number {
  return getHeapSpaceStatistics()
    .filter((space) => !space.space_name.startsWith('new'))
    .reduce((sum, space) => sum + space.space_used_size, 0);
}

/** What one part of the stand-in takes: its slot in the array and an object of one field. */
const PART_BYTES = 40;

/** How many parts the stand-in has: an eighth of the young generation's free space, at most 2 MB. */
function standInParts(): number {
  const young = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')!;
  return Math.floor(Math.min(2 * 1024 * 1024, young.space_available_size / 8) / PART_BYTES);
}

/**
 * What share of its stand-in request two young collections move into the old generation after
 * `request` has run and let go of everything it made, and what it read (checked by the caller: an
 * `expect` inside would hold on to what it was given). The median of three tries: a first run also
 * promotes its own code's bookkeeping, and a full collection's sweeping may still be returning
 * space.
 */
async function promotedShare<T>(request: (parts: number) => T): Promise<{ share: number; read: T }> {
  const tries: number[] = [];
  let read: T | undefined;
  gc({ type: 'major', execution: 'sync' });
  for (let i = 0; i < 3; i++) {
    // What is young now is promoted or gone before the measure starts.
    gc({ type: 'minor', execution: 'sync' });
    gc({ type: 'minor', execution: 'sync' });
    await nextJob();
    const parts = standInParts();
    const before = oldGenerationBytes();
    read = request(parts);
    await nextJob();
    gc({ type: 'minor', execution: 'sync' });
    gc({ type: 'minor', execution: 'sync' });
    await nextJob();
    tries.push((oldGenerationBytes() - before) / (parts * PART_BYTES));
  }
  return { share: tries.sort((a, b) => a - b)[1]!, read: read! };
}

/**
 * The stand-in's parts, made by code compiled afresh each time. V8 learns per allocation site:
 * once parts made at one site have survived young collections (on a loaded machine a collection
 * V8 starts on its own while a stand-in is being made), it allocates that site's objects in the
 * old generation from the start, and every later measure would count them whatever holds them.
 */
function freshParts(parts: number): unknown[] {
  const make = new Function('n', 'return Array.from({ length: n }, (_, i) => ({ i }));') as (n: number) => unknown[];
  return make(parts);
}

const deps = { config: { env: 'sandbox', publicBaseUrl: undefined }, catalog: {} } as unknown as AppDeps;
const logger = pino({ level: 'silent' });

/**
 * A request context as the HTTP layer builds it, whose lazy logger holds a stand-in request of
 * `parts` parts (as the front's exchange holds the node:http request, response and headers).
 */
function requestContext(parts: number): RequestContext {
  const request = { id: 'r1', parts: freshParts(parts) };
  return createRequestContext(deps, {
    requestId: request.id,
    logger: () => logger.child({ reqId: request.id, parts: request.parts.length }),
    signal: () => undefined,
    principal: null,
    authError: null,
    scenarioHeader: undefined,
    languageHeader: 'en-US',
  });
}

describe('what a request leaves for the garbage collector', () => {
  it("a request context, its logger and its loaders' provider options leave the request to the young generation", async () => {
    const { share, read } = await promotedShare((parts) => {
      const ctx = requestContext(parts);
      // A cached read builds the loaders (and their provider options); a failure builds the logger.
      return { loaders: typeof ctx.loaders.property.load, bindings: ctx.logger.bindings() };
    });
    expect(read).toMatchObject({ loaders: 'function', bindings: { reqId: 'r1' } });
    expect(read.bindings.parts).toBeGreaterThan(1000);
    expect(share).toBeLessThan(0.1);
  });

  it("a GraphQL operation's context, read as the resolvers and plugins read it, leaves the request to the young generation", async () => {
    const { share, read } = await promotedShare((parts) => {
      const ctx = requestContext(parts);
      const context = new OperationContext(ctx);
      const before = context.language;
      // @inContext(language:) sets the operation's language, not the request's.
      context.serveIn('ja-JP');
      return {
        requestId: context.requestId,
        principal: context.principal,
        bindings: context.logger.bindings(),
        loaders: typeof context.loaders.property.load,
        languages: [before, context.language, ctx.language],
      };
    });
    expect(read).toMatchObject({
      requestId: 'r1',
      principal: null,
      bindings: { reqId: 'r1' },
      loaders: 'function',
      languages: ['en-US', 'ja-JP', 'en-US'],
    });
    expect(share).toBeLessThan(0.1);
  });
  // Last: once the request context's objects have survived young collections, V8 learns to
  // allocate them in the old generation from the start (allocation-site pretenuring), and the
  // measures above would count the stand-in they hold.
  it('an object with a getter of its own keeps the whole request through young collections (the hazard)', async () => {
    const { share, read } = await promotedShare((parts) => {
      const ctx = requestContext(parts);
      // The loaders' provider options as they were made before: an object literal with a getter.
      const options = {
        get signal() {
          return ctx.signal;
        },
      };
      return options.signal;
    });
    expect(read).toBeUndefined();
    expect(share).toBeGreaterThan(0.75);
  });
});
