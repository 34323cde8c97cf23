// The sidebar's chat webview (`modus.chat`): its HTML, the view state it is sent (a snapshot
// when it is ready, then each action), and the messages it sends back.
import * as vscode from 'vscode';
import type { ViewState } from './protocol/view';
import { chatHtml, makeNonce } from './webview/html';
import type { FromWebview, ToWebview } from './webview/messages';

export class Sidebar implements vscode.WebviewViewProvider {
  private webview: vscode.WebviewView | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly snapshot: () => ViewState,
    /** each message of the webview's but `ready` */
    private readonly onMessage: (m: Exclude<FromWebview, { type: 'ready' }>) => Promise<void>,
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
      if (m.type === 'ready') this.post({ type: 'snapshot', view: this.snapshot() });
      else void this.onMessage(m);
    });
    webviewView.onDidDispose(() => {
      if (this.webview === webviewView) this.webview = undefined;
    });
  }

  post(message: ToWebview): void {
    void this.webview?.webview.postMessage(message);
  }
}
