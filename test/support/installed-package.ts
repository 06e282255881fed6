// cadre as a user gets it from the registry: `npm pack` of this repository, installed into
// a fresh project. Used by the packaging test and by bench/startup.ts.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";

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
 * Packs the repository and installs the tarball (and `extra` packages, e.g. @types/node) into a
 * new project under the system temp directory. dist/ must be built already (`npm run build`;
 * vitest's globalSetup does it): packing with scripts would rebuild dist/ under tests that run it.
 * Dependencies come from npm's cache when it has them (`npm ci` filled it), else from the registry.
 */
export async function installPackedCadre(extra: string[] = []): Promise<InstalledCadre> {
  const dir = await mkdtemp(join(tmpdir(), "cadre-package-"));
  const remove = () => rm(dir, { recursive: true, force: true, maxRetries: 3 });
  try {
    const npm = (args: string[], cwd: string) => execa("npm", [...args, "--no-audit", "--no-fund", "--loglevel=error"], { cwd, all: true });
    const packed = await npm(["pack", "--ignore-scripts", "--json", "--pack-destination", dir], REPO);
    const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }];
    const tarball = join(dir, filename);
    const manifest = JSON.parse(await readFile(join(REPO, "package.json"), "utf8")) as { allowScripts?: Record<string, boolean> };
    // The user's project allows the pinned claude package's install script, as cadre's own does.
    const consumer = { name: "cadre-consumer", private: true, type: "module", allowScripts: manifest.allowScripts };
    await writeFile(join(dir, "package.json"), `${JSON.stringify(consumer, null, 2)}\n`);
    await npm(["install", "--prefer-offline", tarball, ...extra], dir);
    return { dir, packageDir: join(dir, "node_modules", "cadre"), tarball, remove };
  } catch (error) {
    await remove();
    throw error;
  }
}
