// The Modus output channel: the log of the extension and of the language client.
import * as vscode from 'vscode';

/**
 * The output channel, except that writing to it never throws. It throws once the window is gone,
 * and the language client still logs the requests that fail then (the light bulb's, on a reload).
 */
export function createOutput(): vscode.OutputChannel {
  return neverThrows(vscode.window.createOutputChannel('Modus'));
}

function neverThrows(channel: vscode.OutputChannel): vscode.OutputChannel {
  return new Proxy(channel, {
    get(target, key) {
      const value = Reflect.get(target, key);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        try {
          return value.apply(target, args);
        } catch {
          return undefined;
        }
      };
    },
  });
}
