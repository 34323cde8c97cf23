// What the user asks for, from the palette (the `modus.ui.*` commands) or from the sidebar (its
// messages), each handed to the part that does it.
import * as vscode from 'vscode';
import type { Approvals } from './approvals';
import type { Checkpoints } from './checkpoints';
import type { Conversations } from './conversations';
import type { EditorActions } from './editorActions';
import type { Environment } from './environment';
import type { Images } from './images';
import type { McpServers } from './mcp';
import type { MessageActions } from './messageActions';
import type { Modes } from './modes';
import type { Rules } from './rules';
import { showSkills } from './skills';
import { setApiKey } from './secrets';
import type { Server } from './server';
import type { ModelSetup } from './setup';
import type { Sidebar } from './sidebar';
import type { FromWebview } from './webview/messages';

export interface Parts {
  server: Server;
  environment: Environment;
  secrets: vscode.SecretStorage;
  approvals: Approvals;
  conversations: Conversations;
  modes: Modes;
  checkpoints: Checkpoints;
  mcp: McpServers;
  rules: Rules;
  editor: EditorActions;
  sidebar: Sidebar;
  setup: ModelSetup;
  actions: MessageActions;
  images: Images;
}

export function registerCommands({ server, secrets, approvals, conversations, modes, sidebar, setup }: Parts): vscode.Disposable[] {
  const commands: Record<string, () => Promise<void>> = {
    'modus.ui.switchMode': () => modes.switchMode(),
    'modus.ui.showSystemPrompt': () => modes.showSystemPrompt(),
    'modus.ui.newConversation': () => conversations.create(),
    'modus.ui.cancel': () => conversations.cancel(),
    'modus.ui.condense': () => conversations.condense(),
    'modus.ui.togglePhase': () => modes.togglePhase(),
    'modus.ui.approvePlan': () => modes.decidePlan('approve'),
    'modus.ui.rejectPlan': () => modes.rejectPlan(),
    'modus.ui.setApiKey': () => setApiKey(secrets, () => server.restart()),
    'modus.ui.restartServer': () => server.restart(),
    'modus.ui.trustWorkspaceSettings': () => modes.trustWorkspaceSettings(),
    'modus.ui.showSkills': () => showSkills(server),
    'modus.ui.focusComposer': () => sidebar.focusComposer(),
    'modus.ui.setUpModel': () => setup.open(),
    'modus.review.approve': async () => approvals.decideReview('approve'),
    'modus.review.deny': async () => approvals.decideReview('deny'),
  };
  return Object.entries(commands).map(([id, run]) => vscode.commands.registerCommand(id, run));
}

export async function onWebviewMessage(p: Parts, m: Exclude<FromWebview, { type: 'ready' }>): Promise<void> {
  switch (m.type) {
    case 'send':
      return p.conversations.send(m.text, m.images);
    case 'fetchImage':
      return p.images.fetch(m.id);
    case 'openImage':
      return p.images.open(m.id);
    case 'approval':
      return p.approvals.answer(m);
    case 'review':
      return p.approvals.openReview(m.id);
    case 'planDecision':
      return p.modes.decidePlan(m.decision, m.feedback);
    case 'switchMode':
      return p.modes.switchTo(m.slug);
    case 'cancel':
      return p.conversations.cancel();
    case 'togglePhase':
      return p.modes.togglePhase();
    case 'newConversation':
      return p.conversations.create();
    case 'listConversations':
      return p.conversations.list();
    case 'openConversation':
      return p.conversations.open(m.conversationId);
    case 'listAgents':
      return p.conversations.listAgents();
    case 'listCommands':
      return p.conversations.listCommands();
    case 'listRules':
      return p.rules.refresh();
    case 'openRule':
      return p.rules.open(m.path);
    case 'mcpRestart':
      return p.mcp.restart(m.name);
    case 'fixServer':
      return p.server.fix(m.fix);
    case 'fixEnv':
      return p.environment.fix(m.fix);
    case 'showDiff':
      return p.checkpoints.showDiff(m.checkpointId, m.tool);
    case 'restore':
      return p.checkpoints.restore(m.checkpointId, m.what);
    case 'undoRestore':
      return p.checkpoints.restore(m.checkpointId, 'files', m.entryId);
    case 'condense':
      return p.conversations.condense();
    case 'resolvePaths':
      return p.editor.resolvePaths(m.paths);
    case 'openPath':
      return p.editor.openPath(m.path, m.line, m.column);
    case 'openLink':
      return p.editor.openLink(m.url);
    case 'copyCode':
      return p.editor.copy(m.code);
    case 'insertCode':
      return p.editor.insert(m.code);
    case 'newFile':
      return p.editor.newFile(m.code, m.language);
    case 'checkModel':
      return p.setup.check(m.model);
    case 'saveModel':
      return p.setup.save(m.model);
    case 'closeSetup':
      return p.setup.close();
    case 'setApiKey':
      return void vscode.commands.executeCommand('modus.ui.setApiKey');
    case 'copy':
      return p.actions.copy(m.text);
    case 'retry':
      return p.actions.retry();
    case 'edit':
      return p.actions.edit(m.messageId, m.text, m.files);
    case 'unqueue':
      return p.actions.unqueue(m.messageId);
  }
}
