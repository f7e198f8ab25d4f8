/** The GraphQL operation names a label may carry: a bounded set. */

/** Distinct names (besides the persisted operations') that get a label of their own. */
export const MAX_OPERATION_NAMES = 100;

/** A name longer than this is counted as `other`, whatever the budget. */
const MAX_NAME_LENGTH = 100;

/** Fixed label values: an operation without a name, a document that did not parse, names past the budget. */
export const ANONYMOUS = 'anonymous';
export const UNKNOWN = 'unknown';
export const OTHER = 'other';

/**
 * The label of an operation name: the names of the persisted operations (GRAPHQL_PERSISTED_OPERATIONS_FILE)
 * always; of the others, the first MAX_OPERATION_NAMES distinct names of operations that a
 * partner's credential ran (valid documents: `label(name, true)`); any later name, and a new name
 * of a stranger's or of a refused document, is `other`. So the label set stays bounded however
 * many names clients invent, and strangers cannot use it up.
 */
export class OperationNames {
  private readonly known = new Set<string>();
  private seen = 0;

  constructor(persisted: Iterable<string> = []) {
    this.allow(persisted);
  }

  /** Names that always get a label of their own (the persisted operations'), outside the budget. */
  allow(names: Iterable<string>): void {
    for (const name of names) if (name.length <= MAX_NAME_LENGTH) this.known.add(name);
  }

  /** The name's label; a name not labelled yet gets one (while the budget lasts) only when `admit`. */
  label(name: string | undefined | null, admit: boolean): string {
    if (!name) return ANONYMOUS;
    if (this.known.has(name)) return name;
    if (!admit || this.seen >= MAX_OPERATION_NAMES || name.length > MAX_NAME_LENGTH) return OTHER;
    this.seen++;
    this.known.add(name);
    return name;
  }
}
