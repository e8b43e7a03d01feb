// The Hotspots view (in the explorer): the last run's ranked lines across its files, from the
// server's bottleneck.hotspots, grouped by file; above them how the run stands (its summary,
// each pass's status, the verdict, what the changes compare with). It is asked again as the
// run goes (each progress message, at most every 300 ms) and when a command changes the
// results. A row opens its line; its tooltip is the line's hover.
import * as vscode from "vscode";
import { byFile, type FileGroup, groupLabel, type HotspotRow, type HotspotsAnswer, passesLine, rowLabel } from "./hotspotsModel";
import { placeOf } from "./notebookModel";

export const VIEW = "bottleneck-vscode.hotspots"; // not the server command's id: the client registers that one
export const OPEN_PLACE = "bottleneck-vscode.openPlace"; // a notebook cell's line (places.openPlace); not in the palette
const SOON_MS = 300;

type Node =
  | { kind: "info"; label: string; description: string; tooltip: string; icon: vscode.ThemeIcon }
  | { kind: "file"; group: FileGroup }
  | { kind: "row"; row: HotspotRow };

const ICONS: Record<HotspotRow["severity"], vscode.ThemeIcon> = {
  warning: new vscode.ThemeIcon("warning", new vscode.ThemeColor("list.warningForeground")),
  information: new vscode.ThemeIcon("info"),
  hint: new vscode.ThemeIcon("circle-small"),
};

export class HotspotsView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private answer: HotspotsAnswer = { script: null, rows: [] };
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly view: vscode.TreeView<Node>;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private loading: Promise<void> = Promise.resolve();

  /** `ask`: the server's bottleneck.hotspots answer, undefined while no server runs. */
  constructor(private readonly ask: () => Promise<HotspotsAnswer | undefined>) {
    this.view = vscode.window.createTreeView(VIEW, { treeDataProvider: this, showCollapseAll: true });
  }

  /** Ask the server again soon: calls within 300 ms make one request. */
  refresh(): void {
    if (this.timer !== undefined) {
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.loading = this.loading.then(() => this.load());
    }, SOON_MS);
  }

  private async load(): Promise<void> {
    let answer: HotspotsAnswer | undefined;
    try {
      answer = await this.ask();
    } catch {
      return; // the server went away meanwhile: the view keeps what it showed
    }
    if (answer === undefined) {
      return;
    }
    this.answer = answer;
    this.view.description = answer.name ?? "";
    this.view.message =
      answer.script === null ? undefined : answer.rows.length === 0 ? "No hot line in your files." : undefined;
    this.changed.fire(undefined);
  }

  private header(): Node[] {
    const a = this.answer;
    if (a.script === null) {
      return [];
    }
    const ok = a.status === "ok" || a.status === "cancelled";
    const out: Node[] = [
      {
        kind: "info",
        label: a.summary ?? a.name ?? "",
        description: "",
        tooltip: a.summary ?? "",
        icon: new vscode.ThemeIcon(a.running ? "sync~spin" : ok ? "pulse" : "error"),
      },
    ];
    if (a.passes !== undefined && a.passes.length > 0) {
      const detail = a.passes.filter((p) => p.detail).map((p) => `${p.name}: ${p.detail}`);
      out.push({
        kind: "info",
        label: "Passes",
        description: passesLine(a.passes),
        tooltip: [passesLine(a.passes), ...detail].join("\n"),
        icon: new vscode.ThemeIcon("list-ordered"),
      });
    }
    if (a.verdict) {
      out.push({ kind: "info", label: "Verdict", description: a.verdict, tooltip: a.verdict, icon: new vscode.ThemeIcon("dashboard") });
    }
    if (a.compared_with) {
      const what = a.compared_with === "baseline" ? "the pinned baseline" : "the last run";
      out.push({
        kind: "info",
        label: "Compared with",
        description: what,
        tooltip: `Each line's change is since ${what}.`,
        icon: new vscode.ThemeIcon("diff"),
      });
    }
    return out;
  }

  getChildren(node?: Node): Node[] {
    if (node === undefined) {
      return [...this.header(), ...byFile(this.answer.rows).map((group): Node => ({ kind: "file", group }))];
    }
    return node.kind === "file" ? node.group.rows.map((row): Node => ({ kind: "row", row })) : [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    switch (node.kind) {
      case "info": {
        const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
        item.description = node.description;
        item.tooltip = node.tooltip;
        item.iconPath = node.icon;
        return item;
      }
      case "file": {
        // the notebook's for a cell's lines (its icon, its path)
        const uri = vscode.Uri.parse(node.group.notebook ?? node.group.uri);
        // relative to the workspace folder, as the explorer names it (else as the server did)
        const name = groupLabel(node.group, (file) => vscode.workspace.asRelativePath(vscode.Uri.parse(file), false));
        const item = new vscode.TreeItem(name, vscode.TreeItemCollapsibleState.Expanded);
        item.resourceUri = uri;
        item.tooltip = uri.scheme === "file" ? uri.fsPath : node.group.uri;
        item.description = `${node.group.rows.length} line${node.group.rows.length === 1 ? "" : "s"}`;
        item.iconPath = vscode.ThemeIcon.File;
        item.contextValue = "bottleneck.file";
        return item;
      }
      case "row": {
        const { label, description } = rowLabel(node.row);
        const item = new vscode.TreeItem(label, vscode.TreeItemCollapsibleState.None);
        item.description = description;
        const hover = new vscode.MarkdownString(node.row.hover || node.row.lens);
        hover.supportHtml = false;
        item.tooltip = hover;
        item.iconPath = ICONS[node.row.severity];
        const at = new vscode.Position(node.row.line - 1, Math.max(node.row.column - 1, 0));
        const place = placeOf(node.row);
        item.command =
          place.kind === "cell"
            ? { command: OPEN_PLACE, title: "Open the line", arguments: [place] }
            : {
                command: "vscode.open",
                title: "Open the line",
                arguments: [vscode.Uri.parse(node.row.uri), { selection: new vscode.Range(at, at), preview: false }],
              };
        item.contextValue = "bottleneck.line";
        return item;
      }
    }
  }

  dispose(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
    }
    this.view.dispose();
    this.changed.dispose();
  }
}
