// The palette's Show Skills: the skills the server found (the workspace's `.modus/skills`,
// `.claude/skills`, and the user's), each with its description; the one picked opens its SKILL.md.
import * as vscode from 'vscode';
import { errorMessage } from './protocol/client';
import { openProjectFile } from './projectFile';
import type { ServerApi } from './server';

export async function showSkills(server: ServerApi): Promise<void> {
  const api = server.requireApi();
  if (!api) return;
  let skills;
  try {
    ({ skills } = await api.skills());
  } catch (err) {
    void vscode.window.showErrorMessage(`Modus: could not list the skills: ${errorMessage(err)}`);
    return;
  }
  if (skills.length === 0) {
    void vscode.window.showInformationMessage(
      'Modus: no skills. A skill is a folder with a SKILL.md (front matter: name, description) in .modus/skills/ or .claude/skills/.',
    );
    return;
  }
  const items = skills.map((s) => ({ label: s.name, description: s.source === 'global' ? 'yours' : undefined, detail: s.description, path: s.path }));
  const picked = await vscode.window.showQuickPick(items, { title: 'Modus: Skills', placeHolder: 'A skill to open (the model opens one with use_skill)', matchOnDetail: true });
  if (picked) await openProjectFile(picked.path);
}
