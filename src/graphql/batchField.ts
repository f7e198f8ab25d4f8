/**
 * The GraphQL field extension that makes a field a batch for documentCost:
 * `extensions: { [BATCH_EXTENSION]: { items: 'input.items', max: 50 } }` names the list argument
 * holding the batch (a dotted path into the arguments) and the most items the field takes.
 */
export const BATCH_EXTENSION = 'batch';

export interface BatchExtension {
  items: string;
  max: number;
}
