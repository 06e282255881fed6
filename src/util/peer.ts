// cadre's optional peer dependencies: packages only some commands need, which a user installs
// beside cadre when they use those commands (package.json's peerDependenciesMeta). The versions
// come from the manifest, so an install hint always names the range cadre is tested with.
import manifest from "../../package.json" with { type: "json" };
import { CadreError } from "../errors.ts";

/** A package cadre loads only for some commands: the claude CLI, and BullMQ with its Redis client for `--redis`. */
export type PeerName = keyof typeof manifest.peerDependencies;

/** The npm install argument for `name`, at the version range cadre declares (e.g. `bullmq@^6.7.0`). */
export function peerSpec(name: PeerName): string {
  return `${name}@${manifest.peerDependencies[name]}`;
}

/** An optional peer dependency a command needs is not installed. */
export class MissingPeerError extends CadreError {
  readonly packages: readonly PeerName[];

  constructor(packages: readonly PeerName[], purpose: string, cause?: unknown) {
    super("MISSING_DEPENDENCY", `${purpose} needs ${packages.join(" and ")}, not installed: npm install ${packages.map(peerSpec).join(" ")}`, {
      cause,
    });
    this.packages = packages;
  }
}

/** Whether `error` is the module loader's "package not found" for `name` (Node: ERR_MODULE_NOT_FOUND, "Cannot find package 'name'"). */
function isMissing(error: unknown, name: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") && typeof message === "string" && message.includes(`'${name}'`);
}

/**
 * Loads a module that imports optional peer dependencies; when one of `packages` is missing,
 * throws a MissingPeerError that names them all with the command that installs them.
 */
export async function loadWithPeers<T>(packages: readonly PeerName[], purpose: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (!packages.some((name) => isMissing(error, name))) throw error;
    throw new MissingPeerError(packages, purpose, error);
  }
}
