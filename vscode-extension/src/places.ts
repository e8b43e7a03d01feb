// Opening a line the server names: in a file, or in a notebook's cell (the notebook shown in
// its editor, the cell revealed, the cursor on the line in the cell's editor).
import * as vscode from "vscode";
import type { Place } from "./notebookModel";

export async function openPlace(place: Place, viewColumn?: vscode.ViewColumn): Promise<void> {
  const at = new vscode.Position(Math.max(place.line - 1, 0), Math.max(place.column - 1, 0));
  const selection = new vscode.Range(at, at);
  if (place.kind === "file") {
    await vscode.window.showTextDocument(vscode.Uri.parse(place.uri), { selection, viewColumn, preview: false });
    return;
  }
  const notebook = await vscode.workspace.openNotebookDocument(vscode.Uri.parse(place.notebook));
  if (place.cell < 1 || place.cell > notebook.cellCount) {
    await vscode.window.showNotebookDocument(notebook, { viewColumn, preview: false });
    return; // the notebook has fewer cells than when it was profiled
  }
  const range = new vscode.NotebookRange(place.cell - 1, place.cell);
  const editor = await vscode.window.showNotebookDocument(notebook, { viewColumn, preview: false, selections: [range] });
  editor.revealRange(range, vscode.NotebookEditorRevealType.InCenterIfOutsideViewport);
  const cell = notebook.cellAt(place.cell - 1).document;
  await vscode.window.showTextDocument(cell, { selection, viewColumn: editor.viewColumn, preview: false });
}
