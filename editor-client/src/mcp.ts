// The sidebar's MCP section: the MCP servers with their state, and a Restart on each.
import * as vscode from 'vscode';
import { errorMessage } from './protocol/client';
import type { ServerApi } from './server';
import type { ViewStore } from './store';

export class McpServers {
  constructor(
    private readonly server: ServerApi,
    private readonly store: ViewStore,
    private readonly output: vscode.OutputChannel,
  ) {}

  /** The MCP servers for the section; a server without MCP (MethodNotFound): none, quietly. */
  async refresh(): Promise<void> {
    const api = this.server.api;
    if (!api) return;
    try {
      this.store.dispatch({ type: 'mcp', servers: (await api.mcpList())?.servers ?? null });
    } catch (err) {
      this.output.appendLine(`modus: could not list the MCP servers: ${errorMessage(err)}`);
    }
  }

  /** The section's Restart: the server answers with the new list. */
  async restart(name: string): Promise<void> {
    const api = this.server.requireApi();
    if (!api) return;
    try {
      this.store.dispatch({ type: 'mcp', servers: (await api.mcpRestart(name)).servers });
    } catch (err) {
      void vscode.window.showErrorMessage(`Modus: could not restart the MCP server ${name}: ${errorMessage(err)}`);
      this.store.dispatch({ type: 'mcp', servers: this.store.view.mcp }); // the button comes back
    }
  }
}
