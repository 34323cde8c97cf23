// What the sidebar asks of the server to show (the rules, the space's members, the checkpoints):
// one request at a time (one more when asked meanwhile), a failure logged, and a server without
// the method (an older Modus: MethodNotFound) not asked again until a new one starts.
import type * as vscode from 'vscode';
import { errorMessage, isMethodNotFound } from './protocol/client';
import { oneAtATime } from './serial';
import type { ServerApi } from './server';

type Api = NonNullable<ServerApi['api']>;

export class Asking {
  /** not asked (the server has no such method, or said there is nothing to ask) until a new server starts */
  off = false;
  /** asks now, unless off or no server runs */
  readonly refresh: () => Promise<void>;

  constructor(
    server: ServerApi,
    output: vscode.OutputChannel,
    /** what is asked for, as the log says it: `the rules` */
    what: string,
    ask: (api: Api) => Promise<void>,
    /** the server has no such method */
    missing: () => void = () => {},
  ) {
    this.refresh = oneAtATime(async () => {
      const api = server.api;
      if (!api || this.off) return;
      try {
        await ask(api);
      } catch (err) {
        if (isMethodNotFound(err)) {
          this.off = true;
          missing();
        }
        output.appendLine(`modus: could not list ${what}: ${errorMessage(err)}`);
      }
    });
  }
}
