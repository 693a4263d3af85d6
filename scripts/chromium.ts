// Test infrastructure: Debian's headless Chromium, driven by playwright-core, for the playground's browser test.
import { existsSync } from 'node:fs'
import { type Browser, chromium } from 'playwright-core'
import { ensureDebianPackage } from './debian-package'

/** Where Debian's chromium package puts the browser. */
export const CHROMIUM = '/usr/bin/chromium'

/** Debian's chromium, installed when missing and the tests run as root. */
export function ensureChromium(): void {
  ensureDebianPackage({
    name: 'chromium',
    present: () => existsSync(CHROMIUM),
    hint: 'Install it (Debian/Ubuntu: `sudo apt-get install -y chromium`)',
  })
}

/**
 * A headless Chromium with a fresh profile (playwright's own temporary one), and no network of its own beyond the
 * pages it is sent to: no background requests, no updates, no sync (this machine has no network but loopback).
 */
export async function launchChromium(): Promise<Browser> {
  ensureChromium()
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
}
