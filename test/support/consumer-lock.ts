// The lock file of a project that installs cadre's tarball: cadre's dependencies at the
// versions of cadre's own package-lock.json. With it, `npm ci --offline` installs from npm's
// cache (which `npm ci` in the repository filled) and the packaging test asks no registry.

interface LockEntry {
  version?: string;
  dev?: boolean;
  devOptional?: boolean;
  peer?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  [field: string]: unknown;
}

export interface Lock {
  packages: Record<string, LockEntry>;
}

export interface Manifest {
  name: string;
  version: string;
  license?: string;
  bin?: Record<string, string>;
  engines?: Record<string, string>;
  dependencies: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  allowScripts?: Record<string, boolean>;
}

/** Where Node finds `name` when `from` (a lock path such as "node_modules/a") requires it. */
function resolveIn(packages: Lock["packages"], from: string, name: string): string | undefined {
  let base = from;
  for (;;) {
    const key = `${base ? `${base}/` : ""}node_modules/${name}`;
    if (packages[key]) return key;
    if (!base) return undefined;
    const cut = base.lastIndexOf("/node_modules/");
    base = cut === -1 ? "" : base.slice(0, cut);
  }
}

/** The lock entries `roots` need, walked through dependencies, optional and peer dependencies. */
function closure(packages: Lock["packages"], roots: string[]): Record<string, LockEntry> {
  const needed: Record<string, LockEntry> = {};
  const queue: string[] = [];
  const visit = (from: string, name: string, optional: boolean) => {
    const key = resolveIn(packages, from, name);
    if (!key) {
      if (optional) return;
      throw new Error(`${name} (needed by ${from || "the consumer"}) is not in cadre's package-lock.json; run npm ci in the repository`);
    }
    if (needed[key]) return;
    // Dev-only in cadre's repository, a plain dependency of the consumer.
    const { dev: _dev, devOptional: _devOptional, peer: _peer, ...entry } = packages[key]!;
    needed[key] = entry;
    queue.push(key);
  };
  for (const name of roots) visit("", name, false);
  for (let key = queue.shift(); key !== undefined; key = queue.shift()) {
    const entry = packages[key]!;
    for (const name of Object.keys(entry.dependencies ?? {})) visit(key, name, false);
    for (const name of Object.keys(entry.optionalDependencies ?? {})) visit(key, name, true);
    for (const name of Object.keys(entry.peerDependencies ?? {})) visit(key, name, true);
  }
  return needed;
}

/**
 * The consumer's package.json and package-lock.json: it depends on the tarball (a path
 * relative to the consumer) and on `extras`, packages of cadre's lock (e.g. @types/node).
 */
export function consumerProject(manifest: Manifest, lock: Lock, tarball: string, extras: string[] = []): { manifest: object; lock: object } {
  const extraVersions = Object.fromEntries(extras.map((name) => [name, lock.packages[`node_modules/${name}`]?.version ?? "*"]));
  const dependencies = { cadre: `file:${tarball}`, ...extraVersions };
  const cadre = {
    version: manifest.version,
    resolved: `file:${tarball}`,
    license: manifest.license,
    dependencies: manifest.dependencies,
    peerDependencies: manifest.peerDependencies,
    peerDependenciesMeta: manifest.peerDependenciesMeta,
    bin: manifest.bin,
    engines: manifest.engines,
  };
  const packages = {
    "": { name: "cadre-consumer", dependencies },
    "node_modules/cadre": cadre,
    ...closure(lock.packages, [...Object.keys(manifest.dependencies), ...extras]),
  };
  return {
    // The user's project decides the install scripts as cadre's own does (npm warns of any left undecided).
    manifest: { name: "cadre-consumer", private: true, type: "module", allowScripts: manifest.allowScripts, dependencies },
    lock: { name: "cadre-consumer", lockfileVersion: 3, requires: true, packages },
  };
}
