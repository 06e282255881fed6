// A promise's value, or null when it does not settle in time: a bounded wait on what may never answer.

/** `promise`'s value, or null when it has not settled within `ms` (its later rejection is then dropped). */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
    promise.catch(() => undefined);
  }
}
