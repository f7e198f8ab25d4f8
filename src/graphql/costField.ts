/**
 * The GraphQL field extension that makes every instance of a field cost points of its own, for
 * documentCost: a field that asks the provider for something per parent object
 * (`Property.availability`: one property's rates, as one batch rates item costs), however the
 * service batches the calls. `extensions: { [INSTANCE_COST]: { points: 1 } }`.
 */
export const INSTANCE_COST = 'instanceCost';

export interface InstanceCost {
  /** Points per instance: the field's parents times this. */
  points: number;
}

/**
 * The GraphQL field extension of a list that comes whole with the object holding it (a
 * property's amenities, images and their links: content the same provider answer carries), for
 * documentCost: it counts as a single object does (free, its items not multiplied), not as a list
 * of 10. `extensions: { [WHOLE_LIST]: true }`.
 */
export const WHOLE_LIST = 'wholeList';
