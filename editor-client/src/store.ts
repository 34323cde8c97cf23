// The sidebar's view state on the extension side: each action is reduced here, then passed on
// (to the webview, which reduces it too, and to the status bar).
import { Action, initialView, reduce, ViewState } from './protocol/view';

export class ViewStore {
  private state: ViewState = initialView();

  /** `dispatched`: called after each action, with the view it made */
  constructor(private readonly dispatched: (action: Action, view: ViewState) => void) {}

  get view(): ViewState {
    return this.state;
  }

  dispatch(action: Action): void {
    this.state = reduce(this.state, action);
    this.dispatched(action, this.state);
  }
}
