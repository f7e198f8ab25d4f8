export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  perPage: number;
  totalPages: number;
  hasNext: boolean;
}

/** A list read by position: an array, or a search's results (which copy only the part asked for). */
export interface PositionalList<T> {
  readonly length: number;
  slice(start: number, end: number): T[];
}

/** Page `page` of a list read by position. */
export function paginate<T>(all: PositionalList<T>, page: number, perPage: number): Page<T> {
  return pageOf(all.slice((page - 1) * perPage, page * perPage), all.length, page, perPage);
}

/** One page of `total` items (search results, bookings), with the spec's pagination figures. */
export function pageOf<T>(items: T[], total: number, page: number, perPage: number): Page<T> {
  const totalPages = Math.ceil(total / perPage);
  return { items, total, page, perPage, totalPages, hasNext: page < totalPages };
}
