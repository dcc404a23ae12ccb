/**
 * The optional OS keychain backend (`SVC_KEYCHAIN=1`, DESIGN.md "Keys").
 *
 * A KEY's seed can live in the OS keychain instead of a PEM file. That needs a native module;
 * none is a dependency of this package, so it is loaded only when present
 * (`@napi-rs/keyring`, whose `Entry(service, account)` has synchronous
 * `getPassword`/`setPassword`/`deletePassword`). Without it the bridge says so in one line on
 * stderr and keeps KEYS in the key directory.
 */

/** Where seeds are kept outside the key directory. Secrets are lowercase hex seeds. */
export interface SeedVault {
  readonly name: string;
  get(account: string): string | undefined;
  set(account: string, secret: string): void;
  remove(account: string): void;
}

/** The keychain service name every seed is filed under. */
export const KEYCHAIN_SERVICE = 'svc';

const KEYRING_MODULE = '@napi-rs/keyring';

interface KeyringEntry {
  getPassword(): string | null | undefined;
  setPassword(secret: string): void;
  deletePassword(): boolean | void;
}
type KeyringEntryConstructor = new (service: string, account: string) => KeyringEntry;

function vaultFromKeyring(Entry: KeyringEntryConstructor): SeedVault {
  return {
    name: KEYRING_MODULE,
    get(account) {
      const secret = new Entry(KEYCHAIN_SERVICE, account).getPassword();
      return typeof secret === 'string' && secret !== '' ? secret : undefined;
    },
    set(account, secret) {
      new Entry(KEYCHAIN_SERVICE, account).setPassword(secret);
    },
    remove(account) {
      try {
        new Entry(KEYCHAIN_SERVICE, account).deletePassword();
      } catch {
        // Nothing to remove.
      }
    },
  };
}

export type KeychainChoice = { vault: SeedVault } | { vault: undefined; message: string };

/**
 * The keychain when `SVC_KEYCHAIN=1` asks for it and its module loads; otherwise undefined and,
 * when it was asked for, the one-line message to print.
 */
export async function openKeychain(wanted: boolean, home: string): Promise<KeychainChoice | undefined> {
  if (!wanted) return undefined;
  try {
    // A name in a variable: TypeScript must not resolve a module that is not installed.
    const name: string = KEYRING_MODULE;
    const mod = (await import(name)) as { Entry?: unknown };
    if (typeof mod.Entry !== 'function') throw new Error('no Entry class');
    return { vault: vaultFromKeyring(mod.Entry as KeyringEntryConstructor) };
  } catch {
    return {
      vault: undefined,
      message: `svc-bridge: SVC_KEYCHAIN=1 but no OS keychain module is installed (npm install ${KEYRING_MODULE}); keeping KEYS in ${home}/keys`,
    };
  }
}
