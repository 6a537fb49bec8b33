import { existsSync } from 'node:fs';
import { chromium, Browser } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`; `.ci/run` installs it when it is missing). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const chromiumAvailable = existsSync(CHROMIUM);

/** `describe` when Chromium is here, else `describe.skip` with the title saying why. */
export function browserSuite(title: string, body: () => void): void {
  if (chromiumAvailable) describe(title, body);
  else describe.skip(`${title} (skipped: no Chromium at ${CHROMIUM}; apt-get install chromium)`, body);
}

/** Headless Chromium as this machine allows it: no sandbox (root), no background traffic (no internet). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
}
