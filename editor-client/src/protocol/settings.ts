// Builds the `modus` settings object (initializationOptions.modus and
// workspace/didChangeConfiguration {settings: {modus}}) from the editor's configuration.
import type { Settings } from './generated';

/** Setting keys forwarded to the server, under `modus.` in VS Code. */
export const SERVER_SETTING_KEYS = [
  'models',
  'autoApprove',
  'yolo',
  'modeSwitchDelayMs',
  'agents',
  'members',
  'stateDir',
  'globalModesFile',
  'diagnostics',
  'browser',
  'space',
] as const;

/**
 * `get(key)` reads `modus.<key>`. Empty values (unset, null, '', empty agents) are left out so
 * that the server applies its own defaults.
 */
export function buildSettings(get: (key: string) => unknown): Settings {
  const out: Record<string, unknown> = {};
  for (const key of SERVER_SETTING_KEYS) {
    const value = get(key);
    if (value === undefined || value === null || value === '') continue;
    if (key === 'agents' && Array.isArray(value) && value.length === 0) continue;
    // an emptied space (`{}`, what the settings editor leaves) is no space, not an invalid one
    if (key === 'space' && typeof value === 'object' && Object.keys(value as object).length === 0) continue;
    out[key] = value;
  }
  return out as Settings;
}

/** What `WorkspaceConfiguration.inspect` tells of a setting: its value in each scope. */
export interface SettingScopes {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/**
 * The value of a setting when the user set it in some scope (`value`, as VS Code resolves it),
 * else undefined: the default VS Code would fill in is not the user's choice.
 */
export function explicitValue(scopes: SettingScopes | undefined, value: unknown): unknown {
  if (!scopes) return undefined;
  const set = [scopes.globalValue, scopes.workspaceValue, scopes.workspaceFolderValue].some((v) => v !== undefined);
  return set ? value : undefined;
}
