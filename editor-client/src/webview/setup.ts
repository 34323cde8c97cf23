// The first run: with no model configured, the empty chat shows a card to choose one — the
// provider, the model, the server's address for an OpenAI-compatible one (Ollama, LM Studio,
// vLLM…), Set API Key (the palette's command: the key never enters the webview), a test of the
// connection, and Save (the extension writes `modus.models`). Under it, or alone once a model is
// set, what to try first and the keys to know.
import type { ModelCheckResult } from '../protocol/generated';
import { SetupModel, showsSetup, ViewState } from '../protocol/view';
import { button, byId, el, Host } from './dom';

interface Provider {
  id: string;
  label: string;
  provider: 'anthropic' | 'openai';
  model: string;
  /** the server's address, asked for: an OpenAI-compatible server */
  baseUrl?: string;
  key: boolean;
}

const PROVIDERS: Provider[] = [
  { id: 'anthropic', label: 'Anthropic', provider: 'anthropic', model: 'claude-sonnet-4-5', key: true },
  { id: 'openai', label: 'OpenAI', provider: 'openai', model: 'gpt-5', key: true },
  { id: 'compatible', label: 'OpenAI-compatible server (Ollama, LM Studio, vLLM…)', provider: 'openai', model: 'llama3.1', baseUrl: 'http://localhost:11434/v1', key: false },
];

const EXAMPLES = [
  'Explain what this project does and how it is laid out',
  'Find where errors are handled and list the files',
  'Plan a small refactoring of the largest function, then wait for my go',
];

const KEYS: [string, string][] = [
  ['Enter', 'send (Shift+Enter: a new line)'],
  ['Escape', 'cancel the running turn'],
  ['↑ / ↓', 'bring back your earlier messages'],
  ['@ and /', 'name an agent, run a command'],
  ['Ctrl+Alt+M', 'focus this box'],
  ['Ctrl+Alt+P', 'switch PLAN ⇄ ACT'],
];

export interface Setup {
  box: HTMLElement;
  provider: HTMLSelectElement;
  model: HTMLInputElement;
  baseUrl: HTMLInputElement;
  urlRow: HTMLElement;
  keyButton: HTMLButtonElement;
  status: HTMLElement;
  models: HTMLDataListElement;
  test: HTMLButtonElement;
  /** the check last drawn */
  shown: ModelCheckResult | null | undefined;
}

export function mount(host: Host): Setup {
  const box = byId<HTMLElement>('setup');
  const provider = el('select', 'setup-provider');
  provider.id = 'setup-provider';
  for (const p of PROVIDERS) provider.appendChild(new Option(p.label, p.id));
  const model = el('input', 'setup-model');
  model.id = 'setup-model';
  model.setAttribute('list', 'setup-models');
  const models = el('datalist');
  models.id = 'setup-models';
  const baseUrl = el('input', 'setup-url');
  baseUrl.id = 'setup-url';
  const field = (label: string, input: HTMLElement) => {
    const l = el('label', 'setup-field', undefined, el('span', undefined, label), input);
    return l;
  };
  const urlRow = field('Server address', baseUrl);
  const s: Setup = {
    box,
    provider,
    model,
    baseUrl,
    urlRow,
    keyButton: button('Set API Key', 'secondary', () => host.post({ type: 'setApiKey' })),
    status: el('div', 'setup-status'),
    models,
    test: button('Test Connection', 'secondary', () => host.post({ type: 'checkModel', model: chosen(s) })),
    shown: undefined,
  };
  s.status.setAttribute('role', 'status');
  const picked = () => {
    const p = current(s);
    model.value = p.model;
    baseUrl.value = p.baseUrl ?? '';
    urlRow.hidden = !p.baseUrl;
    s.keyButton.hidden = !p.key;
  };
  provider.addEventListener('change', picked);
  picked();
  box.append(
    el('div', 'setup-title', 'Choose a model'),
    el('div', 'setup-note', 'No model is configured yet: Modus can only answer with a note. Pick one; the key is kept in VS Code\'s secret storage.'),
    field('Provider', provider),
    field('Model', model),
    models,
    urlRow,
    el(
      'div',
      'buttons',
      undefined,
      button('Save', 'setup-save', () => host.post({ type: 'saveModel', model: chosen(s) })),
      s.test,
      s.keyButton,
      button('Not now', 'secondary', () => host.post({ type: 'closeSetup' })),
    ),
    s.status,
  );
  return s;
}

export function render(s: Setup, view: ViewState) {
  s.box.hidden = !showsSetup(view);
  s.test.disabled = view.setup.checking;
  const check = view.setup.checking ? null : view.setup.check;
  if (check === s.shown && !view.setup.checking) return;
  s.shown = check;
  s.status.className = 'setup-status' + (check ? (check.ok ? ' ok' : ' failed') : '');
  s.status.textContent = view.setup.checking ? 'Testing the connection…' : (check?.message ?? '');
  s.models.replaceChildren(...(check?.models ?? []).map((m) => new Option(m, m)));
}

function current(s: Setup): Provider {
  return PROVIDERS.find((p) => p.id === s.provider.value) ?? PROVIDERS[0];
}

function chosen(s: Setup): SetupModel {
  const p = current(s);
  return { provider: p.provider, model: s.model.value.trim() || p.model, ...(p.baseUrl ? { baseUrl: s.baseUrl.value.trim() || p.baseUrl } : {}) };
}

/** The empty chat: what to try first (a click puts it in the message box) and the keys to know. */
export function welcome(): HTMLElement {
  const tries = el('ul', 'welcome-examples');
  for (const text of EXAMPLES) {
    tries.appendChild(
      el('li', undefined, undefined, button(text, 'link example', () => {
        const input = byId<HTMLTextAreaElement>('input');
        input.value = text;
        input.focus();
        input.setSelectionRange(text.length, text.length);
      })),
    );
  }
  const keys = el('dl', 'welcome-keys');
  for (const [key, what] of KEYS) keys.append(el('dt', undefined, undefined, el('kbd', undefined, key)), el('dd', undefined, what));
  return el(
    'div',
    'empty',
    undefined,
    el('p', undefined, 'Ask Modus to do something. The current mode decides which tools it may use.'),
    el('div', 'welcome-title', 'Try'),
    tries,
    el('div', 'welcome-title', 'Keys'),
    keys,
  );
}
