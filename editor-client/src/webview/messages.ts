// Messages between the extension and the chat webview.
import type { ChatImageResult, ImageData } from '../protocol/generated';
import type { Action, RestoreKind, SetupModel, ViewState } from '../protocol/view';

/** extension -> webview: the view, or what changed it since (`actions`: those of one frame, in order) */
export type ToWebview =
  | { type: 'snapshot'; view: ViewState }
  | { type: 'actions'; actions: Action[] }
  /** `modus.ui.focusComposer` */
  | { type: 'focusComposer' }
  /** a message taken back from the queue, to edit and send again */
  | { type: 'fillComposer'; text: string; images?: ChatImageResult[] }
  /** the answer to `resolvePaths`: each path asked about, as a file of the workspace (its path relative to the workspace folder) or null */
  | { type: 'paths'; paths: Record<string, string | null> }
  /** the answer to `fetchImage`: a stored image's type and base64 bytes, or why it could not be had */
  | { type: 'image'; id: string; mimeType?: string; data?: string; error?: string };

/** webview -> extension */
export type FromWebview =
  | { type: 'ready' }
  /** `images`: those pasted or dropped into the composer */
  | { type: 'send'; text: string; images?: ImageData[] }
  /** a stored image is shown (a message's thumbnail, a browser_action's screenshot): its bytes, please (modus/chat/image; answered with `image`) */
  | { type: 'fetchImage'; id: string }
  /** a click on a thumbnail: the image full size, in an editor tab */
  | { type: 'openImage'; id: string }
  /** `always`: "Always allow" (approve, and write the rule the approval offered) */
  | { type: 'approval'; id: string; decision: 'approve' | 'deny' | 'revise'; feedback?: string; always?: boolean }
  /** open the diff editor of an edit's approval (review before apply) */
  | { type: 'review'; id: string }
  /** the plan card's own buttons, when no approval is asked (after a reload): modus/plan/approve|reject */
  | { type: 'planDecision'; decision: 'approve' | 'reject'; feedback?: string }
  | { type: 'switchMode'; slug: string }
  | { type: 'cancel' }
  | { type: 'togglePhase' }
  | { type: 'newConversation' }
  /** asks for the conversation list (answered with a `conversations` action) */
  | { type: 'listConversations' }
  | { type: 'openConversation'; conversationId: string }
  /** asks for the agents and members the composer completes after `@` (answered with an `agents` action) */
  | { type: 'listAgents' }
  /** asks for the slash commands the composer completes after `/` (answered with a `commands` action) */
  | { type: 'listCommands' }
  /** asks for the rule files again, e.g. when the header's list opens (answered with a `rules` action) */
  | { type: 'listRules' }
  /** the header's rules list: open a rule file (workspace-relative, or absolute for a global one) in an editor */
  | { type: 'openRule'; path: string }
  /** the MCP section's Restart on a server (modus.mcp.restart; answered with an `mcp` action) */
  | { type: 'mcpRestart'; name: string }
  /** a tool card's Show diff: the files changed since the checkpoint taken before the call (`tool`), in VS Code's diff editor */
  | { type: 'showDiff'; checkpointId: string; tool: string }
  /** a tool card's Restore: back to the checkpoint taken before the call (answered with `restored` or `restoreFailed`) */
  | { type: 'restore'; checkpointId: string; what: RestoreKind }
  /** a restore note's Undo restore: the files of the checkpoint taken just before that restore (`entryId`) */
  | { type: 'undoRestore'; entryId: string; checkpointId: string }
  /** the context bar: condense the conversation now (modus/chat/condense) */
  | { type: 'condense' }
  /** paths seen in a reply or a tool card: which are files of the workspace? (answered with `paths`) */
  | { type: 'resolvePaths'; paths: string[] }
  /** a path's link: open the workspace file at the line and column (1-based), if it is one */
  | { type: 'openPath'; path: string; line?: number; column?: number }
  /** a web link (http or https): open it in the browser */
  | { type: 'openLink'; url: string }
  /** a code block's Copy, Insert at Cursor (in place of the active editor's selections) and New File (an untitled editor) */
  | { type: 'copyCode'; code: string }
  | { type: 'insertCode'; code: string }
  | { type: 'newFile'; code: string; language?: string }
  /** the buttons shown when the server could not start */
  | { type: 'fixServer'; fix: ServerFix }
  /** the buttons of Modus's own environment's card: Set up Modus, Retry (also setUp), Show Log, the download page… */
  | { type: 'fixEnv'; fix: EnvFix }
  /** the set-up card: try a model, save it as the default, close the card, Set API Key */
  | { type: 'checkModel'; model: SetupModel }
  | { type: 'saveModel'; model: SetupModel }
  | { type: 'closeSetup' }
  | { type: 'setApiKey' }
  /** a message's actions: Copy, Retry (the last turn), Edit & resend, take back a queued one */
  | { type: 'copy'; text: string }
  | { type: 'retry' }
  | { type: 'edit'; messageId: string; text: string; files: boolean }
  | { type: 'unqueue'; messageId: string };

export type EnvFix = 'setUp' | 'cancel' | 'showLog' | 'download' | 'pickInterpreter' | 'openSettings';

export type ServerFix = 'pickInterpreter' | 'openSettings' | 'showInstall' | 'restart' | 'showLog';
