// The Python interpreter that runs the server: which one (modus.pythonPath, else the Python
// extension's), and the fixes offered when it has no server (pick another, install it).
import * as vscode from 'vscode';

/** `modus.pythonPath` when it is set: then it runs the server, and nothing is installed. */
export function configuredPython(): string | undefined {
  return vscode.workspace.getConfiguration('modus').get<string>('pythonPath')?.trim() || undefined;
}

/** `modus.pythonPath`, else the Python extension's selected interpreter, else `python3`. */
export async function resolvePython(): Promise<string> {
  const configured = configuredPython();
  if (configured) return configured;
  try {
    const ext = vscode.extensions.getExtension('ms-python.python');
    if (ext) {
      const api = ext.isActive ? ext.exports : await ext.activate();
      const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
      const envPath = api?.environments?.getActiveEnvironmentPath?.(resource);
      if (envPath) {
        const env = await api.environments.resolveEnvironment?.(envPath);
        const exe = env?.executable?.uri?.fsPath ?? envPath.path;
        if (exe) return exe;
      }
      const exec = api?.settings?.getExecutionDetails?.(resource)?.execCommand;
      if (Array.isArray(exec) && exec[0]) return exec[0];
    }
  } catch {
    // fall through to python3
  }
  return 'python3';
}

/** The Python extension's picker when it is there, else a file dialog; either way, a restart. */
export async function pickInterpreter(restart: () => Promise<void>): Promise<void> {
  if (vscode.extensions.getExtension('ms-python.python')) {
    await vscode.commands.executeCommand('python.setInterpreter');
    if (!vscode.workspace.getConfiguration('modus').get<string>('pythonPath')) await restart();
    return;
  }
  const picked = await vscode.window.showOpenDialog({
    title: 'Python interpreter with the Modus server',
    openLabel: 'Use this interpreter',
    canSelectMany: false,
  });
  // the configuration change restarts the server
  if (picked?.[0]) await vscode.workspace.getConfiguration('modus').update('pythonPath', picked[0].fsPath, true);
}

/** How to install the server into the interpreter, with its command to copy. */
export async function showInstallCommand(): Promise<void> {
  const python = await resolvePython();
  const command = `${python} -m pip install /path/to/modus`;
  const copy = await vscode.window.showInformationMessage(
    'Install the Modus server into the interpreter Modus runs, from a checkout of Modus ' +
      '(or run `make` in the checkout and set modus.pythonPath to its .venv/bin/python).',
    { modal: true, detail: command },
    'Copy Command',
  );
  if (copy) await vscode.env.clipboard.writeText(command);
}
