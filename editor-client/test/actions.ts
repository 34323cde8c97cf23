// What the webview tests feed the chat: the extension's messages of actions, and the actions
// they are made of most often (the state of a conversation, an update of it).
import type { State, Update } from '../src/protocol/generated';
import { NO_USAGE } from '../src/protocol/usage';
import type { Action } from '../src/protocol/view';

/** The extension's message of these actions (those of one frame). */
export const toWebview = (actions: Action[]) => [{ type: 'actions', actions }];

/** An `update` action of the conversation. */
export const updateOf =
  (conversationId: string) =>
  (u: Record<string, unknown>): Action => ({ type: 'update', update: { conversationId, ...u } as Update });

/** A `state` action: the conversation in Code mode, ACT, its task on the scripted model; `more`
 * overrides (the plan, the phase, yolo, the context window, the task's id). */
export function stateAction(conversationId: string, more: Partial<State> & { taskId?: string } = {}): Action {
  const { taskId = 't', ...rest } = more;
  return {
    type: 'state',
    state: {
      mode: { slug: 'code', name: 'Code' },
      phase: 'act',
      conversationId,
      yolo: false,
      task: { id: taskId, mode: 'code', phase: 'act', model: { provider: 'scripted', model: null, reasoningEffort: null, thinkingBudgetTokens: null, maxTokens: null } },
      usage: NO_USAGE,
      plan: { state: 'normal', completedSteps: [] },
      ...rest,
    },
  };
}
