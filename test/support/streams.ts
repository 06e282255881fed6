// Reading a stream whole in a test: every value it gives, in order, once it ends.

/** Every value `stream` gives, once it ends. */
export async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const values: T[] = [];
  for await (const value of stream) values.push(value);
  return values;
}
