// The model set-up (the chat's first run): whether the user's `modus.models` names a default
// model, a model's settings tried on the server (`modus/models/check`) and saved as
// `modus.models.default` in the user's settings (the server gets them as any change of settings).
// API keys stay out of it: Set API Key is the palette's command, into VS Code's secret storage.
import * as vscode from 'vscode';
import { errorMessage } from './protocol/client';
import type { SetupModel } from './protocol/view';
import type { ServerApi } from './server';
import type { ViewStore } from './store';

export class ModelSetup {
  constructor(
    private readonly server: ServerApi,
    private readonly store: ViewStore,
  ) {}

  /** Tells the chat whether the user's settings name a default model (on start and on a change). */
  refresh(): void {
    const models = vscode.workspace.getConfiguration('modus').get<{ default?: { provider?: string } }>('models') ?? {};
    this.store.dispatch({ type: 'setup', modelsSet: typeof models.default?.provider === 'string' });
  }

  /** `Modus: Set Up a Model`: the card in the chat, shown. */
  async open(): Promise<void> {
    await vscode.commands.executeCommand('modus.chat.focus');
    this.store.dispatch({ type: 'setup', open: true });
  }

  close(): void {
    this.store.dispatch({ type: 'setup', open: false });
  }

  async check(model: SetupModel): Promise<void> {
    const api = this.server.requireApi();
    if (!api) return;
    this.store.dispatch({ type: 'modelCheck', result: null });
    try {
      this.store.dispatch({ type: 'modelCheck', result: await api.checkModel(clean(model)) });
    } catch (err) {
      this.store.dispatch({ type: 'modelCheck', result: { ok: false, message: errorMessage(err), models: [] } });
    }
  }

  /** The model as the user's default (User settings): what else `modus.models` holds is kept. */
  async save(model: SetupModel): Promise<void> {
    const config = vscode.workspace.getConfiguration('modus');
    const models = config.inspect<Record<string, unknown>>('models')?.globalValue ?? {};
    await config.update('models', { ...models, default: clean(model) }, vscode.ConfigurationTarget.Global);
    this.store.dispatch({ type: 'setup', modelsSet: true, open: false });
    void vscode.window.showInformationMessage(`Modus: the default model is ${model.provider} ${model.model ?? ''}`.trimEnd() + '.');
  }
}

/** Only what was filled in. */
function clean(model: SetupModel): SetupModel {
  return {
    provider: model.provider,
    ...(model.model?.trim() ? { model: model.model.trim() } : {}),
    ...(model.baseUrl?.trim() ? { baseUrl: model.baseUrl.trim() } : {}),
  };
}
