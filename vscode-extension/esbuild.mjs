// Bundles the extension (dist/extension.js) and the flame graph's page script (dist/flame.js)
// or, with --tests, the unit tests (out/test/).
import { build } from "esbuild";
import { readdirSync } from "node:fs";

const tests = process.argv.includes("--tests");
const common = { bundle: true, platform: "node", format: "cjs", target: "node20", sourcemap: true, logLevel: "warning" };

if (tests) {
  const entryPoints = readdirSync("test")
    .filter((name) => name.endsWith(".test.ts"))
    .map((name) => `test/${name}`);
  await build({ ...common, entryPoints, outdir: "out/test", external: ["vscode"] });
} else {
  await build({
    ...common,
    entryPoints: ["src/extension.ts"],
    outfile: "dist/extension.js",
    external: ["vscode"],
    minify: process.argv.includes("--minify"),
  });
  // The flame graph's page script, for the webview (a browser: no Node, no vscode module)
  await build({
    ...common,
    platform: "browser",
    format: "iife",
    target: "es2022",
    entryPoints: ["src/webview/flame.ts"],
    outfile: "dist/flame.js",
    minify: process.argv.includes("--minify"),
  });
}
