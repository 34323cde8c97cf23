// The VS Code side of Modus: starts the server, renders what it says, sends back what the user
// does. Product logic lives in the server; the protocol layer (src/protocol) knows no `vscode`.
// This file puts the parts together: each lives in its own module.
import * as vscode from 'vscode';
import { Approvals } from './approvals';
import { CHECKPOINT_SCHEME, Checkpoints } from './checkpoints';
import { onWebviewMessage, Parts, registerCommands } from './commands';
import { Conversations } from './conversations';
import { ReadOnlyDocuments } from './documents';
import { EditorActions } from './editorActions';
import { Environment } from './environment';
import { Images } from './images';
import { McpServers } from './mcp';
import { notifyMention } from './mentionNotice';
import { MessageActions } from './messageActions';
import { Modes, PROMPT_SCHEME } from './modes';
import { Review } from './review';
import { createOutput } from './output';
import { Rules } from './rules';
import { Server } from './server';
import { ModelSetup } from './setup';
import { Sidebar } from './sidebar';
import { SpaceMembers } from './space';
import { StatusBar } from './status';
import { ViewStore } from './store';

/** the server of the activated extension, stopped on deactivation */
let current: Server | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  // The parts call one another through callbacks, first called once the server starts (last).
  const store = new ViewStore((action, view) => {
    sidebar.post(action);
    status.render(view);
    rules.viewChanged(view);
    space.viewChanged(view);
  });
  const status = new StatusBar(store.view);
  const output = createOutput();
  const documents = new ReadOnlyDocuments();
  const review = new Review();
  const approvals = new Approvals(store, review);
  const environment: Environment = new Environment(context, store, output, (): Promise<void> => server.start());
  const server = (current = new Server(context, store, output, {
    update: (update) => {
      store.dispatch({ type: 'update', update });
      // a plan update does not say which plan: its goal and scope come with the state
      if (update.kind === 'plan') void modes.refreshState();
      if (checkpoints.mayBring(update)) void checkpoints.refresh();
      if (rules.mayChange(update)) void rules.refresh();
      if (space.mayChange(update)) void space.refresh();
      if (update.kind === 'notification') void notifyMention(update, { window: vscode.window, members: () => store.view.members, open: openConversation });
    },
    approval: (request, token) => approvals.ask(request, token),
    started: async () => {
      checkpoints.serverStarted();
      await modes.refresh();
      await mcp.refresh();
      await conversations.show(store.view.conversationId);
    },
    stopping: () => approvals.denyAll(),
  }, environment));
  const modes = new Modes(server, store, output, documents);
  const mcp = new McpServers(server, store, output);
  const rules = new Rules(server, store, output);
  const space = new SpaceMembers(server, store, output);
  const checkpoints = new Checkpoints(server, store, output, documents, async (conversationId) => {
    await modes.refreshState(); // a new task
    await conversations.show(conversationId, true);
  });
  const conversations = new Conversations(server, store, output, checkpoints);
  const editor = new EditorActions((m) => sidebar.send(m));
  const setup = new ModelSetup(server, store);
  const sidebar = new Sidebar(context.extensionUri, () => store.view, (m) => onWebviewMessage(parts, m), (visible) => space.setVisible(visible));
  /** a mention's notification's Open: the sidebar shown, the conversation opened as from its list */
  const openConversation = async (conversationId: string): Promise<void> => {
    await vscode.commands.executeCommand('modus.chat.focus');
    await conversations.open(conversationId);
  };
  const actions = new MessageActions(server, store, sidebar);
  const images = new Images(server, (m) => sidebar.send(m), store);
  const parts: Parts = { server, environment, secrets: context.secrets, approvals, conversations, modes, checkpoints, mcp, rules, sidebar, setup, editor, actions, images };
  setup.refresh();
  context.subscriptions.push(
    status,
    output,
    space,
    documents,
    review,
    review.register(),
    vscode.window.registerWebviewViewProvider('modus.chat', sidebar, { webviewOptions: { retainContextWhenHidden: true } }),
    documents.register(PROMPT_SCHEME),
    documents.register(CHECKPOINT_SCHEME, (uri) => checkpoints.document(uri)),
    ...registerCommands(parts),
    vscode.workspace.onDidChangeConfiguration((e) => {
      server.onConfigurationChanged(e);
      if (e.affectsConfiguration('modus.models')) setup.refresh();
    }),
  );
  await server.start();
}

export async function deactivate(): Promise<void> {
  await current?.stop();
  current = undefined;
}
