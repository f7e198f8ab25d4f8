/** Reading the service's OpenAPI documents in tests. */

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
