// A project file the server names (a rule file, a skill's SKILL.md) opened in an editor: a
// workspace-relative path in the (first) workspace folder, an absolute one (the user's own) as it is.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { errorMessage } from './protocol/client';
import { isAbsoluteRulePath } from './protocol/rules';

export async function openProjectFile(file: string): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  const parts = file.split(/[\\/]+/);
  let uri: vscode.Uri | undefined;
  if (isAbsoluteRulePath(file)) uri = vscode.Uri.file(path.normalize(file));
  else if (folder && !parts.includes('..')) uri = vscode.Uri.joinPath(folder.uri, ...parts);
  if (!uri) {
    void vscode.window.showErrorMessage(`Modus: cannot open ${file}: it is not in the workspace.`);
    return;
  }
  try {
    await vscode.window.showTextDocument(uri, { preview: true });
  } catch (err) {
    void vscode.window.showErrorMessage(`Modus: could not open ${file}: ${errorMessage(err)}`);
  }
}
