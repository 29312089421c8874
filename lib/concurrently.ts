// Work over a list with a bounded number of items under way at once, the
// results in the list's order whatever order they finish in.

/** fn(item) for every item, at most `limit` at once. `fn` should not reject: a rejection rejects the whole while other items still run. */
export async function mapConcurrently<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
  return results;
}
