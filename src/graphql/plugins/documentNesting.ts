import { GraphQLError, Kind, type DocumentNode, type FragmentDefinitionNode, type SelectionSetNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { ValidationError } from '../../services/kernel/index.js';
import { errorExtensions } from '../errors.js';

/**
 * How deep a document may nest: selection sets inside selection sets, a fragment spread counting
 * as a level of its own (so a chain of fragments spreading the next is as deep as it is long), and
 * in the text, braces and brackets together (selection sets, input objects, lists). The deepest
 * documented operation nests under 15; everything that walks a document recursively (graphql-js's
 * parser and validation rules, graphql-armor's limits, the cost walk) then stays far from the
 * stack's end, whatever GRAPHQL_MAX_TOKENS allows.
 */
export const MAX_DOCUMENT_DEPTH = 64;

/** The refusal of a document nested too deep: 400 VALIDATION_ERROR naming `query`. */
export function documentTooDeep(): ValidationError {
  const reason = `nested more than ${MAX_DOCUMENT_DEPTH} levels deep (selection sets, fragment spreads, input values)`;
  return new ValidationError([{ field: 'query', reason }], `The document is ${reason}`);
}

const refusal = () => {
  const error = documentTooDeep();
  return new GraphQLError(error.message, { extensions: errorExtensions(error) });
};

/**
 * Whether a document's text nests braces and brackets more than `limit` levels, outside strings,
 * block strings and comments. One pass, no recursion: it runs before the parser (which recurses
 * once per level).
 */
export function textNestedDeeperThan(source: string, limit: number = MAX_DOCUMENT_DEPTH): boolean {
  let depth = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source.charCodeAt(i);
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > limit) return true;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth = Math.max(0, depth - 1);
    } else if (c === 0x23 /* # */) {
      while (i < source.length && source[i] !== '\n' && source[i] !== '\r') i++;
    } else if (c === 0x22 /* " */) {
      i = source.startsWith('"""', i) ? endOfBlockString(source, i + 3) : endOfString(source, i + 1);
    }
  }
  return false;
}

/** The index of the last character of a block string whose text starts at `i`. */
function endOfBlockString(source: string, i: number): number {
  for (; i < source.length; i++) {
    if (source.startsWith('\\"""', i)) i += 3;
    else if (source.startsWith('"""', i)) return i + 2;
  }
  return i;
}

/** The index of the closing quote of a string whose text starts at `i` (or of the line's end). */
function endOfString(source: string, i: number): number {
  for (; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') i++;
    else if (c === '"' || c === '\n' || c === '\r') return i;
  }
  return i;
}

/**
 * The deepest nesting of a parsed document's operations and fragments, fragment spreads followed
 * (each a level), or MAX_DOCUMENT_DEPTH + 1 as soon as it is known to be deeper. Iterative with an
 * explicit stack, each selection set measured once (a fragment spread many times is measured at
 * its first spread): linear in the document. A spread of a fragment being measured (a cycle, which
 * validation refuses) adds nothing.
 */
export function documentDepth(document: DocumentNode, limit: number = MAX_DOCUMENT_DEPTH): number {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const depths = new Map<SelectionSetNode, number>();
  const open = new Set<SelectionSetNode>();
  /** The selection sets directly under a set: of its fields, inline fragments and spread fragments. */
  const childrenOf = (set: SelectionSetNode): SelectionSetNode[] => {
    const children: SelectionSetNode[] = [];
    for (const selection of set.selections) {
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = fragments.get(selection.name.value);
        if (fragment) children.push(fragment.selectionSet);
      } else if (selection.selectionSet) children.push(selection.selectionSet);
    }
    return children;
  };
  let deepest = 0;
  for (const definition of document.definitions) {
    if (!('selectionSet' in definition) || !definition.selectionSet) continue;
    // Post-order: a set's depth once its children's are known; the open path is the stack.
    const stack: { set: SelectionSetNode; level: number; children: SelectionSetNode[] | null }[] = [{ set: definition.selectionSet, level: 1, children: null }];
    while (stack.length) {
      const top = stack[stack.length - 1]!;
      if (depths.has(top.set)) {
        stack.pop();
        continue;
      }
      if (top.level > limit) return limit + 1;
      if (top.children === null) {
        top.children = childrenOf(top.set).filter((child) => !depths.has(child) && !open.has(child));
        open.add(top.set);
        for (const child of top.children) stack.push({ set: child, level: top.level + 1, children: null });
        continue;
      }
      let depth = 1;
      for (const child of childrenOf(top.set)) depth = Math.max(depth, 1 + (depths.get(child) ?? 0));
      depths.set(top.set, depth);
      open.delete(top.set);
      stack.pop();
      if (depth > limit) return limit + 1;
    }
    deepest = Math.max(deepest, depths.get(definition.selectionSet) ?? 0);
  }
  return deepest;
}

/**
 * Yoga plugin (HTTP and graphql-ws alike): a document nested more than MAX_DOCUMENT_DEPTH levels
 * is refused, 400 VALIDATION_ERROR naming `query` whatever the Accept, before it is parsed (its
 * text) and before it is validated (through its fragments). First among the plugins that parse
 * or validate, so nothing recursive meets it.
 */
export function documentNestingLimit(): Plugin {
  // Yoga keeps one node per document text: measured once each.
  const tooDeep = new WeakMap<DocumentNode, boolean>();
  return {
    onParse({ params: { source } }) {
      const text = typeof source === 'string' ? source : source.body;
      if (textNestedDeeperThan(text)) throw refusal();
    },
    onValidate({ params: { documentAST } }) {
      let deep = tooDeep.get(documentAST);
      if (deep === undefined) tooDeep.set(documentAST, (deep = documentDepth(documentAST) > MAX_DOCUMENT_DEPTH));
      if (deep) throw refusal();
    },
  };
}
