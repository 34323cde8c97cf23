// The chat webview's HTML shell. No `vscode` import: the headless browser tests use it too.

export interface HtmlOptions {
  /** `webview.cspSource`: the origin the script and style are served from */
  cspSource: string;
  nonce: string;
  scriptUri: string;
  styleUri: string;
}

export function makeNonce(): string {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let out = '';
  for (let i = 0; i < 32; i++) out += chars[Math.floor(Math.random() * chars.length)];
  return out;
}

const attr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

export function chatHtml(o: HtmlOptions): string {
  const csp = [
    "default-src 'none'",
    `style-src ${o.cspSource}`,
    `font-src ${o.cspSource}`,
    `img-src ${o.cspSource} data:`,
    `script-src 'nonce-${o.nonce}'`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${attr(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${attr(o.styleUri)}">
<title>Modus</title>
</head>
<body>
<header id="bar">
  <label class="mode"><span class="mode-label">Mode</span><select id="mode" aria-label="Mode" title="Mode"></select></label>
  <button id="phase" type="button" class="badge" title="Phase: click to switch PLAN ⇄ ACT" aria-label="Phase" hidden></button>
  <span id="busy" class="busy" role="img" aria-label="Working" title="Working…" hidden><span class="spinner"></span><span class="busy-text" aria-hidden="true">working…</span></span>
  <span class="meters">
    <button id="rules" type="button" class="rules" aria-expanded="false" aria-controls="rules-panel" hidden></button>
    <span id="usage" class="usage" tabindex="0" role="note" aria-describedby="usage-tip" hidden><span class="usage-text"></span></span>
    <button id="context" type="button" class="context" hidden><span class="context-meter" aria-hidden="true"><span class="context-fill"></span><span class="context-mark"></span></span><span class="context-text"></span></button>
  </span>
  <div id="usage-tip" class="usage-tip" role="tooltip" hidden></div>
  <section id="rules-panel" class="rules-panel" aria-label="Rules" hidden></section>
  <span class="actions">
    <button id="cancel" type="button" class="icon" data-icon="stop" title="Cancel the running turn" aria-label="Cancel" hidden></button>
    <button id="history" type="button" class="icon" data-icon="history" title="Earlier conversations" aria-label="History" aria-expanded="false" aria-controls="conversations"></button>
    <button id="new" type="button" class="icon" data-icon="plus" title="New conversation" aria-label="New conversation"></button>
  </span>
</header>
<div id="yolo" class="yolo" role="note" hidden>YOLO: every action runs without asking.</div>
<div id="space" class="space" role="status" aria-label="Team space" hidden></div>
<div id="content">
  <div id="panels">
    <section id="plan" aria-label="Plan" hidden></section>
    <details id="todos" open hidden><summary><span class="todos-title">Todos</span> <span class="todos-count"></span></summary><ul class="todo-list"></ul></details>
    <details id="mcp" hidden><summary><span class="mcp-title">MCP servers</span> <span class="mcp-count"></span></summary><ul class="mcp-list" aria-label="MCP servers"></ul></details>
  </div>
  <section id="setup" class="card setup" aria-label="Set up a model" hidden></section>
  <main id="log" aria-label="Conversation"></main>
  <button id="latest" type="button" class="latest" hidden>↓ Latest</button>
  <section id="conversations" aria-label="Earlier conversations" hidden></section>
</div>
<div id="announce" class="visually-hidden" role="status" aria-live="polite"></div>
<div id="announce-alert" class="visually-hidden" role="alert" aria-live="assertive"></div>
<div id="starting" class="hint" role="status" hidden>Starting the Modus server…</div>
<form id="composer">
  <div id="queued" class="queued" aria-label="Queued messages" hidden></div>
  <div id="mentions" role="listbox" aria-label="Agents and members" hidden></div>
  <div id="command-hint" class="command-hint" hidden></div>
  <div id="attachments" class="attachments" aria-label="Images to send" hidden></div>
  <textarea id="input" rows="3" placeholder="Ask Modus… (@ names an agent, / a command; paste or drop images; Enter to send, Shift+Enter for a new line)" aria-label="Message" aria-autocomplete="list" aria-controls="mentions" readonly></textarea>
  <button id="send" type="submit" disabled>Send</button>
</form>
<section id="env" class="card env" hidden></section>
<section id="server" role="alert" hidden>
  <div class="server-title"></div>
  <div class="server-error"></div>
  <pre class="server-lines" hidden></pre>
  <div class="server-restart" hidden></div>
  <div class="buttons">
    <button type="button" data-fix="pickInterpreter" data-when="failed">Select Python Interpreter</button>
    <button type="button" class="secondary" data-fix="openSettings" data-when="failed">Open Setting</button>
    <button type="button" class="secondary" data-fix="showInstall" data-when="failed">Show Install Command</button>
    <button type="button" class="secondary" data-fix="showLog" data-when="failed stopped restarting">Show Log</button>
    <button type="button" class="secondary" data-fix="restart" data-when="failed stopped">Retry</button>
  </div>
</section>
<script nonce="${attr(o.nonce)}" src="${attr(o.scriptUri)}"></script>
</body>
</html>`;
}
