// The todo list: ✓ done (struck through), ▶ in progress (bold), ○ pending; folds like any details.
import type { ViewState } from '../protocol/view';
import { byId, el } from './dom';

export interface Todos {
  box: HTMLDetailsElement;
}

export function mount(): Todos {
  return { box: byId<HTMLDetailsElement>('todos') };
}

const TODO_MARK = { completed: '✓', in_progress: '▶', pending: '○' } as const;

export function render(panel: Todos, view: ViewState) {
  const { box } = panel;
  const todos = view.todos;
  box.hidden = todos.length === 0;
  const sig = JSON.stringify(todos);
  if (box.dataset.sig === sig) return;
  box.dataset.sig = sig;
  const done = todos.filter((t) => t.status === 'completed').length;
  box.querySelector('.todos-count')!.textContent = `${done} of ${todos.length} done`;
  box.querySelector('.todo-list')!.replaceChildren(
    ...todos.map((t) => {
      const item = el('li', `todo ${t.status}`, undefined, el('span', 'todo-mark', TODO_MARK[t.status] ?? '○'));
      item.appendChild(el('span', 'todo-text', t.content));
      if (t.priority === 'high') item.appendChild(el('span', 'todo-priority', '!')).title = 'high priority';
      item.appendChild(el('span', 'sr', ` (${t.status.replace('_', ' ')})`));
      return item;
    }),
  );
}
