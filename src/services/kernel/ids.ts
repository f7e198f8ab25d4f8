/** Identifiers: the UUIDs of the service's rows, and reading many rows by them at once. */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(id: string): boolean {
  return UUID.test(id);
}

/**
 * The rows `load` finds for `ids`, in the order of `ids` (a batch of a DataLoader): null where it
 * finds none. Ids that are not UUIDs are never looked up (the database would refuse them), and
 * UUIDs are compared in lower case, as they are stored.
 */
export async function rowsById<T extends { id: string }>(ids: readonly string[], load: (uuids: string[]) => Promise<T[]>): Promise<(T | null)[]> {
  const wanted = [...new Set(ids.filter(isUuid).map((id) => id.toLowerCase()))];
  const rows = wanted.length ? await load(wanted) : [];
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.map((id) => byId.get(id.toLowerCase()) ?? null);
}
