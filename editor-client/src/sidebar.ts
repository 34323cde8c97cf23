// The sidebar's chat webview (`modus.chat`): its HTML, the view state it is sent (a snapshot
// when it is ready, then the actions, gathered a frame at a time: a streamed reply is hundreds
// of deltas), and the messages it sends back.
import * as vscode from 'vscode';
import type { ChatImageResult } from './protocol/generated';
import type { Action, ViewState } from './protocol/view';
import { chatHtml, makeNonce } from './webview/html';
import type { FromWebview, ToWebview } from './webview/messages';

/** How long actions gather before they are posted together: a frame. */
const FRAME_MS = 16;

export class Sidebar implements vscode.WebviewViewProvider {
  private webview: vscode.WebviewView | undefined;
  private gathered: Action[] = [];
  /** the composer is to have the focus once the webview is ready */
  private focusWanted = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly snapshot: () => ViewState,
    /** each message of the webview's but `ready` */
    private readonly onMessage: (m: Exclude<FromWebview, { type: 'ready' }>) => Promise<void>,
    /** the chat was shown or hidden (what is kept fresh only while it shows, e.g. the space's members) */
    private readonly onVisible: (visible: boolean) => void = () => undefined,
  ) {}

  resolveWebviewView(webviewView: vscode.WebviewView): void {
    this.webview = webviewView;
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    const webview = webviewView.webview;
    webview.options = { enableScripts: true, localResourceRoots: [media, dist] };
    webview.html = chatHtml({
      cspSource: webview.cspSource,
      nonce: makeNonce(),
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js')).toString(),
      styleUri: webview.asWebviewUri(vscode.Uri.joinPath(media, 'webview.css')).toString(),
    });
    webview.onDidReceiveMessage((m: FromWebview) => {
      if (m.type !== 'ready') return void this.onMessage(m);
      this.sendSnapshot();
      if (this.focusWanted) this.send({ type: 'focusComposer' });
      this.focusWanted = false;
    });
    webviewView.onDidChangeVisibility(() => {
      if (this.webview === webviewView) this.onVisible(webviewView.visible);
    });
    webviewView.onDidDispose(() => {
      if (this.webview !== webviewView) return;
      this.webview = undefined;
      this.onVisible(false);
    });
    this.onVisible(webviewView.visible);
  }

  /** `modus.ui.focusComposer`: the chat shown, the focus in its message box. */
  async focusComposer(): Promise<void> {
    await vscode.commands.executeCommand('modus.chat.focus');
    if (this.webview) this.send({ type: 'focusComposer' });
    else this.focusWanted = true; // when it is ready
  }

  /** A message taken back from the queue: its text and its images in the composer again. */
  fillComposer(text: string, images?: ChatImageResult[]): void {
    this.send({ type: 'fillComposer', text, ...(images?.length ? { images } : {}) });
  }

  /** The action, posted with the others of its frame (in order). */
  post(action: Action): void {
    if (!this.webview) return; // the snapshot it gets once shown has it
    this.gathered.push(action);
    this.timer ??= setTimeout(() => this.flush(), FRAME_MS);
  }

  private flush(): void {
    this.timer = undefined;
    const actions = this.gathered;
    this.gathered = [];
    if (actions.length) this.send({ type: 'actions', actions });
  }

  /** The view as it is: the actions gathered so far are in it already. */
  private sendSnapshot(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.gathered = [];
    this.send({ type: 'snapshot', view: this.snapshot() });
  }

  /** A message posted at once, not gathered with the actions (a snapshot, the focus, an answer to the webview). */
  send(message: ToWebview): void {
    void this.webview?.webview.postMessage(message);
  }
}
