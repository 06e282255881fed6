/** Reads a key a user or a model named (an agent, a tool, a script, a hook) as an own property only: "toString" or "__proto__" is a name like any other. */
export function own<T>(record: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;
}
