/**
 * Reading the service's OpenAPI documents in tests, and checking an answer against them
 * (test/contract/openapi.test.ts for every route, test/contract/client-journeys.test.ts for the
 * generated client's calls).
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { expect } from 'vitest';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** `node` with its `$ref`s followed within `doc` (JSON pointers, ~0 and ~1 unescaped); an unresolved one throws. */
export function resolve(doc: Json, node: Json): Json {
  let current = node;
  for (let hops = 0; current && typeof current === 'object' && typeof current.$ref === 'string'; hops++) {
    if (hops > 20) throw new Error(`a $ref cycle at ${node.$ref}`);
    current = (current.$ref as string)
      .replace(/^#\//, '')
      .split('/')
      .map((s) => decodeURIComponent(s).replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce((at: Json, key) => at?.[key], doc);
    if (current === undefined) throw new Error(`unresolved $ref ${node.$ref}`);
  }
  return current;
}

/** A JSON pointer (as a URI fragment) to `segments`. */
export function pointer(segments: string[]): string {
  return '#/' + segments.map((s) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');
}

/**
 * An ajv for the documents (JSON Schema 2020-12, the dialect of OpenAPI 3.1, with formats): add
 * each document with `ajv.addSchema(document, id)` and give checkAnswer the same id.
 */
export function documentAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  (addFormatsModule as unknown as (a: Ajv2020) => void)(ajv);
  return ajv;
}

/** The schema parts that apply to a value at one place (references followed, allOf flattened). */
export function partsOf(doc: Json, schema: Json, value: unknown): Json[] {
  const s = resolve(doc, schema);
  if (!s || typeof s !== 'object') return [];
  const branches = s.anyOf ?? s.oneOf;
  const own = [s];
  if (branches) {
    // The branch the value is of: null goes to the null branch, anything else to another one whose
    // fixed fields (a discriminator's const or one-value enum) the value has.
    const fits = (b: Json) => {
      const branch = resolve(doc, b);
      if ((value === null) !== (branch?.type === 'null')) return false;
      if (value === null || typeof value !== 'object') return true;
      if (!((branch?.required ?? []) as string[]).every((k) => k in (value as object))) return false;
      return Object.entries<Json>(branch?.properties ?? {}).every(([k, p]) => {
        const fixed = p?.const !== undefined ? [p.const] : Array.isArray(p?.enum) && p.enum.length === 1 ? p.enum : null;
        return fixed === null || fixed.includes((value as Record<string, unknown>)[k]);
      });
    };
    const pick = (branches as Json[]).find(fits);
    if (pick) own.push(...partsOf(doc, pick, value));
  }
  for (const member of s.allOf ?? []) own.push(...partsOf(doc, member, value));
  return own;
}

/** Fields of `value` that its schema does not declare (objects with declared properties only). */
export function undeclared(doc: Json, schema: Json, value: unknown, at: string): string[] {
  if (value === null || typeof value !== 'object') return [];
  const parts = partsOf(doc, schema, value);
  if (Array.isArray(value)) {
    const items = parts.find((p) => p.items)?.items;
    return items ? value.flatMap((v, i) => undeclared(doc, items, v, `${at}[${i}]`)) : [];
  }
  const declared = new Map<string, Json>();
  for (const p of parts) for (const [k, v] of Object.entries<Json>(p.properties ?? {})) if (!declared.has(k)) declared.set(k, v);
  const additional = parts.find((p) => p.additionalProperties !== undefined)?.additionalProperties;
  const closed = parts.some((p) => p.properties) && additional === undefined;
  return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => {
    const path = `${at}.${k}`;
    if (declared.has(k)) return undeclared(doc, declared.get(k), v, path);
    if (additional && typeof additional === 'object') return undeclared(doc, additional, v, path);
    return closed ? [path] : [];
  });
}

/** An HTTP answer as a client got it: the headers before the body, and the body's text. */
export interface DocumentedAnswer {
  status: number;
  headers: Headers;
  text: string;
}

/**
 * Checks an answer of `method template` against `doc` (added to `ajv` as `docId`): the status is
 * listed, the content type is one the status lists, the body fits that schema and declares every
 * field, required headers are there and every documented header that is there fits its schema.
 * Returns the body (parsed when JSON). `where` names the call in failure messages.
 */
export function checkAnswer(ajv: Ajv2020, doc: Json, docId: string, template: string, method: string, answer: DocumentedAnswer, where: string): Json {
  const lower = method.toLowerCase();
  const op = doc.paths[template]?.[lower];
  expect(op, `${where}: ${method} ${template} is documented`).toBeDefined();
  const statusKey = String(answer.status);
  expect(op.responses[statusKey], `${where}: a status its document does not list. Body: ${answer.text.slice(0, 400)}`).toBeDefined();
  const documented = resolve(doc, op.responses[statusKey]);

  for (const [name, header] of Object.entries<Json>(documented.headers ?? {})) {
    const h = resolve(doc, header);
    const value = answer.headers.get(name);
    if (h.required) expect(value, `${where}: header ${name} is required`).not.toBeNull();
    if (value !== null && h.schema) {
      const schema = resolve(doc, h.schema);
      const typed = schema.type === 'integer' || schema.type === 'number' ? (/^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value) : value;
      const check = ajv.compile(schema);
      expect(check(typed), `${where}: header ${name}: ${value}: ${ajv.errorsText(check.errors)}`).toBe(true);
    }
  }

  let parsed: Json = undefined;
  if (!documented.content) {
    expect(answer.text, `${where}: no body is documented`).toBe('');
  } else {
    const type = (answer.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    const media = documented.content[type];
    expect(media, `${where}: content type "${type}" is not one of ${Object.keys(documented.content).join(', ')}`).toBeDefined();
    const responseRef = resolve(doc, op.responses[statusKey]) === op.responses[statusKey]
      ? ['paths', template, lower, 'responses', statusKey]
      : (op.responses[statusKey].$ref as string).replace(/^#\//, '').split('/');
    parsed = type === 'application/json' ? JSON.parse(answer.text) : answer.text;
    if (media.schema) {
      const ref = docId + pointer([...responseRef, 'content', type, 'schema']);
      const validate = ajv.getSchema(ref);
      if (!validate) throw new Error(`no schema at ${ref}`);
      const valid = validate(parsed);
      expect(valid, `${where}: the body does not fit the document: ${ajv.errorsText(validate.errors, { separator: '; ' })}\n${answer.text.slice(0, 600)}`).toBe(true);
      expect(undeclared(doc, media.schema, parsed, '$'), `${where}: fields the document does not declare`).toEqual([]);
    }
  }
  return parsed;
}
