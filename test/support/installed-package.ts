// cadre as a user gets it from the registry: `npm pack` of this repository, installed into
// a fresh project. Used by the packaging test and by bench/startup.ts.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { consumerProject, type Lock, type Manifest } from "./consumer-lock.ts";

export const REPO = fileURLToPath(new URL("../../", import.meta.url));

export interface InstalledCadre {
  /** The consumer project; cadre is in its node_modules. */
  dir: string;
  /** node_modules/cadre inside it. */
  packageDir: string;
  tarball: string;
  remove(): Promise<void>;
}

/**
 * Packs the repository and installs the tarball (and `extras`, packages of cadre's lock such as
 * @types/node) into a new project under the system temp directory. dist/ must be built already
 * (`npm run build`; vitest's globalSetup does it): packing with scripts would rebuild dist/ under
 * tests that run it. The install is `npm ci --offline --engine-strict` with cadre's locked
 * versions, from the npm cache that `npm ci` in the repository filled: no registry is asked.
 * Only when that cache lacks a package (ENOTCACHED: a cache cleaned or never filled) does the
 * install fall back to the registry, for this step alone. cadre's optional peers (the claude
 * CLI, bullmq, ioredis) are not installed unless `extras` names them, as for a user.
 */
export async function installPackedCadre(extras: string[] = []): Promise<InstalledCadre> {
  const dir = await mkdtemp(join(tmpdir(), "cadre-package-"));
  const remove = () => rm(dir, { recursive: true, force: true, maxRetries: 3 });
  try {
    const npm = (args: string[], cwd: string) => execa("npm", [...args, "--no-audit", "--no-fund", "--loglevel=error"], { cwd, all: true });
    const packed = await npm(["pack", "--ignore-scripts", "--json", "--pack-destination", dir], REPO);
    const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }];
    const read = async <T>(file: string) => JSON.parse(await readFile(join(REPO, file), "utf8")) as T;
    const consumer = consumerProject(await read<Manifest>("package.json"), await read<Lock>("package-lock.json"), filename, extras);
    await writeFile(join(dir, "package.json"), `${JSON.stringify(consumer.manifest, null, 2)}\n`);
    await writeFile(join(dir, "package-lock.json"), `${JSON.stringify(consumer.lock, null, 2)}\n`);
    const install = (from: string) => npm(["ci", "--engine-strict", from], dir);
    await install("--offline").catch(async (error: { all?: string }) => {
      if (!String(error.all ?? error).includes("ENOTCACHED")) throw new Error(`npm ci --offline of the packed cadre failed:\n${error.all ?? error}`);
      await install("--prefer-offline").catch((retry: { all?: string }) => {
        throw new Error(`npm ci of the packed cadre failed, from npm's cache and then the registry:\n${retry.all ?? retry}`);
      });
    });
    return { dir, packageDir: join(dir, "node_modules", "cadre"), tarball: join(dir, filename), remove };
  } catch (error) {
    await remove();
    throw error;
  }
}
