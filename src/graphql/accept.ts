/**
 * The Accept header of a GraphQL request as Yoga reads it when it picks the response's media type
 * (graphql-yoga's result processors): entries split on commas, parameters dropped (`q` too), an
 * entry with a charset other than utf-8 skipped, no header meaning any type. Decisions that must
 * agree with Yoga's choice (the JSON type of a refusal, whether a result may be delivered
 * incrementally) read it here.
 */
export function acceptedMediaTypes(request: Request): string[] {
  const types: string[] = [];
  for (const entry of (request.headers.get('accept') || '*/*').replace(/\s/g, '').toLowerCase().split(',')) {
    const [type = '', ...params] = entry.split(';');
    const charset = params.find((p) => p.includes('charset='));
    if (charset !== undefined && charset !== 'charset=utf-8') continue;
    types.push(type);
  }
  return types;
}

/** Whether an accepted entry (`*` wildcards allowed, as `*\/*` or `multipart/*`) admits `type`. */
export function admits(accepted: string, type: string): boolean {
  const [pre, suf] = accepted.split('/');
  const [typePre, typeSuf] = type.split('/');
  return (pre === '*' || pre === typePre) && (suf === '*' || suf === typeSuf);
}

/**
 * The media types Yoga streams a result of several payloads in: an incremental result (@defer,
 * @stream) as multipart/mixed or as an event stream, a subscription as an event stream.
 */
export const INCREMENTAL_MEDIA_TYPES = ['multipart/mixed', 'text/event-stream'] as const;

/** Whether the request accepts a response Yoga can deliver a result of several payloads in. */
export function acceptsIncrementalDelivery(request: Request): boolean {
  return acceptedMediaTypes(request).some((accepted) => INCREMENTAL_MEDIA_TYPES.some((type) => admits(accepted, type)));
}
