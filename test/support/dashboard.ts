// The dashboard's tests: Debian's chromium driven by playwright-core (no browser download), and
// cadre started as a user starts it, with its page address read from what it prints.
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { execa, type ResultPromise } from "execa";
import { type Browser, chromium, type Page } from "playwright-core";
import { expect, onTestFinished } from "vitest";
import { bin, repo } from "./cli.ts";

export const CHROMIUM = "/usr/bin/chromium";

/** Where each run's screenshots go (ignored by git): look at them after a run. */
export const SHOTS = join(repo, "test", "dashboard", "out");

/** A name that resolves to loopback inside the browser only: a page reached through it plays DNS rebinding. */
export const REBOUND_HOST = "rebound.test";

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`no ${CHROMIUM}: install Debian's chromium (apt-get install chromium; .ci/run does)`);
  await mkdir(SHOTS, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM, args: [`--host-resolver-rules=MAP ${REBOUND_HOST} 127.0.0.1`] });
}

export interface Served {
  process: ResultPromise;
  /** The page's address as printed, token included. */
  url: string;
  origin: string;
  token: string;
  output: () => string;
}

/**
 * Starts `cadre <args>` and waits for the line that gives the dashboard's address. The process is
 * killed after the test if it is still running; tests that check how it ends end it themselves.
 */
export async function startCadre(args: string[], options: { cwd: string; env?: Record<string, string> }): Promise<Served> {
  const child = execa("node", [bin, ...args], { cwd: options.cwd, env: options.env, reject: false, stdin: "ignore" });
  let output = "";
  const collect = (chunk: Buffer) => (output += chunk.toString("utf8"));
  child.stdout!.on("data", collect);
  child.stderr!.on("data", collect);
  onTestFinished(async () => {
    if (child.exitCode === null) child.kill("SIGKILL");
    await child;
  });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const match = /(http:\/\/127\.0\.0\.1:\d+)\/#token=(\S+)/.exec(output);
    if (match) return { process: child, url: match[0], origin: match[1]!, token: match[2]!, output: () => output };
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`cadre printed no dashboard address:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A page with its errors collected: a script error on the page fails the test. */
export async function openPage(browser: Browser, url: string, colorScheme: "light" | "dark" = "light"): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1440, height: 960 }, colorScheme });
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  onTestFinished(async () => {
    await page.close();
    expect(errors, "script errors on the page").toEqual([]);
  });
  await page.goto(url);
  return page;
}

// Code passed to page.evaluate runs in the page; tsc checks this file without the DOM's types, hence `any` there.

/** The status each row of the table has shown, in order, recorded in the page as it changes. */
export async function recordStatuses(page: Page): Promise<() => Promise<Record<string, string[]>>> {
  await page.waitForSelector("#tasks tbody tr[data-key]");
  await page.evaluate(() => {
    const window = globalThis as any;
    const log: Record<string, string[]> = {};
    const note = (tr: any) => {
      // Spacers and group rows stand for rows; only a row of a task or session has a key.
      if (!tr.dataset.key) return;
      const seen = log[tr.dataset.key] ?? [];
      log[tr.dataset.key] = seen;
      if (tr.dataset.status && seen.at(-1) !== tr.dataset.status) seen.push(tr.dataset.status);
    };
    const body = window.document.querySelector("#tasks tbody");
    for (const tr of body.querySelectorAll("tr")) note(tr);
    new window.MutationObserver((changes: any[]) => {
      for (const change of changes) {
        if (change.target.tagName === "TR") note(change.target);
        for (const added of change.addedNodes) if (added.tagName === "TR") note(added);
      }
    }).observe(body, { subtree: true, childList: true, attributes: true, attributeFilter: ["data-status"] });
    window.statusLog = log;
  });
  return () => page.evaluate(() => (globalThis as any).statusLog as Record<string, string[]>);
}

/** The table as the page shows it: row key → status. */
export function tableStatuses(page: Page): Promise<Record<string, string>> {
  return page.$$eval("#tasks tbody tr[data-key]", (rows: any[]) => Object.fromEntries(rows.map((tr) => [tr.dataset.key, tr.dataset.status])));
}

/** The keys of the table's rows, in order. */
export function tableKeys(page: Page): Promise<string[]> {
  return page.$$eval("#tasks tbody tr[data-key]", (rows: any[]) => rows.map((tr) => tr.dataset.key));
}
