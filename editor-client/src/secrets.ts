// The providers' API keys, kept in VS Code's secret storage and given to the server in its
// environment (so a changed key restarts the server).
import * as vscode from 'vscode';

const SECRET_KEYS = { anthropic: 'modus.apiKey.anthropic', openai: 'modus.apiKey.openai' } as const;
const KEY_ENV = { anthropic: 'ANTHROPIC_API_KEY', openai: 'OPENAI_API_KEY' } as const;

/** The environment variables of the stored keys (none for a provider without one). */
export async function apiKeyEnv(secrets: vscode.SecretStorage): Promise<NodeJS.ProcessEnv> {
  const env: NodeJS.ProcessEnv = {};
  for (const provider of ['anthropic', 'openai'] as const) {
    const key = await secrets.get(SECRET_KEYS[provider]);
    if (key) env[KEY_ENV[provider]] = key;
  }
  return env;
}

/** `Modus: Set API Key`: stores or removes a provider's key, then restarts the server. */
export async function setApiKey(secrets: vscode.SecretStorage, restart: () => Promise<void>): Promise<void> {
  const provider = await vscode.window.showQuickPick(
    [
      { label: 'Anthropic', description: KEY_ENV.anthropic, id: 'anthropic' as const },
      { label: 'OpenAI (or OpenAI-compatible)', description: KEY_ENV.openai, id: 'openai' as const },
    ],
    { placeHolder: 'API key for which provider?' },
  );
  if (!provider) return;
  const key = await vscode.window.showInputBox({
    prompt: `${provider.label} API key (stored in VS Code's secret storage; empty to remove)`,
    password: true,
    ignoreFocusOut: true,
  });
  if (key === undefined) return;
  if (key.trim()) await secrets.store(SECRET_KEYS[provider.id], key.trim());
  else await secrets.delete(SECRET_KEYS[provider.id]);
  // The key reaches the server through its environment: restart it.
  await restart();
  void vscode.window.showInformationMessage(`Modus: ${provider.label} API key ${key.trim() ? 'saved' : 'removed'}.`);
}
