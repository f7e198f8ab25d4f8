import { createGraphQLError, isAsyncIterable, isPromise, processRegularResult, type Plugin } from 'graphql-yoga';
import { BadRequestError, NotAcceptableError, UnsupportedMediaTypeError, type AppError } from '../../services/kernel/index.js';
import { acceptedMediaTypes, admits } from '../accept.js';
import { errorExtensions } from '../errors.js';

const graphQLError = (error: AppError) => createGraphQLError(error.message, { extensions: errorExtensions(error) });

const JSON_MEDIA_TYPES = ['application/graphql-response+json', 'application/json'] as const;

/**
 * The JSON media type Yoga would answer in for this Accept header (the first entry that admits
 * one; a wildcard means application/json), or null when it admits none.
 */
function acceptedJsonType(request: Request): (typeof JSON_MEDIA_TYPES)[number] | null {
  for (const type of acceptedMediaTypes(request)) {
    if (type === JSON_MEDIA_TYPES[0]) return JSON_MEDIA_TYPES[0];
    if (admits(type, 'application/json')) return 'application/json';
  }
  return null;
}

/**
 * Refusals Yoga makes at the HTTP level, given a GraphQL error body with a code (Yoga answers the
 * first two with an empty body, and the third as a masked SyntaxError, INTERNAL_ERROR with 200):
 * - a POST in a media type no parser reads (text/plain, multipart/form-data, none): 415
 *   UNSUPPORTED_MEDIA_TYPE;
 * - a GET, or a form POST, whose `variables` or `extensions` parameter is not JSON: 400 BAD_REQUEST;
 * - a subscription from a client accepting JSON only (a subscription is an event stream): 406
 *   NOT_ACCEPTABLE. An Accept that admits no JSON keeps the empty 406: nothing it reads can say why.
 *   A query or mutation with @defer or @stream from such a client never gets here: it runs without
 *   incremental delivery and is answered in one JSON response (plugins/incrementalDelivery.ts).
 */
export function httpRequestErrors(): Plugin {
  const malformed = () =>
    graphQLError(new BadRequestError('BAD_REQUEST', 'The `variables` and `extensions` parameters must be JSON objects'));
  return {
    onRequestParse({ request, requestParser, setRequestParser }) {
      if (!requestParser) {
        // Thrown when Yoga parses, after its method check (405 for a method it does not serve).
        setRequestParser(() => {
          const type = request.headers.get('content-type');
          throw graphQLError(
            new UnsupportedMediaTypeError(
              'application/json',
              `${type ? `The media type ${type.split(';')[0]!.trim()} is not supported` : 'The request has no content type'}: send a POST as application/json (or a GET with query parameters)`,
            ),
          );
        });
        return;
      }
      const parse = requestParser;
      // Yoga's query-string parser (GET, application/x-www-form-urlencoded) throws JSON.parse's SyntaxError.
      const refuse = (error: unknown): never => {
        throw error instanceof SyntaxError ? malformed() : error;
      };
      setRequestParser((req) => {
        try {
          const parsed = parse(req);
          return isPromise(parsed) ? parsed.catch(refuse) : parsed;
        } catch (error) {
          return refuse(error);
        }
      });
    },
    onResultProcess({ request, result, resultProcessor, setResult, setResultProcessor }) {
      if (resultProcessor) return;
      const type = acceptedJsonType(request);
      if (!type) return;
      // Only an event stream can carry what ran (a subscription); end it, as nobody will read it.
      if (isAsyncIterable(result)) void result[Symbol.asyncIterator]().return?.();
      setResult({
        errors: [
          graphQLError(
            new NotAcceptableError('NOT_ACCEPTABLE', 'A subscription is answered as an event stream: send Accept: text/event-stream, or subscribe over graphql-ws'),
          ),
        ],
      });
      setResultProcessor(processRegularResult, type);
    },
  };
}
