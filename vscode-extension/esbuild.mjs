// Bundles the extension (dist/extension.js) or, with --tests, the unit tests (out/test/).
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
}
